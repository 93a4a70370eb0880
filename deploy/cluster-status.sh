#!/usr/bin/env bash
# Shows each silo of the cluster cluster-start.sh started under DATA: role, pid, whether it is up (process alive and
# gateway accepting connections), ports, data folder and the last line of its log; then Redis. Exits 0 when every
# silo is up, 3 when one is not (so a script can wait on it). A silo is up (alive, gateway open), starting (alive,
# gateway not open yet), dead (killed or crashed) or stopped (by cluster-stop.sh).
#
#   deploy/cluster-status.sh [--data DIR]
set -euo pipefail
# shellcheck source=cluster-lib.sh
source "$(dirname "$0")/cluster-lib.sh"

data="$default_data"
while [ $# -gt 0 ]; do
  case "$1" in
    --data) data="${2:?--data needs a folder}"; shift 2 ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) die "unknown option '$1' (see --help)" ;;
  esac
done
load_cluster "$data"

all_up=1
printf '%-10s %-7s %-8s %-8s %-10s %-8s %s\n' SILO ROLE PID STATE SILO-PORT GATEWAY DATA
for name in $cluster_silos; do
  pid="$(recorded_pid "$name")" gateway="$(silo_field "$name" gateway)"
  if alive "$pid"; then
    if port_open 127.0.0.1 "$gateway"; then state=up; else state=starting; all_up=0; fi
  elif [ -n "$pid" ]; then
    state=dead all_up=0 # recorded as running, but gone: killed or crashed
  else
    state=stopped all_up=0 # stopped by cluster-stop.sh
  fi
  printf '%-10s %-7s %-8s %-8s %-10s %-8s %s\n' "$name" "$(silo_field "$name" role)" "${pid:--}" "$state" \
    "$(silo_field "$name" silo)" "$gateway" "$(silo_field "$name" data)"
  log="$(silo_field "$name" log)"
  # The last line that starts an entry: a stack trace line alone says little.
  last="$(grep -E "^[0-9]{4}-[0-9]{2}-[0-9]{2} " "$log" 2>/dev/null | tail -n 1 || true)"
  printf '           last log line: %s\n' "${last:0:200}"
done

parse_redis "$cluster_redis"
redis_pid="$(recorded_pid redis)"
if [[ "$(redis_ping)" == +PONG* ]]; then redis_state=up; else redis_state="not answering"; fi
if [ -n "$redis_pid" ]; then
  echo "redis      $cluster_redis: $redis_state (started by cluster-start.sh, pid $redis_pid)"
else
  echo "redis      $cluster_redis: $redis_state"
fi
echo "workers in the cluster: $cluster_workers; silos started here: $cluster_silos"
[ $all_up -eq 1 ] || exit 3
