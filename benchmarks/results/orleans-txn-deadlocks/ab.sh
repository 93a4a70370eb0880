#!/bin/bash
# An Orleans Transactions baseline, parallel against ascending lock order: one runner invocation per order, interleaved,
# ROUNDS rounds (default 2), logging $1 (off or fsync), pipelines $2; any further arguments go to the runner (default:
# SmallBank at --zipf 0,0.9,1.25). Run from the repository's root after `dotnet build benchmarks/Snapper.Runner -c Release`.
# Writes LOG-ORDER-ROUND.log and a results folder of each into OUT (default: this folder).
# This folder's runs: `ab.sh off 1,4,16` and `ROUNDS=1 ab.sh fsync 1,4,16,64`.
set -e
log=${1:-off}
pipelines=${2:-1,4,16}
shift $(($# < 2 ? $# : 2))
workload=("$@")
[ ${#workload[@]} -gt 0 ] || workload=(--zipf 0,0.9,1.25)
out=${OUT:-$(dirname "$0")}
mkdir -p "$out"
for round in $(seq 1 "${ROUNDS:-2}"); do
  for order in parallel ascending; do
    DOTNET_GCgen0size=0x4000000 dotnet benchmarks/Snapper.Runner/bin/Release/net10.0/Snapper.Runner.dll --modes OrleansTxn \
      --orleans-txn-locks "$order" --logging "$log" "${workload[@]}" --pipeline OrleansTxn="$pipelines" --repeat 1 --epochs 4 \
      --warmup 1 --epoch-seconds 3 --data "/tmp/orleans-txn-locks-data" --out "$out/$log-$order-$round" \
      > "$out/$log-$order-$round.log" 2>&1
  done
done
