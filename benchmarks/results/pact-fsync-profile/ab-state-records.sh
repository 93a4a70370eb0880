#!/bin/bash
# State records in one allocation: the build before and the build after, alternated A B B A twice, PACT alone with fsync,
# uniform SmallBank at the pipeline sweep 9 chose (128). BEFORE and AFTER: the two runner dlls; OUT: the console output.
set -u
export DOTNET_GCgen0size=0x4000000
OUT=${OUT:-/tmp/ab-state-records}
mkdir -p "$OUT"
run() { # name dll
  dotnet "$2" --modes PACT --logging fsync --pipeline PACT=128 --repeat 1 --epochs 4 --warmup 1 --epoch-seconds 5 \
    --data /tmp/ab-state-records-data > "$OUT/$1.txt" 2>&1
}
for round in 1 2; do
  run "$round-1-before" "$BEFORE"; run "$round-2-after" "$AFTER"; run "$round-3-after" "$AFTER"; run "$round-4-before" "$BEFORE"
done
for f in "$OUT"/*.txt; do
  echo "$(basename "$f" .txt): $(grep -oE '[0-9,]+ txn/s, p50' "$f" | tail -1 | cut -d' ' -f1) txn/s, $(grep -oE '[0-9.]+ us CPU, [0-9.]+ KB allocated' "$f" | tail -1)"
done
