#!/usr/bin/env bash
# Crashes one silo of the cluster cluster-start.sh started under DATA: SIGKILL, no graceful shutdown (its membership
# entry stays until the other silos declare it dead; its write-ahead log is as a crash leaves it). Waits until the
# process is gone. Bring it back with deploy/cluster-restart.sh.
#
#   deploy/cluster-kill.sh master|worker [INDEX] [--data DIR]
set -euo pipefail
# shellcheck source=cluster-lib.sh
source "$(dirname "$0")/cluster-lib.sh"

data="$default_data" positional=()
while [ $# -gt 0 ]; do
  case "$1" in
    --data) data="${2:?--data needs a folder}"; shift 2 ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    -*) die "unknown option '$1' (see --help)" ;;
    *) positional+=("$1"); shift ;;
  esac
done
[ ${#positional[@]} -ge 1 ] && [ ${#positional[@]} -le 2 ] || die "usage: cluster-kill.sh master|worker [INDEX] [--data DIR]"
name="$(silo_name "${positional[@]}")"
load_cluster "$data"
[ -f "$run_dir/$name.cmd" ] || die "$name is not a silo of the cluster under $data (silos: $cluster_silos)"
pid="$(recorded_pid "$name")"
alive "$pid" || die "$name is not running (recorded pid: ${pid:-none})"
kill -KILL "$pid"
for _ in $(seq 1 50); do alive "$pid" || break; sleep 0.2; done
alive "$pid" && die "$name (pid $pid) is still there 10s after SIGKILL"
echo "$name (pid $pid) killed"
