#!/bin/bash
# The cells the targets of #24 read (Zipf 0, 0.9 and 1.25; logging off and fsync), every mode, at the pipelines sweep 9
# chose there (../smallbank-sweep-9), 3 repetitions with the modes interleaved, each mode on a fresh silo.
# RUNNER: the runner's dll (default: this checkout's Release build); OUT: where results go.
set -u
export DOTNET_GCgen0size=0x4000000
R=${RUNNER:-$(git rev-parse --show-toplevel)/benchmarks/Snapper.Runner/bin/Release/net10.0/Snapper.Runner.dll}
OUT=${OUT:-/tmp/targets}
mkdir -p "$OUT"
run() { # logging zipf act pact hybrid orleanstxn
  dotnet "$R" --modes NT,ACT,PACT,Hybrid,OrleansTxn --logging $1 --zipf $2 --pipeline NT=64 --pipeline ACT=$3 \
    --pipeline PACT=$4 --pipeline Hybrid=$5 --pipeline OrleansTxn=$6 --repeat 3 --epochs 3 --warmup 1 --epoch-seconds 5 \
    --data /tmp/targets-data --out "$OUT/$1-$2" > "$OUT/$1-$2.log" 2>&1
}
run off 0 4 32 2 2
run off 0.9 2 2 4 1
run off 1.25 2 2 2 1
run fsync 0 512 128 64 8
run fsync 0.9 16 256 64 4
run fsync 1.25 8 32 16 2
