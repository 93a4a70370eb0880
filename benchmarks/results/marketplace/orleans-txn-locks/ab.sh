#!/bin/bash
# The marketplace mix on Orleans Transactions, parallel against ascending lock order: one runner invocation per order,
# interleaved, ROUNDS rounds (default 1), logging $1 (off or fsync, default fsync as in ../vs-orleans-txn), pipelines $2,
# the thesis's skews. Run from the repository's root after `dotnet build benchmarks/Snapper.Runner -c Release`. Writes
# LOG-ORDER-ROUND.log and a results folder of each here.
set -e
log=${1:-fsync}
pipelines=${2:-1,4,16}
here=$(dirname "$0")
for round in $(seq 1 "${ROUNDS:-1}"); do
  for order in parallel ascending; do
    DOTNET_GCgen0size=0x4000000 dotnet benchmarks/Snapper.Runner/bin/Release/net10.0/Snapper.Runner.dll --workload marketplace \
      --modes OrleansTxn --orleans-txn-locks "$order" --logging "$log" --actor-skew 1,0.02 --key-skew 1,0.02 \
      --pipeline OrleansTxn="$pipelines" --repeat 1 --epochs 4 --warmup 1 --epoch-seconds 3 \
      --data "/tmp/marketplace-orleans-txn-locks-data" --out "$here/$log-$order-$round" > "$here/$log-$order-$round.log" 2>&1
  done
done
