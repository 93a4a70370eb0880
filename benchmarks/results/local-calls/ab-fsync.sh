#!/bin/bash
# Local calls with fsync logging: the build before them and the build after, alternated (A B B A), uniform SmallBank at
# the pipelines sweep 9 chose with fsync. BEFORE and AFTER: the two runner dlls; OUT: where the console output goes.
set -u
export DOTNET_GCgen0size=0x4000000
OUT=${OUT:-/tmp/ab-fsync}
mkdir -p "$OUT"
run() { # name dll
  dotnet "$2" --modes NT,PACT,ACT,Hybrid --logging fsync --pipeline NT=64 --pipeline PACT=128 --pipeline ACT=512 \
    --pipeline Hybrid=64 --repeat 1 --epochs 4 --warmup 1 --epoch-seconds 5 --data /tmp/ab-fsync-data > "$OUT/$1.txt" 2>&1
}
run 1-before "$BEFORE"; run 1-after "$AFTER"; run 2-after "$AFTER"; run 2-before "$BEFORE"
