#!/usr/bin/env python3
"""Ratios between modes per repetition (the issue asks for per-repetition ratios), from repetitions.csv next to this
file; prints a markdown table per logging setting: median (min-max) of each ratio over the repetitions, per Zipf."""
import csv, os, statistics, sys
from collections import defaultdict

# A sweep folder as the argument (another sweep with the same columns); this script's own folder by default.
here = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__))
rows = list(csv.DictReader(open(os.path.join(here, "repetitions.csv"))))
cell = {}
for r in rows:
    p = dict(kv.split("=", 1) for kv in r["params"].split(";"))
    cell[(p["log"], float(p["zipf"]), int(p["rep"]), r["mode"])] = r
logs = sorted({k[0] for k in cell}, key=lambda l: (l != "off", l))
zipfs = sorted({k[1] for k in cell})
reps = sorted({k[2] for k in cell})
ratios = [("PACT / NT", "PACT", "NT", "committed_per_s"), ("PACT / ACT", "PACT", "ACT", "committed_per_s"),
          ("PACT / OrleansTxn", "PACT", "OrleansTxn", "committed_per_s"), ("Hybrid / PACT", "Hybrid", "PACT", "committed_per_s"),
          ("ACT / OrleansTxn", "ACT", "OrleansTxn", "committed_per_s")]

def fmt(values):
    if not values:
        return "-"
    return f"{statistics.median(values):.2f} ({min(values):.2f}-{max(values):.2f})"

for log in logs:
    print(f"\n### log={log}\n")
    print("| ratio | " + " | ".join(f"zipf {z:g}" for z in zipfs) + " |")
    print("| --- |" + " ---: |" * len(zipfs))
    for name, a, b, col in ratios:
        line = []
        for z in zipfs:
            vals = [float(cell[(log, z, rep, a)][col]) / float(cell[(log, z, rep, b)][col])
                    for rep in reps if (log, z, rep, a) in cell and (log, z, rep, b) in cell and float(cell[(log, z, rep, b)][col]) > 0]
            line.append(fmt(vals))
        print(f"| {name} | " + " | ".join(line) + " |")
    for mode in ("PACT", "NT"):
        line = []
        for z in zipfs:
            vals = [float(cell[(log, z, rep, mode)]["p99_ms"]) / float(cell[(log, z, rep, mode)]["p50_ms"])
                    for rep in reps if (log, z, rep, mode) in cell and float(cell[(log, z, rep, mode)]["p50_ms"]) > 0]
            line.append(fmt(vals))
        print(f"| {mode} p99 / p50 | " + " | ".join(line) + " |")
