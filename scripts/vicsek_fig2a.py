#!/usr/bin/env python3
"""Vicsek et al. 1995, Fig. 2a: the order parameter v_a against the noise eta at density 4.

Runs `murmur` headless for every (N, eta, replica): the Vicsek rule in a periodic square of side
L = sqrt(N / 4), r = 1, v0 = 0.03, dt = 1, from uniform positions and random headings. v_a is the
polarization (|sum of unit velocities| / N) averaged over the second half of the run; the error
bars are the standard deviation over the replicas (different seeds). Writes <out>/vicsek-fig2a.csv
(every run), <out>/vicsek-fig2a-summary.csv (mean and spread per N and eta) and
<out>/vicsek-fig2a.svg (the figure), and with matplotlib installed <out>/vicsek-fig2a.png too.

    scripts/vicsek_fig2a.py --murmur build/murmur --out images/ [--engine cuda] [--steps 6000]
"""
import argparse
import csv
import math
import os
import subprocess
import sys
import tempfile

import svg_figure  # the SVG axes, bars and markers shared with the other model figures


def run_one(murmur, engine, n, eta, seed, steps, every, extra=()):
    half = 0.5 * math.sqrt(n / 4.0)
    with tempfile.TemporaryDirectory() as tmp:
        obs = os.path.join(tmp, "obs.csv")
        cmd = [murmur, "--headless", "--no-render", "--engine", engine, "--rule", "vicsek", "--dims", "2",
               "--scenario", "uniform", "--half-size", repr(half), "--n", str(n), "--noise", repr(eta),
               "--seed", str(seed), "--steps", str(steps), "--observables", obs, "--observe-every", str(every)]
        cmd += list(extra)
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode != 0:
            sys.exit("vicsek_fig2a: " + " ".join(cmd) + " failed:\n" + r.stdout + r.stderr)
        with open(obs) as f:
            rows = [row for row in csv.DictReader(f)]
    values = [float(row["polarization"]) for row in rows if int(row["step"]) >= steps // 2]
    return sum(values) / len(values)


TITLE = "Vicsek model, density 4, r = 1, v0 = 0.03 (after Vicsek et al. 1995, Fig. 2a)"


def svg(summary, ns, path, label=lambda n: f"N = {n}", title=TITLE):
    """A plot of v_a against eta with error bars, one series per key of ns (plain SVG, no plotting library)."""
    w, h, left, right, top, bottom = 640, 440, 70, 20, 30, 60
    xmax, ymax = 5.0, 1.0
    px = lambda x: left + (w - left - right) * x / xmax
    py = lambda y: h - bottom - (h - top - bottom) * y / ymax
    colours = ["#1b9e77", "#d95f02", "#7570b3", "#e7298a", "#66a61e"]
    marks = ["circle", "square", "diamond", "triangle", "cross"]
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" font-family="sans-serif" font-size="13">',
           f'<rect width="{w}" height="{h}" fill="white"/>']
    out += svg_figure.axes(px, py, xmax, [k * 1.0 for k in range(6)], lambda x: f"{x:g}")
    out.append(f'<text x="{(left + w - right) / 2}" y="{h - 18}" text-anchor="middle">noise \u03b7</text>')
    out.append(f'<text x="18" y="{(top + h - bottom) / 2}" text-anchor="middle" '
               f'transform="rotate(-90 18 {(top + h - bottom) / 2})">v_a (polarization)</text>')
    out.append(f'<text x="{(left + w - right) / 2}" y="18" text-anchor="middle">{title}</text>')
    for s, n in enumerate(ns):
        c = colours[s % len(colours)]
        pts = sorted((eta, m, sd) for (nn, eta), (m, sd) in summary.items() if nn == n)
        out.append('<polyline fill="none" stroke="%s" stroke-width="1.2" points="%s"/>' %
                   (c, " ".join(f"{px(e):.1f},{py(m):.1f}" for e, m, _ in pts)))
        for e, m, sd in pts:
            out.append(svg_figure.error_bar(px, py, e, m, sd, c))
            out.append(svg_figure.marker(marks[s % len(marks)], px(e), py(m), c))
        ly = top + 20 + 20 * s
        out.append(f'<line x1="{w - 150}" y1="{ly}" x2="{w - 125}" y2="{ly}" stroke="{c}" stroke-width="2"/>')
        out.append(f'<text x="{w - 118}" y="{ly + 4}">{label(n)}</text>')
    out.append("</svg>")
    with open(path, "w") as f:
        f.write("\n".join(out) + "\n")


def png(summary, ns, path, label=lambda n: f"N = {n}", title=TITLE):
    """The same figure as a PNG, where matplotlib is installed (skipped otherwise)."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return
    fig, ax = plt.subplots(figsize=(6.4, 4.4), dpi=110)
    for n, mark in zip(ns, ["o", "s", "D", "^", "x"]):
        pts = sorted((eta, m, sd) for (nn, eta), (m, sd) in summary.items() if nn == n)
        ax.errorbar([p[0] for p in pts], [p[1] for p in pts], yerr=[p[2] for p in pts], marker=mark, mfc="none",
                    capsize=3, label=label(n))
    ax.set_xlabel("noise η")
    ax.set_ylabel("v_a (polarization)")
    ax.set_xlim(0, 5.2)
    ax.set_ylim(0, 1.05)
    ax.set_title(title, fontsize=9)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--murmur", required=True, help="the murmur executable")
    ap.add_argument("--out", required=True, help="folder for the CSVs and the SVG")
    ap.add_argument("--engine", default="cuda", choices=["cuda", "cpu"])
    ap.add_argument("--n", default="400,4000,40000", help="comma-separated body counts")
    ap.add_argument("--etas", default="0.1,0.5,1,1.5,2,2.5,3,3.5,4,4.5,5", help="comma-separated noises")
    ap.add_argument("--replicas", type=int, default=4)
    ap.add_argument("--steps", default="6000,6000,40000",
                    help="comma-separated steps per run, one per --n (larger worlds order more slowly)")
    ap.add_argument("--every", type=int, default=20, help="steps between samples")
    a = ap.parse_args()
    ns = [int(x) for x in a.n.split(",")]
    steps = [int(x) for x in a.steps.split(",")]
    if len(steps) != len(ns):
        sys.exit(f"vicsek_fig2a: --steps {a.steps} has {len(steps)} values for {len(ns)} values of --n")
    etas = [float(x) for x in a.etas.split(",")]
    if a.replicas < 2 or min(steps) < 2 * a.every:
        sys.exit("vicsek_fig2a: --replicas needs at least 2 and --steps at least two samples")
    os.makedirs(a.out, exist_ok=True)
    runs, total, done = [], len(ns) * len(etas) * a.replicas, 0
    for n, nsteps in zip(ns, steps):
        for eta in etas:
            for rep in range(a.replicas):
                va = run_one(a.murmur, a.engine, n, eta, 1000 + rep, nsteps, a.every)
                runs.append((n, eta, rep, va))
                done += 1
                print(f"[{done}/{total}] N={n} eta={eta:g} replica {rep}: v_a = {va:.4f}", flush=True)
    summary = {}
    for n in ns:
        for eta in etas:
            v = [va for (nn, e, _, va) in runs if nn == n and e == eta]
            m = sum(v) / len(v)
            sd = math.sqrt(sum((x - m) ** 2 for x in v) / (len(v) - 1))
            summary[(n, eta)] = (m, sd)
    with open(os.path.join(a.out, "vicsek-fig2a.csv"), "w", newline="") as f:
        wr = csv.writer(f)
        wr.writerow(["n", "eta", "replica", "va"])
        wr.writerows(runs)
    with open(os.path.join(a.out, "vicsek-fig2a-summary.csv"), "w", newline="") as f:
        wr = csv.writer(f)
        wr.writerow(["n", "eta", "va_mean", "va_std", "replicas", "steps"])
        for (n, eta), (m, sd) in sorted(summary.items()):
            wr.writerow([n, eta, f"{m:.5f}", f"{sd:.5f}", a.replicas, steps[ns.index(n)]])
    svg(summary, ns, os.path.join(a.out, "vicsek-fig2a.svg"))
    png(summary, ns, os.path.join(a.out, "vicsek-fig2a.png"))
    print("vicsek_fig2a: wrote", os.path.join(a.out, "vicsek-fig2a.svg"))


if __name__ == "__main__":
    main()
