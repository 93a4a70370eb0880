#!/bin/bash
# The Orleans Transactions baseline at the skews where it stalled, with Orleans' default lock timeout (8 s) and shorter
# ones, set through the benchmark silo's OrleansTransactions section (here from the environment). Each setting is one
# runner invocation on fresh silos; the settings alternate in two rounds. RUNNER: the runner's dll (default: this
# checkout's Release build); OUT: where results go.
set -u
export DOTNET_GCgen0size=0x4000000
R=${RUNNER:-$(git rev-parse --show-toplevel)/benchmarks/Snapper.Runner/bin/Release/net10.0/Snapper.Runner.dll}
OUT=${OUT:-/tmp/orleans-lock-timeout}
mkdir -p "$OUT"
run() { # round logging lock-timeout (empty: Orleans' default)
  local name=${3:-default}
  local setting=()
  [ -n "$3" ] && setting=(env "OrleansTransactions__LockTimeout=$3")
  "${setting[@]}" dotnet "$R" --modes OrleansTxn --logging $2 --zipf 0,0.9,1.25 --pipeline OrleansTxn=1,2,8 \
    --repeat 1 --epochs 3 --warmup 1 --epoch-seconds 5 --tag "locktimeout=$name" --data /tmp/orleans-lock-timeout-data \
    --out "$OUT/$1-$2-$name" > "$OUT/$1-$2-$name.log" 2>&1
  echo "exit status $?" >> "$OUT/$1-$2-$name.log"
}
for round in 1 2; do
  run $round off ""
  run $round off 00:00:00.100
  run $round off 00:00:01
done
run 1 fsync ""
run 1 fsync 00:00:00.100
