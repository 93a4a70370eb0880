#!/bin/bash
# Interleaved, one at a time (both use the disk's fsync): base build, then new, per round.
out=/tmp/ab-queued; rounds=$1; shift
for r in $(seq ${FIRST:-1} $((${FIRST:-1} + rounds - 1))); do
  for v in base new; do
    if [ $v = base ]; then dll=/tmp/base-runner/Snapper.Runner.dll; else dll=/work/main/benchmarks/Snapper.Runner/bin/Release/net10.0/Snapper.Runner.dll; fi
    rm -rf /tmp/abq-data
    DOTNET_GCgen0size=0x4000000 dotnet $dll "$@" --data /tmp/abq-data --out $out/$v-$r > $out/$v-$r.log 2>&1
    echo "$v round $r: $(grep -hE '^ *-> ' $out/$v-$r.log | paste -sd' ')"
  done
done
