#!/usr/bin/env bash
# The scale-out experiment in one command (thesis §4.4.6, Fig. 4.17): for each workload mix, a fresh cluster declared
# with 4 workers of which 2 are home workers (a master and workers 0 and 1 start; every actor lives on them), the runner
# loads it with SmallBank MultiTransfers (txnsize 4, uniform) for --steady seconds, starts workers 2 and 3 with
# deploy/cluster-start.sh --add, spreads the actors over the four with live migrations (ActorMigration.RebalanceAsync,
# half of each old worker's actors) while the load runs, and runs --steady seconds more. Every silo and the runner are
# processes on this machine's cores.
#
#   benchmarks/scale-out.sh [--quick] [--out DIR] [--data DIR] [--steady S] [--actors N] [--mixes LIST]
#                           [--redis-port P] [--silo-port P] [--gateway-port G]
#
#   --quick          a check of the script in a few minutes (1,000 accounts, 8 s phases), not for results
#   --out DIR        results: DIR/MIX/ per mix (scaleout.csv, phases.csv, scaleout.md, scaleout-throughput.png), and
#                    DIR/README-table.md with every mix's phases (default benchmarks/results/scale-out)
#   --data DIR       the cluster folder, wiped by every cluster start (default data/scale-out)
#   --steady S       seconds of load before adding workers and after the rebalance (default 30, as the thesis)
#   --actors N       SmallBank accounts (default 10000: 5,000 per old worker before, 2,500 per worker after)
#   --mixes LIST     from pact (PACT only), hybrid (50 % PACTs, 50 % ACTs on the same accounts), act (ACT only);
#                    default pact,hybrid,act, the thesis's 100 %, 50 % and 0 % PACT
#   --redis-port P, --silo-port P, --gateway-port G   the cluster's own ports (defaults 6394, 12411, 31400)
#
# Exit code 1 if a mix failed (a failed consistency check, a silo that did not start, a migration that failed).
set -euo pipefail
repo_root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$repo_root"

command_line="benchmarks/scale-out.sh $*"
quick=0 out=benchmarks/results/scale-out data=data/scale-out steady=30 actors=10000 mixes=pact,hybrid,act
redis_port=6394 silo_port=12411 gateway_port=31400
while [ $# -gt 0 ]; do
  case "$1" in
    --quick) quick=1; shift ;;
    --out) out="${2:?--out needs a folder}"; shift 2 ;;
    --data) data="${2:?--data needs a folder}"; shift 2 ;;
    --steady) steady="${2:?--steady needs seconds}"; shift 2 ;;
    --actors) actors="${2:?--actors needs a number}"; shift 2 ;;
    --mixes) mixes="${2:?--mixes needs a list}"; shift 2 ;;
    --redis-port) redis_port="${2:?}"; shift 2 ;;
    --silo-port) silo_port="${2:?}"; shift 2 ;;
    --gateway-port) gateway_port="${2:?}"; shift 2 ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "error: unknown option '$1' (see --help)" >&2; exit 2 ;;
  esac
done
if [ $quick -eq 1 ]; then steady=8 actors=1000; fi

note() { echo "== $(date +%T) $*"; }

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

note "building the runner"
dotnet build -c Release benchmarks/Snapper.Runner -nologo -v quiet >/dev/null
mkdir -p "$out"
{
  echo "commit: $(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
  echo "started: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "load at start: $(cut -d' ' -f1-3 /proc/loadavg)"
  echo "command: $command_line"
} >"$out/run-info.txt"

failed=()
IFS=',' read -r -a mix_list <<<"$mixes"
for mix in "${mix_list[@]}"; do
  case "$mix" in
    pact) modes=(--modes PACT --pipeline PACT=256) ;;
    hybrid) modes=(--modes Hybrid --pact-percent 50 --pipeline Hybrid=128) ;;
    act) modes=(--modes ACT --pipeline ACT=64) ;;
    *) echo "error: unknown mix '$mix' (pact, hybrid, act)" >&2; exit 2 ;;
  esac
  stop_cluster
  note "$mix: a fresh cluster of 4 workers, 2 of them started"
  cluster_up=1
  deploy/cluster-start.sh --workers 4 --home-workers 2 --redis "localhost:$redis_port" --data "$data" --fresh \
    --silo-port "$silo_port" --gateway-port "$gateway_port" --web-port off
  note "$mix: the scenario"
  if ! dotnet run -c Release --project benchmarks/Snapper.Runner --no-build -- \
      --cluster-data "$data" --scale-out "$steady" --actors "$actors" --txnsize 4 "${modes[@]}" --out "$out/$mix" 2>&1 | tee "$out/$mix.log"; then
    failed+=("$mix")
  fi
  # The operator's view of the result: the workers up and the actors each hosts now.
  deploy/cluster-rebalance.sh --data "$data" --dry-run 2>&1 | tee -a "$out/$mix.log" || failed+=("$mix (cluster-rebalance.sh --dry-run)")
done
stop_cluster

# Every mix's phase table in one file, for the results README.
for mix in "${mix_list[@]}"; do
  [ -f "$out/$mix/scaleout.md" ] || continue
  echo "## $mix"
  echo
  tail -n +3 "$out/$mix/scaleout.md"
  echo
done >"$out/README-table.md"
echo "finished: $(date -u +%Y-%m-%dT%H:%M:%SZ)" >>"$out/run-info.txt"

if [ ${#failed[@]} -gt 0 ]; then
  echo "FAILED: ${failed[*]} (logs in $out)" >&2
  exit 1
fi
note "done: $out"
