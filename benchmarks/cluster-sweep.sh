#!/usr/bin/env bash
# The distributed SmallBank experiments in one command, on a cluster of one master and two workers on this machine
# (thesis §4.4): every silo and the runner are separate processes sharing this machine's cores.
#
#   benchmarks/cluster-sweep.sh [--quick] [--out DIR] [--data DIR] [--redis-port P] [--silo-port P] [--gateway-port G]
#                               [--interval HH:MM:SS.FFF] [--actors N] [--only STEPS]
#
#   1. cluster-dist/          NT, ACT and PACT at dist% 0,25,50,75,100 (txnsize 4, distlevel 2, uniform within each
#                             worker) on a cluster with both global-PACT optimizations on (commit shortcut, tuned
#                             batching with --interval); cpu.csv has each silo's CPU per cell; sweep-info.txt the
#                             commit, the machine's load and the wall time of the whole sweep (in the first step's
#                             folder when --only leaves this step out).
#   2. cluster-dist/skewed/   PACT against Orleans Transactions at dist% 50 with a hot set of 1 % per worker, same cluster.
#   3. cluster-optimizations/ PACT at dist% 100 and 0 under the four combinations of the commit shortcut
#                             (Snapper:GlobalCommitShortcut) and tuned batching (Snapper:GlobalBatchInterval = --interval
#                             or 0), each on a freshly started cluster (thesis Fig. 4.11); one CSV, rows tagged config=...
#   4. cluster-hybrid/        PACT, Hybrid (90 % PACTs) and ACT at dist% 0 and 50 under Zipf 0.9, under each hybrid rule
#                             (Snapper:HybridScheduling SerializabilityCheck, the default, and CommittedBatchesOnly), each
#                             on a freshly started cluster (thesis §4.2.4, Fig. 4.15); one CSV, rows tagged rule=...
#
#   --quick            a check of the whole script in a few minutes (1,000 accounts, 3 epochs of 2 s), not for results
#   --out DIR          where the result folders go (default benchmarks/results)
#   --data DIR         the cluster folder, data/cluster-sweep by default (wiped by every cluster start)
#   --redis-port P     the cluster's own Redis on localhost, started and stopped with it (default 6391)
#   --silo-port P      the master's silo port, workers the next ones (default 12111, off the scripts' defaults, so
#                      another cluster on this machine is not in the way)
#   --gateway-port G   the master's gateway port, workers the next ones (default 31000)
#   --interval T       tuned batching's GlobalBatchInterval (default 00:00:00.002: 2 ms; 2, 5 and 10 ms did alike at dist% 100 with
#                      256 PACTs in flight, 2 ms best with 64)
#   --actors N         SmallBank accounts (default 10000)
#   --only STEPS       run only these steps, comma-separated from dist, skew, opt, hybrid (default: all)
#
# Every measured cell: 4 epochs of 5 s, the first a warm-up (shorter than the runner's default 6 x 10 s, so the whole
# sweep stays near 20 minutes). The cluster is stopped at the end, and also when a step fails or the script is
# interrupted. Exit code 1 if any runner step failed (a failed consistency check, or no commit in a cell).
set -euo pipefail

repo_root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$repo_root"

command_line="benchmarks/cluster-sweep.sh $*"
quick=0 out=benchmarks/results data=data/cluster-sweep redis_port=6391 silo_port=12111 gateway_port=31000
interval=00:00:00.002 actors=10000 only=dist,skew,opt,hybrid
while [ $# -gt 0 ]; do
  case "$1" in
    --quick) quick=1; shift ;;
    --out) out="${2:?--out needs a folder}"; shift 2 ;;
    --data) data="${2:?--data needs a folder}"; shift 2 ;;
    --redis-port) redis_port="${2:?}"; shift 2 ;;
    --silo-port) silo_port="${2:?}"; shift 2 ;;
    --gateway-port) gateway_port="${2:?}"; shift 2 ;;
    --interval) interval="${2:?}"; shift 2 ;;
    --actors) actors="${2:?}"; shift 2 ;;
    --only) only="${2:?--only needs steps}"; shift 2 ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "error: unknown option '$1' (see --help)" >&2; exit 2 ;;
  esac
done

dist_out="$out/cluster-dist"
skew_out="$out/cluster-dist/skewed"
opt_out="$out/cluster-optimizations"
hybrid_out="$out/cluster-hybrid"
wants() { [[ ",$only," == *",$1,"* ]]; }
# The commit, load and wall time go next to the first step's results.
for step in dist:"$dist_out" skew:"$skew_out" opt:"$opt_out" hybrid:"$hybrid_out"; do
  if wants "${step%%:*}"; then info_dir="${step#*:}"; break; fi
done
info="${info_dir:?--only names no known step (dist, skew, opt, hybrid)}/sweep-info.txt"
if [ $quick -eq 1 ]; then
  timing=(--quick)
else
  timing=(--actors "$actors" --epochs 4 --warmup 1 --epoch-seconds 5)
fi
mkdir -p "$info_dir"

note() { echo "== $(date +%T) $*"; }

# The cluster is stopped whatever happens: a sweep cut short must not leave silos eating the shared cores.
cluster_up=0
stop_cluster() {
  if [ $cluster_up -eq 1 ]; then
    note "stopping the cluster"
    deploy/cluster-stop.sh --data "$data" --timeout 30 || true
    cluster_up=0
  fi
}
trap stop_cluster EXIT
trap 'exit 130' INT TERM

# start_cluster SHORTCUT INTERVAL [SNAPPER-FLAGS...]: a fresh cluster (new Redis, empty data folders) with those
# global-PACT settings and any further Snapper settings.
start_cluster() {
  stop_cluster
  note "starting a cluster: GlobalCommitShortcut=$1 GlobalBatchInterval=$2 ${*:3}"
  cluster_up=1
  deploy/cluster-start.sh --workers 2 --redis "localhost:$redis_port" --data "$data" --fresh \
    --silo-port "$silo_port" --gateway-port "$gateway_port" \
    -- --Snapper:GlobalCommitShortcut "$1" --Snapper:GlobalBatchInterval "$2" "${@:3}"
}

# merge_tagged DIR NAME...: one results.csv and cpu.csv in DIR from its per-run folders DIR/NAME, and their charts.
merge_tagged() {
  local dir="$1"
  shift
  for file in results.csv cpu.csv; do
    local first=1
    for name in "$@"; do
      local part="$dir/$name/$file"
      [ -f "$part" ] || continue
      if [ $first -eq 1 ]; then cat "$part"; first=0; else tail -n +2 "$part"; fi
    done >"$dir/$file"
  done
  dotnet run -c Release --project benchmarks/Snapper.Runner --no-build -- --replot "$dir/results.csv"
}

failed=()
# run_step NAME LOG RUNNER-ARGS...: one runner invocation against the running cluster, its console kept in LOG. Each cell
# runs once (the runner repeats cells 3 times by default): the sweep has dozens of cells and its ratios are read per step.
run_step() {
  local name="$1" log="$2"
  shift 2
  note "$name"
  if ! dotnet run -c Release --project benchmarks/Snapper.Runner --no-build -- \
      --cluster-data "$data" --txnsize 4 --txn-dist-level 2 --repeat 1 "${timing[@]}" "$@" 2>&1 | tee "$log"; then
    failed+=("$name")
  fi
}

started=$SECONDS
note "building the runner"
dotnet build -c Release benchmarks/Snapper.Runner -nologo -v quiet >/dev/null
{
  echo "commit: $(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
  echo "started: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "load at start: $(cut -d' ' -f1-3 /proc/loadavg)"
  echo "command: $command_line"
} >"$info"

# 1 and 2: one cluster with both optimizations on.
if wants dist || wants skew; then
  start_cluster true "$interval"
  if wants dist; then
    run_step "dist% sweep: NT, ACT, PACT" "$dist_out/runner.log" \
      --modes NT,ACT,PACT --dist-percent 0,25,50,75,100 \
      --pipeline NT=64 --pipeline ACT=16 --pipeline PACT=64,256 --out "$dist_out"
  fi
  if wants skew; then
    mkdir -p "$skew_out"
    run_step "dist% 50 with a 1 % hot set per worker: PACT, Orleans Transactions" "$skew_out/runner.log" \
      --modes PACT,OrleansTxn --dist-percent 50 --hot 0.01 \
      --pipeline PACT=64,256 --pipeline OrleansTxn=1,4,16 --out "$skew_out"
  fi
  stop_cluster
fi

# 3: the four combinations of the optimizations, each on a fresh cluster, tagged so one CSV holds them apart.
if wants opt; then
  mkdir -p "$opt_out"
  configs=("shortcut+tuned true $interval" "shortcut true 00:00:00" "tuned false $interval" "none false 00:00:00")
  names=()
  for config in "${configs[@]}"; do
    read -r name shortcut batch_interval <<<"$config"
    names+=("$name")
    start_cluster "$shortcut" "$batch_interval"
    run_step "PACT dist% 100 and 0, config $name" "$opt_out/runner-$name.log" \
      --modes PACT --dist-percent 100,0 --pipeline PACT=64,256 --tag "config=$name" --out "$opt_out/$name"
    stop_cluster
  done
  merge_tagged "$opt_out" "${names[@]}"
fi

# 4: the two hybrid rules, each on a fresh cluster with both optimizations on.
if wants hybrid; then
  mkdir -p "$hybrid_out"
  rules=(SerializabilityCheck CommittedBatchesOnly)
  for rule in "${rules[@]}"; do
    start_cluster true "$interval" --Snapper:HybridScheduling "$rule"
    run_step "PACT, Hybrid, ACT at dist% 0 and 50, Zipf 0.9, rule $rule" "$hybrid_out/runner-$rule.log" \
      --modes PACT,Hybrid,ACT --dist-percent 0,50 --zipf 0.9 \
      --pipeline PACT=64 --pipeline Hybrid=64 --pipeline ACT=16 --tag "rule=$rule" --out "$hybrid_out/$rule"
    stop_cluster
  done
  merge_tagged "$hybrid_out" "${rules[@]}"
fi

{
  echo "finished: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "load at end: $(cut -d' ' -f1-3 /proc/loadavg)"
  echo "wall time: $(((SECONDS - started) / 60)) min $(((SECONDS - started) % 60)) s"
  echo "failed steps: ${failed[*]:-none}"
} >>"$info"
cat "$info"
[ ${#failed[@]} -eq 0 ]
