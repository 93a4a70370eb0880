#!/bin/bash
# Two builds of the runner side by side, each pinned to one core, the cores swapped every round, so that both see the
# same state of this machine (whose speed moves by 30-40 % within minutes) and each round is a pair to compare.
# usage: BEFORE=dir-of-old-checkout AFTER=dir-of-new-checkout ab-one-core-each.sh OUTDIR ROUNDS runner-args...
# (each checkout built with: dotnet build -c Release benchmarks/Snapper.Runner)
out=$1; rounds=$2; shift 2
mkdir -p $out
for r in $(seq 1 $rounds); do
  if [ $((r % 2)) = 1 ]; then cb=0; cn=1; else cb=1; cn=0; fi
  DOTNET_GCgen0size=0x4000000 taskset -c $cb dotnet "$BEFORE"/benchmarks/Snapper.Runner/bin/Release/net10.0/Snapper.Runner.dll "$@" --data /tmp/abdata-b --out $out/before-$r > $out/before-$r.log 2>&1 &
  DOTNET_GCgen0size=0x4000000 taskset -c $cn dotnet "$AFTER"/benchmarks/Snapper.Runner/bin/Release/net10.0/Snapper.Runner.dll "$@" --data /tmp/abdata-n --out $out/after-$r > $out/after-$r.log 2>&1 &
  wait
  for v in before after; do echo "$v round $r: $(grep -hE 'runner process per txn|-> ' $out/$v-$r.log | sed -E 's/.*(\| [A-Za-z]+ pipeline=[0-9]+) \| runner process per txn: ([0-9.]+ us CPU, [0-9.]+ KB).*/\1 \2/; s/^ *-> ([0-9,]+ txn\/s).*/\1/' | paste -sd' ' )"; done
done
