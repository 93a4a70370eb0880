#!/usr/bin/env bash
# Does the order of modes change their numbers? SmallBank uniform, logging off, each mode twice (interleaved), forward
# and reversed, with a fresh silo per mode (the runner's default) and with one silo shared by all modes.
set -euo pipefail
cd "$(dirname "$0")/../../.."
dotnet build -c Release benchmarks/Snapper.Runner -nologo -v q >/dev/null
out=benchmarks/results/mode-order
common=(--logging off --zipf 0 --repeat 2 --epochs 4 --warmup 1 --epoch-seconds 5 --pipeline NT=64 --pipeline ACT=4 --pipeline PACT=256 --pipeline Hybrid=64)
for silo in true false; do
  for order in NT,ACT,PACT,Hybrid Hybrid,PACT,ACT,NT; do
    name="silo-per-mode-$silo-${order%%,*}-first"
    dotnet run -c Release --project benchmarks/Snapper.Runner --no-build -- "${common[@]}" --modes $order --silo-per-mode $silo \
      --tag order=${order%%,*}-first --tag silo=$([ $silo = true ] && echo fresh || echo shared) --out $out/$name > $out/$name.log 2>&1
    grep "│ smallbank" $out/$name.log | sed "s/^/$name /"
  done
done
