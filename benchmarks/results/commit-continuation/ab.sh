#!/bin/bash
# Where a PACT batch's commit is applied once its record is durable: on the logger's thread (BEFORE) or on a pool thread
# (AFTER). Alternated A B B A per round, PACT alone with fsync, uniform SmallBank, at each pipeline in PIPELINES.
# BEFORE and AFTER: the two runner dlls; OUT: the console output.
set -u
export DOTNET_GCgen0size=0x4000000
OUT=${OUT:-/tmp/ab-commit-continuation}
PIPELINES=${PIPELINES:-"64 128"}
ROUNDS=${ROUNDS:-2}
mkdir -p "$OUT"
run() { # name dll pipeline
  dotnet "$2" --modes PACT --logging fsync --pipeline "PACT=$3" --repeat 1 --epochs 4 --warmup 1 --epoch-seconds 5 \
    --data /tmp/ab-commit-continuation-data > "$OUT/$1.txt" 2>&1
}
for round in $(seq 1 "$ROUNDS"); do
  for p in $PIPELINES; do
    run "$round-p$p-1-before" "$BEFORE" "$p"; run "$round-p$p-2-after" "$AFTER" "$p"
    run "$round-p$p-3-after" "$AFTER" "$p"; run "$round-p$p-4-before" "$BEFORE" "$p"
  done
done
for f in "$OUT"/*.txt; do
  echo "$(basename "$f" .txt): $(grep -oE '[0-9,]+ txn/s, p50' "$f" | tail -1 | cut -d' ' -f1) txn/s, $(grep -oE '[0-9.]+ us CPU, [0-9.]+ KB allocated' "$f" | tail -1)"
done
