#!/usr/bin/env bash
# Stops the cluster cluster-start.sh started under DATA: SIGTERM to every silo it recorded (a silo leaving gracefully
# marks itself dead in the membership table), SIGKILL to those still running after the bound, then Redis if the start
# script started it. Silos' data folders and logs stay.
#
#   deploy/cluster-stop.sh [--data DIR] [--timeout S] [--keep-redis]
#
#   --data DIR     the cluster folder given to cluster-start.sh (default data/cluster)
#   --timeout S    how long silos get to stop after SIGTERM before SIGKILL (default 45)
#   --keep-redis   leave a Redis the start script started running
set -euo pipefail
# shellcheck source=cluster-lib.sh
source "$(dirname "$0")/cluster-lib.sh"

data="$default_data" timeout=45 keep_redis=0
while [ $# -gt 0 ]; do
  case "$1" in
    --data) data="${2:?--data needs a folder}"; shift 2 ;;
    --timeout) timeout="${2:?}"; shift 2 ;;
    --keep-redis) keep_redis=1; shift ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) die "unknown option '$1' (see --help)" ;;
  esac
done
[[ "$timeout" =~ ^[0-9]+$ ]] || die "--timeout must be a number of seconds"
[ -d "$data/run" ] || { echo "no cluster recorded under $data; nothing to stop"; exit 0; }
run_dir="$data/run"

names=()
for f in "$run_dir"/*.pid; do
  [ -e "$f" ] || continue
  n="$(basename "$f" .pid)"
  [ "$n" = redis ] || names+=("$n")
done
if [ ${#names[@]} -gt 0 ]; then
  stop_silos "$timeout" "${names[@]}"
fi
for n in "${names[@]}"; do
  pid="$(recorded_pid "$n")"
  if alive "$pid"; then echo "warning: $n (pid $pid) is still running" >&2; else rm -f "$run_dir/$n.pid"; fi
done

[ $keep_redis -eq 1 ] || stop_redis
echo "cluster under $data stopped"
