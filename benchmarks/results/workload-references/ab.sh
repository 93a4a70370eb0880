#!/bin/bash
# The workloads' actors calling GetGrain per call (BASE, a build of d2a9b95) against cached references (AFTER),
# two rounds alternated, NT, PACT, Hybrid 90 % and ACT at Zipf 0 and 0.9, logging off, fixed pipelines.
#   git worktree add /tmp/base d2a9b95 && dotnet build -c Release /tmp/base/benchmarks/Snapper.Runner
#   BASE=/tmp/base/benchmarks/Snapper.Runner/bin/Release/net10.0 bash ab.sh
set -u
export DOTNET_GCgen0size=0x4000000
A=$BASE/Snapper.Runner.dll
B=$(git rev-parse --show-toplevel)/benchmarks/Snapper.Runner/bin/Release/net10.0/Snapper.Runner.dll
OUT=${OUT:-/tmp/ab}
for round in 1 2; do
  for v in base after; do
    R=$A; [ $v = after ] && R=$B
    for z in 0 0.9; do
      dotnet $R --modes NT,PACT,Hybrid,ACT --zipf $z --logging off --pipeline NT=64 --pipeline PACT=16 --pipeline Hybrid=16 \
        --pipeline ACT=4 --repeat 1 --epochs 5 --warmup 3 --epoch-seconds 5 --out $OUT/$v-$round-$z --data $OUT/d > $OUT/$v-$round-$z.log 2>&1
    done
  done
done
