#!/usr/bin/env python3
"""The table of bench/run-builds.sh: per world and pipeline, each build's medians over its rounds
(ms per step) and B against A. Usage: bench/builds_table.py OUT_DIR [--markdown]"""
import csv
import glob
import os
import re
import sys


def main():
    if len(sys.argv) < 2:
        sys.exit("usage: builds_table.py OUT_DIR")
    out = sys.argv[1]
    runs = {}  # (world, pipeline) -> {"a": [ms...], "b": [...]}
    gpu, shas = "", {}
    for path in sorted(glob.glob(os.path.join(out, "*-[ab]-*.csv"))):
        m = re.match(r"(.+)-([ab])-(\d+)\.csv$", os.path.basename(path))
        if not m:
            continue
        world, build = m.group(1), m.group(2)
        with open(path, newline="") as f:
            for row in csv.DictReader(f):
                gpu = row.get("gpu", gpu)
                shas[build] = row.get("git_sha", "")
                key = (world, row["pipeline"])
                runs.setdefault(key, {"a": [], "b": []})[build].append(float(row["sim_ms_median"]))
    if not runs:
        sys.exit(f"builds_table.py: no *-a-*.csv / *-b-*.csv in {out}")
    print(f"GPU: {gpu}; A = {shas.get('a', '?')}, B = {shas.get('b', '?')}; ms per step, one value per round")
    print("| world | pipeline | A | B | B / A |")
    print("|---|---|---|---|---|")
    for (world, pipeline), v in sorted(runs.items()):
        a, b = v["a"], v["b"]
        ratio = (min(b) / min(a)) if a and b else float("nan")
        fmt = lambda xs: " / ".join(f"{x:.3f}" for x in xs)
        print(f"| {world} | {pipeline} | {fmt(a)} | {fmt(b)} | {ratio:.3f} |")


if __name__ == "__main__":
    main()
