#!/usr/bin/env bash
# Spreads the transactional actors of a running cluster evenly over its workers that are up, moving them live
# (Snapper's migration: transactions keep running, a client calling a moving actor waits and resubmits by itself).
# After workers were added (deploy/cluster-start.sh --add), this gives them their share of the actors.
#
#   deploy/cluster-rebalance.sh [--data DIR] [--parallel N] [--workers LIST] [--dry-run]
#
#   --data DIR       the cluster folder (default data/cluster)
#   --parallel N     migrations under way at once (default 8, one per migration helper)
#   --workers LIST   spread over these workers only, e.g. 0,1,2,3 (default: every worker that is up)
#   --dry-run        show the workers up and the actors each hosts; move nothing
#
# Connects through the gateways of the cluster's workers recorded in the folder (any that answers). Prints the
# planned moves, progress, and the migration time per actor (p50, p99); exit code 1 if a move failed (the actor
# stays where it was, with every committed transaction), 2 if the cluster could not be reached.
set -euo pipefail
# shellcheck source=cluster-lib.sh
source "$(dirname "$0")/cluster-lib.sh"

data="$default_data" parallel=8 targets="" dry=0
while [ $# -gt 0 ]; do
  case "$1" in
    --data) data="${2:?--data needs a folder}"; shift 2 ;;
    --parallel) parallel="${2:?--parallel needs a number}"; shift 2 ;;
    --workers) targets="${2:?--workers needs a list}"; shift 2 ;;
    --dry-run) dry=1; shift ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) die "unknown option '$1' (see --help)" ;;
  esac
done
[[ "$parallel" =~ ^[1-9][0-9]*$ ]] || die "--parallel must be a positive number (was '$parallel')"
[ -d "$data" ] || die "no cluster folder $data"
load_cluster "$(cd "$data" && pwd)"

gateways=()
for name in $cluster_silos; do
  [ "$name" = master ] && continue
  alive "$(recorded_pid "$name")" && gateways+=("$(silo_field "$name" gateway)")
done
[ ${#gateways[@]} -gt 0 ] || die "no worker of the cluster in $data is running (deploy/cluster-status.sh --data $data)"
list="$(IFS=,; echo "${gateways[*]}")"

admin_project="$repo_root/deploy/Snapper.Admin"
admin_dll="$admin_project/bin/Release/net10.0/Snapper.Admin.dll"
mkdir -p "$run_dir"
dotnet build -c Release "$admin_project" -nologo -v quiet >"$run_dir/admin-build.log" 2>&1 \
  || { grep -E "error" "$run_dir/admin-build.log" | tail -n 20 >&2; die "build of deploy/Snapper.Admin failed (log: $run_dir/admin-build.log)"; }

dotnet "$admin_dll" workers --gateways "$list"
[ $dry -eq 1 ] && exit 0
args=(rebalance --gateways "$list" --parallel "$parallel")
[ -n "$targets" ] && args+=(--workers "$targets")
exec dotnet "$admin_dll" "${args[@]}"
