#!/usr/bin/env bash
# The cluster kill test: a master and two workers as separate processes (deploy/cluster-start.sh, their own Redis
# port and data folder), a client (test/Snapper.ClusterKillCheck) moving money between accounts on both workers with
# local and global ACTs and PACTs, and, under that load, worker 1 SIGKILLed and restarted, then the master the same
# way. Meanwhile the client moves random accounts between the workers with live migrations (--migrations loops), so the
# kills also cut migrations short: at the source, at the target, and at the master whose helpers run them. Then the
# load stops and the client checks every operation against the accounts: each acknowledged one is on all its
# accounts, no aborted one is anywhere, each is all-or-nothing, money is conserved. The cluster is stopped however
# the test ends. Exits 0 when the check passed and the load went on after each restart, 1 otherwise.
#
#   test/cluster-kill-test.sh [--data DIR] [--redis-port P] [--silo-port P] [--gateway-port G] [--seed N]
#                             [--commits N] [--migrations N] [--no-kill] [--trx FILE]
#
#   --data DIR        test folder: DIR/cluster (the silos' data and logs), DIR/client (the client's files),
#                     DIR/at-crash/NAME (each killed silo's folder as the crash left it, copied before its restart),
#                     after a violation DIR/log-dumps/*.txt (the log records of those folders and of each silo's now)
#                     (default data/cluster-kill-test; the silos start with --fresh, the client's folder is emptied)
#   --redis-port P    Redis port for the membership table, started here if nothing answers (default 6392)
#   --silo-port P     the master's silo port, workers P+1, P+2 (default 11211)
#   --gateway-port G  the master's gateway, workers G+1, G+2 (default 30100)
#   --seed N          the load's random seed (default 1)
#   --commits N       commits to wait for before the first kill and after each restart, a twentieth of them of each
#                     kind (ACT/PACT x local/global) (default 1000)
#   --migrations N    migration loops beside the load, each moving one account at a time (default 2; 0 for none);
#                     before the first kill and after each restart the script also waits for --commits / 100 moves
#   --no-kill         the same phases without killing anything: a check of the test itself, must pass
#   --trx FILE        also write the result as a one-test .trx file (CI counts it)
#
# The phases are driven by the client's progress, not by timing: the script waits for N commits (of every kind) before
# it kills a silo, and for N more after each restart. Every wait is bounded.
set -uo pipefail
cd "$(dirname "$0")/.."
repo="$(pwd)"
# shellcheck source=trx.sh
source "$repo/test/trx.sh"

data="$repo/data/cluster-kill-test" redis_port=6392 silo_port=11211 gateway_port=30100 seed=1 commits=1000 migrations=2 kill=1 trx=""
while [ $# -gt 0 ]; do
  case "$1" in
    --data) data="${2:?--data needs a folder}"; shift 2 ;;
    --redis-port) redis_port="${2:?}"; shift 2 ;;
    --silo-port) silo_port="${2:?}"; shift 2 ;;
    --gateway-port) gateway_port="${2:?}"; shift 2 ;;
    --seed) seed="${2:?}"; shift 2 ;;
    --commits) commits="${2:?}"; shift 2 ;;
    --migrations) migrations="${2:?}"; shift 2 ;;
    --no-kill) kill=0; shift ;;
    --trx) trx="${2:?--trx needs a file}"; shift 2 ;;
    -h|--help) sed -n '2,/^set -uo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "error: unknown option '$1' (see --help)" >&2; exit 2 ;;
  esac
done
for n in "$redis_port" "$silo_port" "$gateway_port" "$seed" "$commits" "$migrations"; do
  [[ "$n" =~ ^[0-9]+$ ]] || { echo "error: '$n' is not a number" >&2; exit 2; }
done
mkdir -p "$data"
data="$(cd "$data" && pwd)"
cluster="$data/cluster" run="$data/client"
client_dll="$repo/test/Snapper.ClusterKillCheck/bin/Release/net10.0/Snapper.ClusterKillCheck.dll"
started=$SECONDS
failures=()
client_pid="" client_status="" child=""

note() { echo "== [$((SECONDS - started))s] $*"; }
fail() { echo "FAILURE: $*"; failures+=("$*"); }

# Runs a command in the background and waits for it: bash runs a trap only once the foreground command ended, while
# `wait` gives way to it at once, so a SIGTERM (CI's timeout) stops the test promptly even during a restart.
run_child() {
  "$@" &
  child=$!
  wait "$child"
  local s=$?
  child=""
  return $s
}

# The result as a .trx with one test, in the shape .ci/run counts (<Counters ... passed="N" failed="N" ...>).
write_trx() {
  [ -n "$trx" ] || return 0
  write_one_test_trx "$trx" cluster-kill-test "cluster-kill-test$([ $kill -eq 1 ] || echo ' --no-kill')" "$((SECONDS - started))" "${failures[@]}"
}

# Whatever ends the script (the end, a failure, Ctrl+C, CI's timeout): the client, if still running, and the cluster
# stop; then the verdict.
finish() {
  local status=$?
  trap - EXIT INT TERM
  # A script still running (a start or restart) is stopped first, so it does not start a silo after the stop below
  # (cluster-start.sh stops what it started when it gets SIGTERM).
  if [ -n "$child" ] && kill -0 "$child" 2>/dev/null; then
    kill -TERM "$child" 2>/dev/null
    for _ in $(seq 1 150); do kill -0 "$child" 2>/dev/null || break; sleep 0.2; done
  fi
  if [ -n "$client_pid" ] && kill -0 "$client_pid" 2>/dev/null; then
    # Its files are written at the end of its check, so there is nothing for it to save on the way out.
    kill -KILL "$client_pid" 2>/dev/null
    wait "$client_pid" 2>/dev/null
    [ -n "$client_status" ] || fail "the test was interrupted before the client finished"
  fi
  [ $status -eq 0 ] || [ ${#failures[@]} -gt 0 ] || fail "the script ended with status $status"
  if [ -f "$cluster/run/cluster.env" ]; then
    note "stopping the cluster"
    timeout 120 deploy/cluster-stop.sh --data "$cluster" --timeout 30 || fail "deploy/cluster-stop.sh failed"
  fi
  write_trx
  echo
  if [ ${#failures[@]} -eq 0 ]; then
    echo "cluster kill test$([ $kill -eq 1 ] || echo ' (--no-kill)'): PASSED in $((SECONDS - started)) s (client files: $run)"
    exit 0
  fi
  echo "cluster kill test$([ $kill -eq 1 ] || echo ' (--no-kill)'): FAILED in $((SECONDS - started)) s (client files: $run, silo logs: $cluster/*/silo.log):"
  printf '  %s\n' "${failures[@]}"
  exit 1
}
trap finish EXIT
trap 'exit 130' INT TERM

# A cluster of an earlier run in this folder (a script killed before its trap ran) is stopped first.
[ -f "$cluster/run/cluster.env" ] && timeout 120 deploy/cluster-stop.sh --data "$cluster" --timeout 10 >/dev/null 2>&1
rm -rf "$run" "$data/at-crash" "$data/log-dumps"
mkdir -p "$run"

note "building test/Snapper.ClusterKillCheck (Release)"
if ! run_child timeout 600 dotnet build -c Release test/Snapper.ClusterKillCheck -nologo -v quiet >"$run/build.log" 2>&1; then
  grep -E "error" "$run/build.log" | tail -n 20
  fail "the client did not build (log: $run/build.log)"
  exit 1
fi

note "starting the cluster: Redis localhost:$redis_port, master and 2 workers, data $cluster"
if ! run_child timeout 600 deploy/cluster-start.sh --workers 2 --redis "localhost:$redis_port" --data "$cluster" --fresh \
    --silo-port "$silo_port" --gateway-port "$gateway_port" --web-port off --timeout 180; then
  fail "deploy/cluster-start.sh failed"
  exit 1
fi
gateways="$(sed -n 's/^gateway=//p' "$cluster/run/worker-0.info"),$(sed -n 's/^gateway=//p' "$cluster/run/worker-1.info")"

note "starting the client (gateways $gateways, seed $seed)"
dotnet "$client_dll" --gateways "$gateways" --workers 2 --dir "$run" --seed "$seed" --migrations "$migrations" --max-load 900 --response-timeout 20 --read-timeout 90 \
  >"$run/client.out" 2>&1 &
client_pid=$!

set_phase() {
  echo "$1" >"$run/phase.tmp" && mv -f "$run/phase.tmp" "$run/phase"
  note "phase $1"
}

# A count from the client's progress line (0 before the first one).
field() { local v; v="$(sed -n "s/.* $1=\([0-9]*\).*/\1/p" "$run/progress" 2>/dev/null)"; echo "${v:-0}"; }

kinds=(act_local act_global pact_local pact_global)

# Waits, within BOUND seconds, until the client has COMMITS more commits than now, and each kind (ACT/PACT x
# local/global) a twentieth of that: a restarted silo must take part in every kind of transaction again. Fails (with
# WHY) when that does not happen in time, or when the client ended.
wait_commits() {
  local why="$1" bound="$2" deadline kind behind
  local -A base=()
  for kind in committed migrated "${kinds[@]}"; do base[$kind]="$(field "$kind")"; done
  deadline=$((SECONDS + bound))
  while :; do
    behind=""
    [ $(($(field committed) - ${base[committed]:-0})) -ge "$commits" ] || behind="commits"
    for kind in "${kinds[@]}"; do
      [ $(($(field "$kind") - ${base[$kind]:-0})) -ge $((commits / 20)) ] || behind+=" $kind"
    done
    [ "$migrations" -eq 0 ] || [ $(($(field migrated) - ${base[migrated]:-0})) -ge $((commits / 100)) ] || behind+=" migrated"
    if [ -z "$behind" ]; then
      note "$commits more commits $why: $(cut -d' ' -f2- "$run/progress")"
      return 0
    fi
    if ! kill -0 "$client_pid" 2>/dev/null; then
      fail "the client ended while waiting for commits $why"
      return 1
    fi
    if [ $SECONDS -ge $deadline ]; then
      fail "too little progress $why within ${bound}s (waited for $commits commits, $((commits / 20)) of each kind; short: $behind): $(cut -d' ' -f2- "$run/progress")"
      return 1
    fi
    sleep 0.5
  done
}

crash() {
  local role="$1" index="${2:-}" name="$1${2:+-$2}"
  set_phase "$name-down"
  run_child deploy/cluster-kill.sh "$role" $index --data "$cluster" || { fail "deploy/cluster-kill.sh $role $index failed"; return 1; }
  # The silo's folder as the crash left it (its log, checkpoints and placement copy): the restarted silo takes a
  # checkpoint and deletes the segments it covers, so a violation found later could not be traced to the records that
  # were on disk at the crash without this copy.
  rm -rf "$data/at-crash/$name" && mkdir -p "$data/at-crash" && cp -a "$cluster/$name" "$data/at-crash/$name" \
    || fail "could not copy $cluster/$name to $data/at-crash"
  # The load goes on against the dead silo for a while: calls to it fail or hang, the others go on.
  run_child sleep 5
  if ! run_child timeout 300 deploy/cluster-restart.sh "$role" $index --data "$cluster" --timeout 180; then
    fail "deploy/cluster-restart.sh $role $index failed"
    return 1
  fi
  set_phase "$name-back"
}

# After a restart, 180 s. The phase takes seconds now (the master aborts what a dead worker left unvoted as membership
# shows the death, workers ask a restarted master at once, ACT participants of a dead first actor give up, lost commit
# acknowledgements are sent again), but before those it waited out 15 to 30 s bounds, once past 90 s; the margin stays.
set_phase warmup
if wait_commits "before the first kill (the client opens its accounts first)" 300; then
  if [ $kill -eq 1 ]; then
    crash worker 1 && wait_commits "after worker 1 restarted" 180
    crash master && wait_commits "after the master restarted" 180
  else
    set_phase steady-1 && wait_commits "in steady-1" 90
    set_phase steady-2 && wait_commits "in steady-2" 90
  fi
fi

# After a violation: what every silo's data folder holds, and held at each crash, as the silo's `log` command prints it
# (read-only; the silos keep running), so that a violation can be traced to the records on disk.
dump_logs() {
  local folder name
  mkdir -p "$data/log-dumps"
  for folder in "$data"/at-crash/* "$cluster"/master "$cluster"/worker-*; do
    [ -d "$folder" ] || continue
    name="$(basename "$(dirname "$folder")")-$(basename "$folder")"
    timeout 300 dotnet "$repo/deploy/Snapper.Silo/bin/Release/net10.0/Snapper.Silo.dll" log "$folder" >"$data/log-dumps/$name.txt" 2>&1
  done
  note "log records of every silo, now and at each crash: $data/log-dumps/"
}

set_phase stopping
touch "$run/stop"
note "load stopping; the client drains, reads every account and checks"
# Drain (response timeout + 10 s), then two reads of at most 90 s each (or one, and 30 s of reading the accounts one by
# one), with room to spare.
deadline=$((SECONDS + 300))
while kill -0 "$client_pid" 2>/dev/null && [ $SECONDS -lt $deadline ]; do sleep 0.5; done
if kill -0 "$client_pid" 2>/dev/null; then
  fail "the client did not finish within 300 s of the stop"
else
  wait "$client_pid"
  client_status=$?
fi
echo "---- client output ($run/client.out):"
cat "$run/client.out"
echo "----"
case "$client_status" in
  0) ;;
  1) fail "the check found violations: $(grep -m1 '^FAIL' "$run/client.out") (listed above and in $run/violations.txt)"
     dump_logs ;;
  2) fail "the check could not be made, or only on the accounts that answered: $(grep -m1 -E '^INCOMPLETE|no check made|could not (open|connect)' "$run/client.out")" ;;
  "") ;;
  *) fail "the client exited with status $client_status" ;;
esac
deploy/cluster-status.sh --data "$cluster" || fail "a silo is not up after the test"
