#!/bin/bash
# BASE and AFTER: two checkouts, each built with `dotnet build -c Release benchmarks/Snapper.Runner`.
# Usage: BASE=/tmp/base AFTER=$PWD bash benchmarks/results/act-watchdog/ab-watchdog.sh
set -u
export DOTNET_GCgen0size=0x4000000
mkdir -p /tmp/ab && cd /tmp/ab
for r in 1 2 3; do
  for b in base new; do
    if [ $b = base ]; then D=$BASE; else D=$AFTER; fi
    for m in ACT Hybrid; do
      if [ $m = ACT ]; then args="--modes ACT --zipf 0 --pipeline ACT=8"; else args="--modes Hybrid --zipf 0.9 --pipeline Hybrid=16"; fi
      dotnet $D/benchmarks/Snapper.Runner/bin/Release/net10.0/Snapper.Runner.dll $args --logging off --repeat 1 --epochs 7 --warmup 3 --epoch-seconds 5 --data /tmp/ab/d --out /tmp/ab/o > $m-$b-$r.log 2>&1
      echo "$r $b $m $(grep -E '^ *->' $m-$b-$r.log | cut -c1-70) | $(grep -oE 'per txn: .*' $m-$b-$r.log | head -1)"
    done
  done
done
