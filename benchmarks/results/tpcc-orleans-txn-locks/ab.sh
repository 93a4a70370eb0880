#!/bin/bash
# TPC-C NewOrder on Orleans Transactions, parallel against ascending lock order: one runner invocation per order,
# interleaved, ROUNDS rounds (default 2), logging $1 (off or fsync), pipelines $2. Run from the repository's root after
# `dotnet build benchmarks/Snapper.Runner -c Release`. Writes LOG-ORDER-ROUND.log and a results folder of each here.
set -e
log=${1:-off}
pipelines=${2:-1,2,4,8,16}
here=$(dirname "$0")
for round in $(seq 1 "${ROUNDS:-2}"); do
  for order in parallel ascending; do
    DOTNET_GCgen0size=0x4000000 dotnet benchmarks/Snapper.Runner/bin/Release/net10.0/Snapper.Runner.dll --workload tpcc \
      --modes OrleansTxn --orleans-txn-locks "$order" --logging "$log" --order-partitions 2 --pipeline OrleansTxn="$pipelines" \
      --repeat 1 --epochs 4 --warmup 1 --epoch-seconds 3 --data "/tmp/tpcc-orleans-txn-locks-data" --out "$here/$log-$order-$round" \
      > "$here/$log-$order-$round.log" 2>&1
  done
done
