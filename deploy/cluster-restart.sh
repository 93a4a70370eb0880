#!/usr/bin/env bash
# Restarts one silo of the cluster cluster-start.sh started under DATA with the same command line: same role, ports,
# data folder (so it recovers its actors from its write-ahead log) and log file. A silo still running is stopped first
# (SIGTERM, SIGKILL after the bound). Waits until it is up again.
#
#   deploy/cluster-restart.sh master|worker [INDEX] [--data DIR] [--timeout S]
#
#   --timeout S   longest wait for the stop and for the start, each (default 120)
set -euo pipefail
# shellcheck source=cluster-lib.sh
source "$(dirname "$0")/cluster-lib.sh"

data="$default_data" timeout=120 positional=()
while [ $# -gt 0 ]; do
  case "$1" in
    --data) data="${2:?--data needs a folder}"; shift 2 ;;
    --timeout) timeout="${2:?}"; shift 2 ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    -*) die "unknown option '$1' (see --help)" ;;
    *) positional+=("$1"); shift ;;
  esac
done
[ ${#positional[@]} -ge 1 ] && [ ${#positional[@]} -le 2 ] || die "usage: cluster-restart.sh master|worker [INDEX] [--data DIR] [--timeout S]"
[[ "$timeout" =~ ^[1-9][0-9]*$ ]] || die "--timeout must be a positive number of seconds"
name="$(silo_name "${positional[@]}")"
load_cluster "$data"
[ -f "$run_dir/$name.cmd" ] || die "$name is not a silo of the cluster under $data (silos: $cluster_silos)"

stop_silos "$timeout" "$name"
gateway="$(silo_field "$name" gateway)" silo="$(silo_field "$name" silo)"
# The ports are freed when the old process is gone; another process holding them would make the restart fail.
for p in "$silo" "$gateway"; do
  port_open 127.0.0.1 "$p" && die "port $p of $name is in use by another process"
done
launch_silo "$name"
if ! wait_silo "$name" "$timeout"; then
  stop_silos 10 "$name"
  exit 1
fi
echo "$name restarted: pid $(recorded_pid "$name"), gateway localhost:$gateway, data $(silo_field "$name" data)"
