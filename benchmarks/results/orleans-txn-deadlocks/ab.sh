#!/bin/bash
# SmallBank's Orleans Transactions baseline, parallel against ascending lock order: one runner invocation per order,
# interleaved, ROUNDS rounds (default 2), logging $1 (off or fsync), pipelines $2. Run from the repository's root after
# `dotnet build benchmarks/Snapper.Runner -c Release`. Writes LOG-ORDER-ROUND.log and a results folder of each here.
# This folder's runs: `ab.sh off 1,4,16` and `ROUNDS=1 ab.sh fsync 1,4,16,64`.
set -e
log=${1:-off}
pipelines=${2:-1,4,16}
here=$(dirname "$0")
for round in $(seq 1 "${ROUNDS:-2}"); do
  for order in parallel ascending; do
    DOTNET_GCgen0size=0x4000000 dotnet benchmarks/Snapper.Runner/bin/Release/net10.0/Snapper.Runner.dll --modes OrleansTxn \
      --orleans-txn-locks "$order" --logging "$log" --zipf 0,0.9,1.25 --pipeline OrleansTxn="$pipelines" --repeat 1 --epochs 4 \
      --warmup 1 --epoch-seconds 3 --data "/tmp/orleans-txn-deadlocks-data" --out "$here/$log-$order-$round" \
      > "$here/$log-$order-$round.log" 2>&1
  done
done
