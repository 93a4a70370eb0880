#!/usr/bin/env bash
# Starts a Snapper cluster on this machine: Redis for the membership table (when the address is local and nothing
# answers there), then a master and N workers of deploy/Snapper.Silo as background processes, each with its own ports,
# data folder, log file and pid recorded under DATA/run. Waits until each is up and prints their gateways.
#
#   deploy/cluster-start.sh [--workers N] [--home-workers K] [--redis host:port] [--data DIR] [--silos LIST] [--silo-port P]
#                           [--gateway-port G] [--web-port W|off] [--advertise IP] [--fresh] [--timeout S]
#                           [-- SILO-ARGS...]
#   deploy/cluster-start.sh --add --silos LIST [--data DIR] [--timeout S]
#
#   --workers N        workers in the cluster (default 2)
#   --home-workers K   actors are placed on workers 0 to K-1 only; the others start empty, to be started later with
#                      --add and given actors by deploy/cluster-rebalance.sh (scaling out); only those K are started
#                      unless --silos says otherwise (default: all workers are home workers)
#   --redis host:port  Redis holding the membership table (default localhost:6379); a local one is started if none answers
#   --data DIR         cluster folder: DIR/master, DIR/worker-K (data and silo.log), DIR/run (default data/cluster)
#   --silos LIST       which silos to start here, e.g. master,worker:0 (default: the master and every worker); on several
#                      hosts each host starts its share against the same --redis
#   --silo-port P      the master's silo port; worker K uses P+1+K (default 11111)
#   --gateway-port G   the master's gateway port; worker K uses G+1+K (default 30000)
#   --web-port W       the master's live view (Orleans' dashboard with Snapper's counters, Prometheus at /metrics);
#                      worker K uses W+1+K; off for none (default 8080)
#   --advertise IP     address other hosts reach these silos at (default: loopback with a local Redis, else this host's)
#   --fresh            delete the data folders (logs and write-ahead logs) of the master and every worker first, also
#                      of workers not started now
#   --timeout S        longest wait for each silo to come up (default 120)
#   -- SILO-ARGS       passed to every silo, e.g. -- --Snapper:Coordinators 4
#   --add              start more silos of the cluster already running from --data (scale out: --silos worker:2,worker:3),
#                      with the settings of its start (workers, Redis, ports, silo arguments); the others keep running
set -euo pipefail
# shellcheck source=cluster-lib.sh
source "$(dirname "$0")/cluster-lib.sh"

workers=2 home_workers="" add=0 redis=localhost:6379 data="$default_data" silos="" silo_port=11111 gateway_port=30000 web_port=8080 advertise="" fresh=0 timeout=120
extra=()
while [ $# -gt 0 ]; do
  case "$1" in
    --workers) workers="${2:?--workers needs a number}"; shift 2 ;;
    --home-workers) home_workers="${2:?--home-workers needs a number}"; shift 2 ;;
    --add) add=1; shift ;;
    --redis) redis="${2:?--redis needs host:port}"; shift 2 ;;
    --data) data="${2:?--data needs a folder}"; shift 2 ;;
    --silos) silos="${2:?--silos needs a list}"; shift 2 ;;
    --silo-port) silo_port="${2:?}"; shift 2 ;;
    --gateway-port) gateway_port="${2:?}"; shift 2 ;;
    --web-port) web_port="${2:?}"; shift 2 ;;
    --advertise) advertise="${2:?}"; shift 2 ;;
    --fresh) fresh=1; shift ;;
    --timeout) timeout="${2:?}"; shift 2 ;;
    --) shift; extra=("$@"); break ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) die "unknown option '$1' (see --help)" ;;
  esac
done
mkdir -p "$data"
data="$(cd "$data" && pwd)"
run_dir="$data/run"
if [ $add -eq 1 ]; then
  # The cluster's own settings: every silo of a cluster must be started alike.
  [ -n "$silos" ] || die "--add needs --silos, the silos to add (e.g. worker:2,worker:3)"
  [ $fresh -eq 0 ] || die "--add starts silos of a running cluster; --fresh would delete its data"
  [ -z "$home_workers" ] || die "--add takes the cluster's home workers from its start; leave --home-workers out"
  load_cluster "$data"
  [ -n "${cluster_silo_port:-}" ] || die "the cluster in $data was started by an older cluster-start.sh; restart it to use --add"
  workers="$cluster_workers" redis="$cluster_redis" silo_port="$cluster_silo_port" gateway_port="$cluster_gateway_port"
  web_port="$cluster_web_port" advertise="$cluster_advertise" extra=("${cluster_extra[@]}")
fi
if [ -n "$home_workers" ]; then
  [[ "$home_workers" =~ ^[1-9][0-9]*$ && "$home_workers" -le "$workers" ]] || die "--home-workers must be from 1 to --workers ($workers) (was '$home_workers')"
  extra=(--Snapper:HomeWorkers "$home_workers" "${extra[@]}")
  if [ -z "$silos" ]; then
    silos=master
    for ((k = 0; k < home_workers; k++)); do silos+=",worker:$k"; done
  fi
fi
[[ "$workers" =~ ^[1-9][0-9]*$ ]] || die "--workers must be a positive number (was '$workers')"
[[ "$silo_port" =~ ^[0-9]+$ && "$gateway_port" =~ ^[0-9]+$ ]] || die "--silo-port and --gateway-port must be numbers"
[[ "$web_port" =~ ^[0-9]+$ || "$web_port" = off ]] || die "--web-port must be a number or off (was '$web_port')"
[[ "$timeout" =~ ^[1-9][0-9]*$ ]] || die "--timeout must be a positive number of seconds"
command -v dotnet >/dev/null || die "dotnet is not on PATH (the .NET 10 SDK builds and runs the silos)"
parse_redis "$redis"

# The silos to start on this host, as names.
names=()
if [ -z "$silos" ]; then
  names=(master)
  for ((k = 0; k < workers; k++)); do names+=("worker-$k"); done
else
  IFS=',' read -r -a items <<<"$silos"
  for item in "${items[@]}"; do
    case "$item" in
      master) names+=(master) ;;
      worker:*) k="${item#worker:}"; [[ "$k" =~ ^[0-9]+$ && "$k" -lt "$workers" ]] || die "--silos: '$item' is not a worker from 0 to $((workers - 1))"; names+=("worker-$k") ;;
      *) die "--silos: '$item' is neither master nor worker:K" ;;
    esac
  done
fi

if [ $add -eq 1 ]; then
  for name in "${names[@]}"; do
    [[ " $cluster_silos " == *" $name "* ]] && alive "$(recorded_pid "$name")" && die "$name of the cluster in $data is already running"
  done
  [[ "$(redis_ping)" == +PONG* ]] || die "Redis at $redis does not answer; the cluster to add to is not running (deploy/cluster-status.sh --data $data)"
fi

# One cluster per folder: refuse while any silo recorded here still runs.
if [ $add -eq 0 ] && [ -d "$run_dir" ]; then
  for f in "$run_dir"/*.pid; do
    [ -e "$f" ] || continue
    n="$(basename "$f" .pid)"; [ "$n" = redis ] && continue
    pid="$(cat "$f")"
    alive "$pid" && die "$n (pid $pid) of the cluster in $data is still running; stop it first with deploy/cluster-stop.sh --data $data"
  done
fi
mkdir -p "$run_dir"
if [ $add -eq 0 ]; then
  # Records of an earlier cluster in this folder (perhaps with other workers) would let kill and restart reach silos
  # that are not part of this one.
  rm -f "$run_dir"/*.cmd "$run_dir"/*.info "$run_dir"/*.stats
  for f in "$run_dir"/*.pid; do [ -e "$f" ] && [ "$(basename "$f")" != redis.pid ] && rm -f "$f"; done
fi

# Everything started from here on is stopped again if the start does not finish.
started_redis=0 launched=()
finish() {
  local status=$?
  if [ $status -ne 0 ] && { [ ${#launched[@]} -gt 0 ] || [ $started_redis -eq 1 ]; }; then
    echo "cluster start failed; stopping what it started" >&2
    [ ${#launched[@]} -gt 0 ] && stop_silos 30 "${launched[@]}" || true
    [ $started_redis -eq 1 ] && stop_redis || true
  fi
}
trap finish EXIT
trap 'exit 130' INT TERM # so that an interrupted start also runs finish

# Redis: use the one at the address; start one when the address is this machine's and nothing answers.
answer="$(redis_ping)"
if [ $add -eq 1 ]; then
  note "adding ${names[*]} to the cluster in $data (Redis $redis)"
elif [[ "$answer" == +PONG* ]]; then
  note "Redis at $redis answers; using it"
elif [[ "$answer" == -* ]]; then
  # A Redis error reply (e.g. -NOAUTH): Redis is there; the silos' own connection reports what it refuses.
  echo "warning: Redis at $redis answered PING with '$answer'; pass its options in --redis (e.g. host:port,password=...)" >&2
elif [ -n "$answer" ] || port_open "$redis_host" "$redis_port"; then
  die "something at $redis accepts connections but does not answer PING as Redis does${answer:+ (it said '$answer')}"
elif redis_is_local; then
  if ! command -v redis-server >/dev/null; then
    note "redis-server is not installed; installing it with apt-get (log: $run_dir/apt.log)"
    sudo=""; [ "$(id -u)" -eq 0 ] || sudo="sudo"
    command -v apt-get >/dev/null || die "redis-server is not installed and there is no apt-get; install Redis yourself, or point --redis at a running one"
    if ! { $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y redis-server \
           || { $sudo apt-get update && $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y redis-server; }; } >"$run_dir/apt.log" 2>&1; then
      tail -n 5 "$run_dir/apt.log" >&2
      die "could not install redis-server with apt-get (full log: $run_dir/apt.log); install Redis yourself (apt-get install redis-server), or point --redis at a running one"
    fi
  fi
  note "starting redis-server on port $redis_port (log: $run_dir/redis.log)"
  # Membership only, so nothing is saved to disk; it lives as long as the cluster.
  setsid nohup redis-server --port "$redis_port" --bind "127.0.0.1 -::1" --save "" --appendonly no \
    --dir "$run_dir" --logfile "$run_dir/redis.log" --daemonize no </dev/null >/dev/null 2>&1 &
  echo $! >"$run_dir/redis.pid"
  started_redis=1
  deadline=$((SECONDS + 15))
  until [[ "$(redis_ping)" == +PONG* ]]; do
    alive "$(recorded_pid redis)" redis-server || { tail -n 5 "$run_dir/redis.log" >&2 2>/dev/null || true; die "redis-server exited at start (log: $run_dir/redis.log)"; }
    [ $SECONDS -lt $deadline ] || die "redis-server did not answer on port $redis_port within 15s (log: $run_dir/redis.log)"
    sleep 0.2
  done
else
  die "nothing answers at Redis $redis; start Redis there first (this script starts one only at a local address)"
fi

if [ $add -eq 1 ]; then
  # The silos running use this build; added ones run the same (a build now could change it under them, and takes
  # minutes on cores the running cluster keeps busy).
  [ -f "$silo_dll" ] || die "no $silo_dll; the cluster to add to was not started from this checkout"
else
  note "building deploy/Snapper.Silo (Release)"
  dotnet build -c Release "$silo_project" -nologo -v quiet >"$run_dir/build.log" 2>&1 \
    || { grep -E "error" "$run_dir/build.log" | tail -n 20 >&2; die "build failed (log: $run_dir/build.log)"; }
  [ -f "$silo_dll" ] || die "build produced no $silo_dll"
fi

# The record the other scripts read (and --add starts more silos by).
all_names=("${names[@]}")
if [ $add -eq 1 ]; then
  read -r -a all_names <<<"$cluster_silos"
  for name in "${names[@]}"; do [[ " $cluster_silos " == *" $name "* ]] || all_names+=("$name"); done
fi
{
  printf 'cluster_workers=%q\n' "$workers"
  printf 'cluster_redis=%q\n' "$redis"
  printf 'cluster_data=%q\n' "$data"
  printf 'cluster_silos=%q\n' "${all_names[*]}"
  printf 'cluster_silo_port=%q\n' "$silo_port"
  printf 'cluster_gateway_port=%q\n' "$gateway_port"
  printf 'cluster_web_port=%q\n' "$web_port"
  printf 'cluster_advertise=%q\n' "$advertise"
  if [ ${#extra[@]} -gt 0 ]; then printf 'cluster_extra=(%s)\n' "$(printf '%q ' "${extra[@]}")"; else echo 'cluster_extra=()'; fi
} >"$run_dir/cluster.env"

# A fresh cluster has no data of an earlier one in this folder, also for workers started later with --add: a worker
# that recovered another cluster's log would replay that cluster's batches against this one's master.
if [ $fresh -eq 1 ]; then
  rm -rf "${data:?}/master"
  for ((k = 0; k < workers; k++)); do rm -rf "${data:?}/worker-$k"; done
fi
for name in "${names[@]}"; do
  if [ "$name" = master ]; then role=master index=0 slot=0; else role=worker index="${name#worker-}" slot=$((1 + index)); fi
  sp=$((silo_port + slot)) gp=$((gateway_port + slot)) wp=off
  [ "$web_port" = off ] || wp=$((web_port + slot))
  for p in "$sp" "$gp" "$wp"; do
    [ "$p" = off ] && continue
    port_open 127.0.0.1 "$p" && die "port $p (for $name) is already in use on this machine; choose other ports with --silo-port/--gateway-port/--web-port"
  done
  mkdir -p "$data/$name"
  argv=(dotnet "$silo_dll" --role "$role" --workers "$workers" --redis "$redis" --silo-port "$sp" --gateway-port "$gp" --web-port "$wp"
        --data "$data/$name" --log "$data/$name/silo.log" --stats "$run_dir/$name.stats")
  [ "$role" = worker ] && argv+=(--worker-index "$index")
  [ -n "$advertise" ] && argv+=(--advertise "$advertise")
  argv+=("${extra[@]}")
  printf '%q ' "${argv[@]}" >"$run_dir/$name.cmd"
  printf 'role=%s\nindex=%s\nsilo=%s\ngateway=%s\nweb=%s\ndata=%s\nlog=%s\n' "$role" "$index" "$sp" "$gp" "$wp" "$data/$name" "$data/$name/silo.log" >"$run_dir/$name.info"
done

# The master first: it holds the cluster-wide grains the workers' first transactions reach for; then the workers together.
if [[ " ${names[*]} " == *" master "* ]]; then
  note "starting master"
  launch_silo master; launched+=(master)
  wait_silo master "$timeout"
fi
workers_here=()
for name in "${names[@]}"; do [ "$name" = master ] || workers_here+=("$name"); done
if [ ${#workers_here[@]} -gt 0 ]; then
  note "starting ${workers_here[*]}"
  for name in "${workers_here[@]}"; do launch_silo "$name"; launched+=("$name"); done
  for name in "${workers_here[@]}"; do wait_silo "$name" "$timeout"; done
fi

trap - EXIT INT TERM
echo
printf '%-10s %-8s %-10s %-16s %-23s %s\n' SILO PID SILO-PORT GATEWAY DASHBOARD DATA
for name in "${names[@]}"; do
  web=$(silo_field "$name" web); [ "$web" = off ] || web="http://localhost:$web/"
  printf '%-10s %-8s %-10s %-16s %-23s %s\n' "$name" "$(recorded_pid "$name")" "$(silo_field "$name" silo)" "localhost:$(silo_field "$name" gateway)" "$web" "$(silo_field "$name" data)"
done
echo
first_worker=""
for name in "${names[@]}"; do [ "$name" = master ] || { first_worker="$name"; break; }; done
if [ -n "$first_worker" ]; then
  echo "Clients connect to a worker's gateway, e.g.:"
  echo "  dotnet run -c Release --project benchmarks/Snapper.Runner -- --cluster $(silo_field "$first_worker" gateway) --quick --modes NT,ACT"
fi
data_flag=""; [ "$data" = "$default_data" ] || data_flag=" --data $data"
echo "Status: deploy/cluster-status.sh$data_flag   Stop: deploy/cluster-stop.sh$data_flag"
