#!/usr/bin/env python3
"""Plots an observables CSV (murmur --observables FILE.csv; docs/observables.md).

Boids: polarization and the number of flocks (and the largest flock's share) over the steps.
Gravity: the relative energy drift, the virial ratio and the Lagrangian radii over time.

    python3 bench/plot_observables.py bench/results/cpu/observables-default-world-20k.csv \
        --out images/observables-flocking.png

Needs matplotlib (Debian: python3-matplotlib; exits 77 without it). Columns that are empty in the CSV (not computed)
are left out of the plots.
"""
import argparse
import csv
import math
import sys


def read(path):
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    if not rows:
        sys.exit(f"{path}: no samples")
    cols = {}
    for name in rows[0]:
        vals = [float(r[name]) if r[name] != "" else math.nan for r in rows]
        cols[name] = vals
    return cols


def has(cols, name):
    return name in cols and any(not math.isnan(v) for v in cols[name])


def plot_boids(cols, title, ax1, ax2):
    step = cols["step"]
    ax1.plot(step, cols["polarization"], color="tab:blue", label="polarization |sum v/|v|| / N")
    ax1.set_ylim(0, 1.02)
    ax1.set_ylabel("polarization")
    ax1.set_title(title)
    if has(cols, "milling"):
        ax1.plot(step, cols["milling"], color="tab:purple", alpha=0.6, label="milling (flocks >= 10 boids)")
    ax1.legend(loc="lower right", fontsize=8)
    if has(cols, "flocks"):
        big = [a + b + c for a, b, c in zip(cols["flocks_10_99"], cols["flocks_100_999"], cols["flocks_1000_plus"])]
        ax2.plot(step, cols["flocks"], color="tab:green", label="flocks (all, singletons included)")
        ax2.plot(step, big, color="tab:olive", label="flocks of 10 boids or more")
        ax2.set_yscale("log")
        ax2.set_ylabel("flocks")
        share = ax2.twinx()
        share.plot(step, cols["largest_flock_share"], color="tab:red", alpha=0.6, label="largest flock's share")
        share.set_ylim(0, 1.02)
        share.set_ylabel("largest flock's share")
        lines = ax2.get_legend_handles_labels()
        more = share.get_legend_handles_labels()
        ax2.legend(lines[0] + more[0], lines[1] + more[1], loc="lower left", fontsize=8)
    else:
        ax2.plot(step, cols["neighbours_cohesion"], color="tab:green", label="neighbours within the cohesion radius")
        ax2.legend(fontsize=8)
    ax2.set_xlabel("step")


def plot_gravity(cols, title, ax1, ax2):
    t = cols["time"]
    if has(cols, "energy_drift"):
        ax1.plot(t, cols["energy_drift"], color="tab:blue", label="(E - E0) / |E0|")
        ax1.set_ylabel("relative energy drift")
    if has(cols, "angular_momentum_drift"):
        ax1.plot(t, cols["angular_momentum_drift"], color="tab:orange", alpha=0.7, label="|L - L0| / |L0|")
    ax1.axhline(0, color="grey", lw=0.5)
    ax1.set_title(title)
    ax1.legend(fontsize=8)
    for name, colour in (("lagrange_r10", "tab:green"), ("lagrange_r50", "tab:olive"), ("lagrange_r90", "tab:red")):
        ax2.plot(t, cols[name], color=colour, label=name.replace("lagrange_", "Lagrangian "))
    ax2.set_yscale("log")
    ax2.set_ylabel("radius")
    ax2.set_xlabel("time")
    if has(cols, "virial_ratio"):
        vir = ax2.twinx()
        vir.plot(t, cols["virial_ratio"], color="tab:purple", alpha=0.6, label="2K / |W|")
        vir.set_ylabel("virial ratio 2K/|W|")
        lines = ax2.get_legend_handles_labels()
        more = vir.get_legend_handles_labels()
        ax2.legend(lines[0] + more[0], lines[1] + more[1], fontsize=8)
    else:
        ax2.legend(fontsize=8)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("csv")
    ap.add_argument("--out", required=True, help="PNG to write")
    ap.add_argument("--title", default="")
    a = ap.parse_args()
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("plot_observables.py needs matplotlib (apt-get install python3-matplotlib)")
        sys.exit(77)  # CTest's skip
    cols = read(a.csv)
    fig, (ax1, ax2) = plt.subplots(2, 1, figsize=(8, 6), sharex=True)
    if "polarization" in cols:
        plot_boids(cols, a.title or "boids", ax1, ax2)
    elif "kinetic" in cols:
        plot_gravity(cols, a.title or "gravity", ax1, ax2)
    else:
        sys.exit(f"{a.csv}: neither boids nor gravity observables")
    fig.tight_layout()
    fig.savefig(a.out, dpi=110)
    print(f"wrote {a.out}")


if __name__ == "__main__":
    main()
