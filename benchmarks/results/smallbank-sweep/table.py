#!/usr/bin/env python3
"""Committed txn/s per mode and Zipf, median (min-max of the repetitions) [pipeline], p50/p99 ms, from results.csv."""
import csv, os, sys
# A sweep folder as the argument (another sweep with the same columns); this script's own folder by default.
here = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__))
rows = list(csv.DictReader(open(os.path.join(here, "results.csv"))))
modes = ["NT", "ACT", "PACT", "Hybrid", "OrleansTxn"]
cells = {}
for r in rows:
    p = dict(kv.split("=", 1) for kv in r["params"].split(";"))
    key = (p["log"], float(p["zipf"]), r["mode"])
    if key not in cells or float(r["committed_per_s"]) > float(cells[key][0]["committed_per_s"]):
        cells[key] = (r, p)
for log in sorted({k[0] for k in cells}, key=lambda l: (l != "off", l)):
    zipfs = sorted({k[1] for k in cells if k[0] == log})
    print(f"\n### log={log}: committed txn/s, median (range) [pipeline]; p50 / p99 ms\n")
    print("| zipf | " + " | ".join(modes) + " |")
    print("| --- |" + " ---: |" * len(modes))
    for z in zipfs:
        out = []
        for m in modes:
            if (log, z, m) not in cells:
                out.append("-")
                continue
            r, p = cells[(log, z, m)]
            lo, hi = r["committed_per_s_min"], r["committed_per_s_max"]
            rng = f" ({float(lo):,.0f}-{float(hi):,.0f})" if lo else ""
            out.append(f"{float(r['committed_per_s']):,.0f}{rng} [{p['pipeline']}]; {float(r['p50_ms']):.2f} / {float(r['p99_ms']):.2f}")
        print(f"| {z:g} | " + " | ".join(out) + " |")
