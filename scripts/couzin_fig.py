#!/usr/bin/env python3
"""Couzin et al. 2002: the group's polarization and angular momentum against the zone of orientation.

Runs `murmur` headless with the paper's individuals (N = 100, r_r = 1, dr_a = 14, a field of
perception of 270 degrees, 40 degrees/s turning at dt = 0.1 s, speed 3, sigma = 0.05) in an open
world, the zone of orientation's width dr_o swept up from 0 and down from its largest value. Each
run starts from the state the previous dr_o left (the history the paper's torus depends on); the
first of each sweep starts from random positions in a cube of side 10 and random headings. p_group
(group_polarization) and m_group (group_rotation) are averaged over the last --average steps of
each run; the error bars are the spread over the replicas (seeds). Writes <out>/couzin-fig.csv
(every run), <out>/couzin-fig-summary.csv (mean and spread per direction and dr_o) and
<out>/couzin-fig.svg (the figure), and with matplotlib installed <out>/couzin-fig.png too.
--plot FILE.csv draws the figures again from a couzin-fig.csv without running anything.

    scripts/couzin_fig.py --murmur build/murmur --out out/ [--engine cpu] [--replicas 10]
"""
import argparse
import csv
import math
import os
import shutil
import subprocess
import sys
import tempfile

import svg_figure  # the SVG axes, bars and markers shared with the other model figures

PAPER = ["--rule", "couzin", "--boundary", "open", "--n", "100", "--zone-repulsion", "1", "--zone-attraction", "14",
         "--field-of-view", "270", "--turn-rate", "40", "--couzin-dt", "0.1", "--speed", "3", "--noise", "0.05"]


def run_one(a, dro, seed, start, end, tmp):
    """One run at zone width dro from state file `start` (None: random), its final state into `end`."""
    obs = os.path.join(tmp, "obs.csv")
    cmd = [a.murmur, "--headless", "--no-render", "--engine", a.engine, "--pipeline", a.pipeline] + PAPER + [
        "--zone-orientation", repr(dro), "--seed", str(seed), "--steps", str(a.steps), "--observables", obs,
        "--observe-every", str(a.every), "--out", end, "--half-size", "5"]
    cmd += ["--scenario", "file:" + start] if start else ["--scenario", "uniform"]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit("couzin_fig: " + " ".join(cmd) + " failed:\n" + r.stdout + r.stderr)
    with open(obs) as f:
        rows = [row for row in csv.DictReader(f) if int(row["step"]) >= a.steps - a.average]
    mean = lambda k: sum(float(row[k]) for row in rows) / len(rows)
    return mean("group_polarization"), mean("group_rotation")


def svg(summary, widths, path):
    """Two panels, p_group and m_group against dr_o, one series per sweep direction (plain SVG)."""
    w, h, left, right, top, bottom, gap = 900, 420, 60, 20, 50, 55, 60
    pw = (w - left - right - gap) / 2
    xmax = max(widths)
    colours = {"up": "#d95f02", "down": "#1b9e77"}
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" font-family="sans-serif" font-size="13">',
           f'<rect width="{w}" height="{h}" fill="white"/>',
           f'<text x="{w / 2}" y="20" text-anchor="middle">Couzin model, N = 100, r_r = 1, \u0394r_a = 14, 270\u00b0 '
           f'field of perception, 40\u00b0/s, s = 3, \u03c3 = 0.05 (after Couzin et al. 2002)</text>']
    for panel, (key, label) in enumerate([("p", "p_group (polarization)"), ("m", "m_group (rotation)")]):
        x0 = left + panel * (pw + gap)
        px = lambda x: x0 + pw * x / xmax
        py = lambda y: h - bottom - (h - top - bottom) * y
        out += svg_figure.axes(px, py, xmax, range(0, int(xmax) + 1, 2))
        out.append(f'<text x="{x0 + pw / 2}" y="{h - 15}" text-anchor="middle">\u0394r_o (zone of orientation)</text>')
        out.append(f'<text x="{x0 + pw / 2}" y="{top - 8}" text-anchor="middle">{label}</text>')
        for d in ("up", "down"):
            c = colours[d]
            pts = sorted((dro, ms[key][0], ms[key][1]) for (dd, dro), ms in summary.items() if dd == d)
            out.append('<polyline fill="none" stroke="%s" stroke-width="1.5" points="%s"/>' %
                       (c, " ".join(f"{px(x):.1f},{py(m):.1f}" for x, m, _ in pts)))
            for x, m, sd in pts:
                out.append(svg_figure.error_bar(px, py, x, m, sd, c))
                out.append(svg_figure.marker("circle" if d == "up" else "square", px(x), py(m), c))
        if panel == 1:
            for k, (d, text) in enumerate([("up", "\u0394r_o increasing (from a swarm)"),
                                           ("down", "\u0394r_o decreasing (from parallel)")]):
                ly = top + 12 + 20 * k
                out.append(f'<line x1="{x0 + pw - 245}" y1="{ly}" x2="{x0 + pw - 220}" y2="{ly}" stroke="{colours[d]}" '
                           f'stroke-width="2"/>')
                out.append(f'<text x="{x0 + pw - 214}" y="{ly + 4}">{text}</text>')
    out.append("</svg>")
    with open(path, "w") as f:
        f.write("\n".join(out) + "\n")


def png(summary, widths, path):
    """The same figure as a PNG, where matplotlib is installed (skipped otherwise)."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return
    fig, axes = plt.subplots(1, 2, figsize=(10, 4.2), dpi=100)
    for ax, (key, label) in zip(axes, [("p", "p_group (polarization)"), ("m", "m_group (rotation)")]):
        for d, mark, colour, text in (("up", "o", "#d95f02", "Δr_o increasing (from a swarm)"),
                                      ("down", "s", "#1b9e77", "Δr_o decreasing (from parallel)")):
            pts = sorted((dro, s[key][0], s[key][1]) for (dd, dro), s in summary.items() if dd == d)
            ax.errorbar([p[0] for p in pts], [p[1] for p in pts], yerr=[p[2] for p in pts], marker=mark, mfc="none",
                        capsize=3, color=colour, label=text)
        ax.set_xlabel("Δr_o (width of the zone of orientation)")
        ax.set_ylabel(label)
        ax.set_xlim(-0.3, max(widths) + 0.3)
        ax.set_ylim(0, 1.05)
    axes[1].legend(fontsize=9)
    fig.suptitle("Couzin model, N = 100, r_r = 1, Δr_a = 14, 270° field of perception, 40°/s, s = 3, σ = 0.05 "
                 "(after Couzin et al. 2002)", fontsize=10)
    fig.tight_layout()
    fig.savefig(path)


def summarise(runs, widths):
    summary = {}
    for d in ("up", "down"):
        for dro in widths:
            v = [(p, m) for (dd, x, _, p, m) in runs if dd == d and x == dro]
            stats = {}
            for key, col in (("p", 0), ("m", 1)):
                xs = [t[col] for t in v]
                mean = sum(xs) / len(xs)
                stats[key] = (mean, math.sqrt(sum((x - mean) ** 2 for x in xs) / (len(xs) - 1)))
            summary[(d, dro)] = stats
    return summary


def plot_only(path, out):
    with open(path) as f:
        runs = [(r["direction"], float(r["zone_orientation"]), int(r["replica"]), float(r["group_polarization"]),
                 float(r["group_rotation"])) for r in csv.DictReader(f)]
    widths = sorted({r[1] for r in runs})
    summary = summarise(runs, widths)
    os.makedirs(out, exist_ok=True)
    svg(summary, widths, os.path.join(out, "couzin-fig.svg"))
    png(summary, widths, os.path.join(out, "couzin-fig.png"))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--murmur", help="the murmur executable")
    ap.add_argument("--plot", help="draw the figures from this couzin-fig.csv instead of running")
    ap.add_argument("--out", required=True, help="folder for the CSVs and the SVG")
    ap.add_argument("--engine", default="cpu", choices=["cuda", "cpu"])
    ap.add_argument("--pipeline", default="naive", help="the boids pipeline (100 bodies: naive)")
    ap.add_argument("--widths", default="0,0.5,1,1.5,2,3,4,5,6,7,8,9,10,11,12,13,14,15",
                    help="comma-separated widths of the zone of orientation, in sweep-up order")
    ap.add_argument("--replicas", type=int, default=6)
    ap.add_argument("--steps", type=int, default=3000, help="steps per width (0.1 s each)")
    ap.add_argument("--average", type=int, default=1000, help="the last steps of a run that are averaged")
    ap.add_argument("--every", type=int, default=10, help="steps between samples")
    a = ap.parse_args()
    if a.plot:
        plot_only(a.plot, a.out)
        return
    if not a.murmur:
        sys.exit("couzin_fig: --murmur names the executable to run (or --plot a couzin-fig.csv to draw)")
    widths = [float(x) for x in a.widths.split(",")]
    if a.replicas < 2 or a.average < 2 * a.every or a.average > a.steps:
        sys.exit("couzin_fig: --replicas needs at least 2, --average at least two samples and at most --steps")
    if widths != sorted(widths) or min(widths) < 0:
        sys.exit(f"couzin_fig: --widths {a.widths} must be increasing and at least 0")
    os.makedirs(a.out, exist_ok=True)
    runs, total, done = [], 2 * len(widths) * a.replicas, 0
    with tempfile.TemporaryDirectory() as tmp:
        for rep in range(a.replicas):
            for d, order in (("up", widths), ("down", widths[::-1])):
                state = None
                for k, dro in enumerate(order):
                    end = os.path.join(tmp, f"state-{k}.txt")
                    seed = 1000 * (rep + 1) + 100 * (d == "down") + k
                    p, m = run_one(a, dro, seed, state, end, tmp)
                    prev = os.path.join(tmp, "prev.txt")
                    shutil.move(end, prev)
                    state = prev
                    runs.append((d, dro, rep, p, m))
                    done += 1
                    print(f"[{done}/{total}] {d} dr_o={dro:g} replica {rep}: p = {p:.3f}, m = {m:.3f}", flush=True)
    summary = summarise(runs, widths)
    with open(os.path.join(a.out, "couzin-fig.csv"), "w", newline="") as f:
        wr = csv.writer(f)
        wr.writerow(["direction", "zone_orientation", "replica", "group_polarization", "group_rotation"])
        for r in runs:
            wr.writerow([r[0], r[1], r[2], f"{r[3]:.6f}", f"{r[4]:.6f}"])
    with open(os.path.join(a.out, "couzin-fig-summary.csv"), "w", newline="") as f:
        wr = csv.writer(f)
        wr.writerow(["direction", "zone_orientation", "p_mean", "p_sd", "m_mean", "m_sd"])
        for (d, dro), s in sorted(summary.items()):
            wr.writerow([d, dro, f"{s['p'][0]:.6f}", f"{s['p'][1]:.6f}", f"{s['m'][0]:.6f}", f"{s['m'][1]:.6f}"])
    svg(summary, widths, os.path.join(a.out, "couzin-fig.svg"))
    png(summary, widths, os.path.join(a.out, "couzin-fig.png"))
    print(f"couzin_fig: wrote {a.out}/couzin-fig.csv, couzin-fig-summary.csv and couzin-fig.svg")


if __name__ == "__main__":
    main()
