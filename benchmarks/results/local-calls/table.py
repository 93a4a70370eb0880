"""Prints one row per runner output of the A/B rounds: throughput, CPU and allocation per transaction, and ratios."""
import re, sys
for f in sys.argv[1:]:
    t = open(f).read()
    rows = {}
    for mode in ['NT', 'PACT', 'ACT', 'Hybrid']:
        m = re.search(rf'\| {mode} pipeline=\d+ \| runner process per txn: ([\d.]+) us CPU, ([\d.]+) KB allocated.*?\n.*?-> ([\d,]+) txn/s', t, re.S)
        if m:
            rows[mode] = (float(m.group(1)), float(m.group(2)), int(m.group(3).replace(',', '')))
    out = f.split('/')[-1]
    for mode, (cpu, kb, tps) in rows.items():
        out += f" | {mode} {tps:,} txn/s {cpu} us {kb} KB"
    if 'PACT' in rows:
        out += f" | PACT/NT {rows['PACT'][2] / rows['NT'][2]:.2f}, CPU {rows['PACT'][0] / rows['NT'][0]:.2f}"
    if 'ACT' in rows:
        out += f" | ACT/NT {rows['ACT'][2] / rows['NT'][2]:.2f}"
    if 'Hybrid' in rows and 'PACT' in rows:
        out += f" | Hybrid/PACT {rows['Hybrid'][2] / rows['PACT'][2]:.2f}"
    print(out)
