#!/usr/bin/env python3
"""The Vicsek transition with topological against metric neighbours: v_a against the noise eta.

Runs `murmur` headless as scripts/vicsek_fig2a.py does (the Vicsek rule in a periodic square at
density 4, v0 = 0.03, from uniform positions and random headings; v_a averaged over the second
half of each run, error bars the spread over the replicas), once with metric neighbours (everyone
within r = 1: about 12.6 at density 4) and once with each boid's K nearest (--topological K,
Ballerini et al. 2008: about 7), for one N. Writes <out>/vicsek-topological.csv (every run),
<out>/vicsek-topological-summary.csv and <out>/vicsek-topological.svg, and with matplotlib
installed <out>/vicsek-topological.png.

    scripts/vicsek_topological.py --murmur build/murmur --out out/ [--engine cuda] [--k 7] [--n 4000]
"""
import argparse
import csv
import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import vicsek_fig2a  # noqa: E402  (the runs and the plots of the metric figure)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--murmur", required=True, help="the murmur executable")
    ap.add_argument("--out", required=True, help="folder for the CSVs and the figure")
    ap.add_argument("--engine", default="cuda", choices=["cuda", "cpu"])
    ap.add_argument("--n", type=int, default=4000)
    ap.add_argument("--k", type=int, default=7, help="the topological neighbours of a boid")
    ap.add_argument("--etas", default="0.1,0.5,1,1.5,2,2.5,3,3.5,4,4.5,5", help="comma-separated noises")
    ap.add_argument("--replicas", type=int, default=4)
    ap.add_argument("--steps", type=int, default=6000)
    ap.add_argument("--every", type=int, default=20, help="steps between samples")
    a = ap.parse_args()
    etas = [float(x) for x in a.etas.split(",")]
    if a.replicas < 2 or a.steps < 2 * a.every:
        sys.exit("vicsek_topological: --replicas needs at least 2 and --steps at least two samples")
    if not 1 <= a.k <= 64:
        sys.exit(f"vicsek_topological: --k {a.k}: allowed 1 to 64")
    os.makedirs(a.out, exist_ok=True)
    modes = [("metric", ()), (f"topological {a.k}", ("--topological", str(a.k)))]
    runs, total, done = [], len(modes) * len(etas) * a.replicas, 0
    for label, extra in modes:
        for eta in etas:
            for rep in range(a.replicas):
                va = vicsek_fig2a.run_one(a.murmur, a.engine, a.n, eta, 1000 + rep, a.steps, a.every, extra)
                runs.append((label, eta, rep, va))
                done += 1
                print(f"[{done}/{total}] {label} eta={eta:g} replica {rep}: v_a = {va:.4f}", flush=True)
    summary = {}
    for label, _ in modes:
        for eta in etas:
            v = [va for (m, e, _, va) in runs if m == label and e == eta]
            mean = sum(v) / len(v)
            summary[(label, eta)] = (mean, math.sqrt(sum((x - mean) ** 2 for x in v) / (len(v) - 1)))
    with open(os.path.join(a.out, "vicsek-topological.csv"), "w", newline="") as f:
        wr = csv.writer(f)
        wr.writerow(["neighbours", "n", "eta", "replica", "va"])
        wr.writerows([(m, a.n, e, rep, f"{va:.6f}") for (m, e, rep, va) in runs])
    with open(os.path.join(a.out, "vicsek-topological-summary.csv"), "w", newline="") as f:
        wr = csv.writer(f)
        wr.writerow(["neighbours", "n", "eta", "va_mean", "va_std", "replicas", "steps"])
        for (m, eta), (mean, sd) in sorted(summary.items()):
            wr.writerow([m, a.n, eta, f"{mean:.5f}", f"{sd:.5f}", a.replicas, a.steps])
    labels = [label for label, _ in modes]
    title = f"Vicsek model, N = {a.n}, density 4, v0 = 0.03: metric and topological neighbours"
    name = lambda m: "metric, r = 1" if m == "metric" else f"topological, K = {a.k}"
    vicsek_fig2a.svg(summary, labels, os.path.join(a.out, "vicsek-topological.svg"), label=name, title=title)
    vicsek_fig2a.png(summary, labels, os.path.join(a.out, "vicsek-topological.png"), label=name, title=title)
    print("vicsek_topological: wrote", os.path.join(a.out, "vicsek-topological.svg"))


if __name__ == "__main__":
    main()
