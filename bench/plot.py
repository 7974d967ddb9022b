#!/usr/bin/env python3
"""Plots the CSV rows written by `murmur bench` (columns: docs/design.md#the-benchmark-csv-schema).

    python3 bench/plot.py results.csv [more.csv ...] --out images/ [--prefix name] [--n N]
                          [--block-size B] [--fps-n N]

Writes up to eight PNG files and prints the path of each:
  <prefix>_steps_vs_n.png          steps/s against N, log-log, one line per pipeline (and force,
                                   scenario, engine); the best block size and cell width per point
  <prefix>_steps_vs_block_size.png steps/s against the CUDA block size at the largest N measured
                                   with more than one block size
  <prefix>_stages.png              per-stage milliseconds, stacked, one bar per pipeline at one N
                                   (--n, else the largest N that most pipelines share)
  <prefix>_gravity_ms_vs_n.png     gravity: milliseconds per step against N, log-log, one line per
                                   pipeline, the fastest named above each N (where each one wins)
  <prefix>_gravity_interactions.png
                                   gravity interactions/s (N^2 per step) against N, GFLOP/s (20
                                   per interaction) on the right axis
  <prefix>_fps_vs_n.png            rendered rows (`murmur bench --render`): frame rate (frame_fps) and
                                   step rate (steps_per_s) against N, log-log, one line per
                                   pipeline; at --block-size B, else the best block size per point
  <prefix>_fps_vs_block.png        the same two rates against the CUDA block size at one N (--fps-n,
                                   else the largest N rendered with more than one block size)
  <prefix>_ms_vs_neighbours.png    a density sweep (one N, three or more `dense --neighbours` worlds):
                                   milliseconds per step against the mean neighbours per boid,
                                   log-log, one line per pipeline, the fastest named above each point
A plot the CSV has no data for is skipped with a message. Needs only Python 3 and matplotlib.
"""
import argparse
import csv
import os
import sys
from collections import defaultdict

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import schema  # noqa: E402  (bench/schema.py: the tables, read from the C++ sources)

# sample-reference: `murmur bench --reference`, NVIDIA's nbody kernel timed next to naive.
# textbook-coherent: the plain coherent grid the classic pipelines are measured against.
# The simulator's pipelines come from its table (bench/schema.py reads src/core/pipeline_table.cpp);
# the benchmark's own rows follow them.
PIPELINES = schema.pipelines() + ["sample-reference", "textbook-coherent"]
_PALETTE = ["#d62728", "#1f77b4", "#2ca02c", "#ff7f0e", "#9467bd", "#e377c2", "#17becf", "#bcbd22"]
PIPELINE_COLOURS = dict(zip(PIPELINES, _PALETTE))
PIPELINE_COLOURS.update({"sample-reference": "#7f7f7f", "textbook-coherent": "#8c564b"})
ENGINE_STYLES = {"cuda": "-", "cpu": "--"}
MARKERS = ["o", "s", "^", "D", "v", "P"]
# The stages with a CSV column (bench/schema.py reads src/core/stages.h), then drawing.
STAGES = [(c, "list build" if n == "list" else n) for c, n in schema.stage_columns()] + [("render_ms", "render")]
STAGE_COLOURS = ["#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#9467bd", "#1f77b4", "#ff7f0e", "#17becf"]


def number(row, column):
    """The cell as a float, None when empty or not a number."""
    text = (row.get(column) or "").strip()
    try:
        return float(text)
    except ValueError:
        return None


def load(paths):
    rows = []
    for path in paths:
        with open(path, newline="") as f:
            for row in csv.DictReader(f):
                row["_n"] = number(row, "n")
                row["_sps"] = number(row, "steps_per_s")
                if row["_n"] and row["_sps"]:
                    rows.append(row)
    return rows


def series_key(row):
    return (row.get("engine", ""), row.get("force", ""), row.get("scenario", ""), row.get("pipeline", ""))


def label_for(key, rows):
    """Pipeline name, plus whatever else varies across the rows being plotted."""
    engine, force, scenario, pipeline = key
    parts = [pipeline]
    if len({r["force"] for r in rows}) > 1 or len({r["scenario"] for r in rows}) > 1:
        parts.append(f"{force}/{scenario}")
    if len({r["engine"] for r in rows}) > 1:
        parts.append(engine)
    return ", ".join(parts)


def style_for(key, rows):
    engine, force, scenario, pipeline = key
    cases = sorted({(r["force"], r["scenario"]) for r in rows})
    marker = MARKERS[cases.index((force, scenario)) % len(MARKERS)]
    return dict(color=PIPELINE_COLOURS.get(pipeline, "black"), linestyle=ENGINE_STYLES.get(engine, ":"),
                marker=marker)


def device_title(rows):
    """The GPU name(s) of the rows, else the CPU's."""
    gpus = sorted({r["gpu"] for r in rows if r.get("engine") == "cuda" and r.get("gpu")})
    if not gpus:
        gpus = sorted({r["gpu"] for r in rows if r.get("gpu")})
    return " / ".join(gpus) if gpus else "unknown device"


def best_by(rows, key):
    """For each key(row), the row with the most steps/s (best block size / cell width)."""
    best = {}
    for r in rows:
        k = key(r)
        if k not in best or r["_sps"] > best[k]["_sps"]:
            best[k] = r
    return best


ENGINE_ORDER = {"cuda": 0, "cpu": 1}


def sort_keys(keys):
    """GPU before CPU, then force and scenario, then the pipelines in their natural order."""
    order = {p: i for i, p in enumerate(PIPELINES)}
    return sorted(keys, key=lambda k: (ENGINE_ORDER.get(k[0], 9), k[0], k[1], k[2], order.get(k[3], 99), k[3]))


def si_text(v):
    """1234 -> 1.23k, 7e8 -> 700M: tick labels that read at a glance."""
    for unit, scale in (("T", 1e12), ("G", 1e9), ("M", 1e6), ("k", 1e3)):
        if abs(v) >= scale:
            return f"{v / scale:.3g}{unit}"
    return f"{v:.3g}"


def label_log_axis(axis, lo, hi):
    """SI labels on a log axis; within a narrow range also at 2x and 5x, so it is never bare."""
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter
    axis.set_major_locator(LogLocator(base=10))
    axis.set_major_formatter(FuncFormatter(lambda v, _: si_text(v)))
    if lo > 0 and hi / lo < 300:
        axis.set_minor_locator(LogLocator(base=10, subs=(2, 5)))
        axis.set_minor_formatter(FuncFormatter(lambda v, _: si_text(v)))
    else:
        axis.set_minor_formatter(NullFormatter())


def label_count_axis(ax, ns):
    """Bodies axis (log): a tick at each measured N when there are few, else SI decades."""
    from matplotlib.ticker import NullFormatter, NullLocator
    ns = sorted(set(ns))
    if len(ns) <= 12:
        ax.xaxis.set_minor_locator(NullLocator())
        ax.xaxis.set_minor_formatter(NullFormatter())
        ax.set_xticks(ns)
        ax.set_xticklabels([count_text(n) for n in ns])
    else:
        label_log_axis(ax.xaxis, ns[0], ns[-1])


def count_text(n):
    n = int(n)
    if n >= 1_000_000 and n % 100_000 == 0:
        return f"{n / 1e6:g}M"
    if n >= 1000 and n % 1000 == 0:
        return f"{n // 1000}k"
    return str(n)


def save(plt, fig, path):
    fig.savefig(path, dpi=120, bbox_inches="tight")
    plt.close(fig)


def finish_line_plot(plt, fig, ax, path, legend_outside):
    """Grid, legend (right of the axes, or wherever it fits), save; returns None (plotted)."""
    ax.grid(True, which="both", alpha=0.3)
    if legend_outside:
        ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0)
    else:
        ax.legend(fontsize=8, loc="best")
    fig.tight_layout()
    save(plt, fig, path)
    return None


def log_log_by_n(plt, series, rows, ylabel):
    """A log-log figure of one line per series against N; returns (fig, ax, every y value)."""
    fig, ax = plt.subplots(figsize=(10, 5.5))
    for key in sort_keys(series):
        xs, ys = zip(*sorted(series[key]))
        ax.plot(xs, ys, label=label_for(key, rows), **style_for(key, rows))
    ax.set_xscale("log")
    ax.set_yscale("log")
    label_count_axis(ax, [n for pts in series.values() for n, _ in pts])
    ys = [y for pts in series.values() for _, y in pts]
    label_log_axis(ax.yaxis, min(ys), max(ys))
    ax.set_xlabel("bodies N")
    ax.set_ylabel(ylabel)
    return fig, ax, ys


def plot_steps_vs_n(plt, rows, path):
    best = best_by(rows, lambda r: series_key(r) + (r["_n"],))
    series = defaultdict(list)
    for (engine, force, scenario, pipeline, n), r in best.items():
        series[(engine, force, scenario, pipeline)].append((n, r["_sps"]))
    series = {k: sorted(v) for k, v in series.items() if len(v) >= 1}
    if not series:
        return "no rows with N and steps/s"
    fig, ax, ys = log_log_by_n(plt, series, rows, "simulation steps per second (1000 / median step ms)")
    per_point = defaultdict(int)
    for r in rows:
        per_point[series_key(r) + (r["_n"],)] += 1
    varied = max(per_point.values()) > 1
    ax.set_title("Steps per second against N" + (" (best block size and cell width per point)" if varied else "")
                 + f"\n{device_title(rows)}", fontsize=11)
    return finish_line_plot(plt, fig, ax, path, legend_outside=True)


def plot_ms_vs_n(plt, rows, path):
    rows = [r for r in rows if r.get("force") == "gravity"]
    if not rows:
        return "no gravity rows"
    best = best_by(rows, lambda r: series_key(r) + (r["_n"],))
    series = defaultdict(list)
    for (engine, force, scenario, pipeline, n), r in best.items():
        series[(engine, force, scenario, pipeline)].append((n, 1000.0 / r["_sps"]))
    if not series:
        return "no rows with N and steps/s"
    fig, ax, ys = log_log_by_n(plt, series, rows, "milliseconds per step (median)")
    # The winner at each N (among the series measured there), written above the point.
    by_n = defaultdict(list)
    for key, pts in series.items():
        for n, ms in pts:
            by_n[n].append((ms, label_for(key, rows)))
    top = max(ys) * 3
    for n, entries in sorted(by_n.items()):
        if len(entries) > 1:
            ax.annotate(min(entries)[1], (n, top), ha="center", va="bottom", fontsize=7, rotation=30)
    ax.set_ylim(min(ys) / 2, top * 6)
    ax.set_title(f"Gravity: time per step against N (lower is better; the fastest named above each N)\n{device_title(rows)}",
                 fontsize=11)
    return finish_line_plot(plt, fig, ax, path, legend_outside=True)


def plot_ms_vs_neighbours(plt, rows, path):
    """Time per step against the mean neighbours per boid, for each N whose rows of one pipeline
    span three or more worlds (a density sweep); the N with the most such rows."""
    swept = defaultdict(set)
    for r in rows:
        k = number(r, "neighbours_mean")
        if r.get("force") == "boids" and k:
            swept[(r["_n"], r.get("engine", ""), r.get("pipeline", ""))].add(k)
    ns = defaultdict(int)
    for (n, _, _), ks in swept.items():
        if len(ks) >= 3:
            ns[n] += 1
    if not ns:
        return "no density sweep (one N, three or more worlds of boids)"
    n = max(ns, key=lambda m: (ns[m], m))
    rows = [r for r in rows if r["_n"] == n and r.get("force") == "boids" and number(r, "neighbours_mean")
            and len(swept[(n, r.get("engine", ""), r.get("pipeline", ""))]) >= 3]
    best = best_by(rows, lambda r: (r.get("engine", ""), r.get("force", ""), "", r.get("pipeline", ""),
                                    number(r, "neighbours_mean")))
    series = defaultdict(list)
    for (engine, force, _, pipeline, k), r in best.items():
        series[(engine, force, "", pipeline)].append((k, 1000.0 / r["_sps"]))
    fig, ax = plt.subplots(figsize=(10, 5.5))
    for key in sort_keys(series):
        xs, ys = zip(*sorted(series[key]))
        ax.plot(xs, ys, label=key[3] + ("" if len({k[0] for k in series}) == 1 else f", {key[0]}"),
                color=PIPELINE_COLOURS.get(key[3], "black"), linestyle=ENGINE_STYLES.get(key[0], ":"), marker="o")
    ks = sorted({k for pts in series.values() for k, _ in pts})
    ys = [y for pts in series.values() for _, y in pts]
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xticks(ks)
    ax.set_xticklabels([f"{k:.0f}" for k in ks])
    ax.xaxis.set_minor_formatter(plt.NullFormatter())
    label_log_axis(ax.yaxis, min(ys), max(ys))
    top = max(ys) * 1.6
    for k in ks:
        entries = [(ms, key[3]) for key, pts in series.items() for kk, ms in pts if kk == k]
        if len(entries) > 1:
            ax.annotate(min(entries)[1], (k, top), ha="center", va="bottom", fontsize=8)
    ax.set_ylim(min(ys) / 1.5, top * 1.8)
    ax.set_xlabel("mean neighbours per boid within the largest rule radius")
    ax.set_ylabel("milliseconds per step (median)")
    ax.set_title(f"Time per step against neighbours per boid, N = {count_text(n)} (lower is better; the fastest "
                 f"named above)\n{device_title(rows)}", fontsize=11)
    return finish_line_plot(plt, fig, ax, path, legend_outside=True)


def plot_steps_vs_block_size(plt, rows, path):
    rows = [r for r in rows if number(r, "block_size")]
    # Per series, the largest N that was measured with more than one block size.
    sizes = defaultdict(lambda: defaultdict(set))
    for r in rows:
        sizes[series_key(r)][r["_n"]].add(number(r, "block_size"))
    chosen = {}
    for key, per_n in sizes.items():
        ns = [n for n, bs in per_n.items() if len(bs) > 1]
        if ns:
            chosen[key] = max(ns)
    if not chosen:
        return "no series measured with more than one block size"
    picked = [r for r in rows if chosen.get(series_key(r)) == r["_n"]]
    best = best_by(picked, lambda r: series_key(r) + (number(r, "block_size"),))
    series = defaultdict(list)
    for (engine, force, scenario, pipeline, bs), r in best.items():
        series[(engine, force, scenario, pipeline)].append((bs, r["_sps"]))
    fig, ax = plt.subplots(figsize=(10, 5.5))
    ticks = set()
    for key in sort_keys(series):
        pts = sorted(series[key])
        xs, ys = zip(*pts)
        ticks.update(xs)
        ax.plot(xs, ys, label=f"{label_for(key, picked)} (N={count_text(chosen[key])})", **style_for(key, picked))
    ax.set_xscale("log", base=2)
    ax.set_xticks(sorted(ticks))
    ax.set_xticklabels([str(int(t)) for t in sorted(ticks)])
    ax.minorticks_off()
    ax.set_yscale("log")
    ys = [y for pts in series.values() for _, y in pts]
    label_log_axis(ax.yaxis, min(ys), max(ys))
    ax.set_xlabel("CUDA block size (threads per block)")
    ax.set_ylabel("simulation steps per second")
    ax.set_title(f"Steps per second against block size at the largest N\n{device_title(picked)}", fontsize=11)
    return finish_line_plot(plt, fig, ax, path, legend_outside=True)


def plot_stages(plt, rows, path, n_wanted):
    rows = [r for r in rows if any(number(r, c) is not None for c, _ in STAGES)]
    if not rows:
        return "no per-stage times"
    per_n = defaultdict(set)
    for r in rows:
        per_n[r["_n"]].add(series_key(r))
    if n_wanted is not None:
        if n_wanted not in per_n:
            have = ", ".join(count_text(n) for n in sorted(per_n))
            return f"no per-stage times at N={count_text(n_wanted)} (have {have})"
        n = n_wanted
    else:
        n = max(per_n, key=lambda k: (len(per_n[k]), k))
    at_n = [r for r in rows if r["_n"] == n]
    best = best_by(at_n, series_key)
    panels = defaultdict(list)  # (engine, force, scenario) -> rows, one per pipeline
    for key in sort_keys(best):
        panels[key[:3]].append(best[key])
    # Top row: milliseconds, so pipelines compare; bottom row: shares of the step, so that the
    # make-up of a fast pipeline stays visible next to a slow one.
    fig, axes = plt.subplots(2, len(panels), figsize=(4.2 * len(panels) + 0.8, 8.0), squeeze=False,
                             gridspec_kw={"height_ratios": [3, 2]})
    for col, (panel, prow) in enumerate(panels.items()):
        top, bottom_ax = axes[0][col], axes[1][col]
        xs = list(range(len(prow)))
        totals = [sum(number(r, c) or 0.0 for c, _ in STAGES) for r in prow]
        base_ms = [0.0] * len(prow)
        base_share = [0.0] * len(prow)
        for (column, name), colour in zip(STAGES, STAGE_COLOURS):
            heights = [number(r, column) or 0.0 for r in prow]
            if not any(heights):
                continue
            top.bar(xs, heights, bottom=base_ms, color=colour, label=name, width=0.6)
            shares = [100.0 * h / t if t > 0 else 0.0 for h, t in zip(heights, totals)]
            bottom_ax.bar(xs, shares, bottom=base_share, color=colour, width=0.6)
            base_ms = [b + h for b, h in zip(base_ms, heights)]
            base_share = [b + h for b, h in zip(base_share, shares)]
        medians = [number(r, "sim_ms_median") or 0.0 for r in prow]
        top.scatter(xs, medians, marker="_", s=900, color="black", linewidths=2, zorder=3,
                    label="step (median, wall clock)")
        for x, t, m in zip(xs, totals, medians):
            top.annotate(f"{max(t, m):.3g} ms", (x, max(t, m)), textcoords="offset points", xytext=(0, 4),
                         ha="center", fontsize=8)
        top.set_ylim(0, max(max(totals), max(medians)) * 1.12)
        devices = " / ".join(sorted({r["gpu"] for r in prow if r.get("gpu")})) or panel[0]
        top.set_title(f"{panel[1]}/{panel[2]}, {panel[0]}\n{devices}", fontsize=10)
        top.set_ylabel("milliseconds per step")
        bottom_ax.set_ylabel("share of the stage sum (%)")
        bottom_ax.set_ylim(0, 100)
        for ax in (top, bottom_ax):
            ax.set_xticks(xs)
            ax.set_xticklabels([r["pipeline"] for r in prow])
            ax.grid(True, axis="y", alpha=0.3)
    handles, labels = [], []
    for ax in axes[0]:
        for h, l in zip(*ax.get_legend_handles_labels()):
            if l not in labels:
                handles.append(h)
                labels.append(l)
    fig.legend(handles, labels, loc="lower center", ncol=min(len(labels), 8), fontsize=8)
    fig.suptitle(f"Per-stage time at N={count_text(n)} (mean over the timed steps)\n{device_title(at_n)}",
                 fontsize=11)
    fig.tight_layout(rect=(0, 0.05, 1, 1))
    save(plt, fig, path)
    return None


def plot_gravity(plt, rows, path):
    rows = [r for r in rows if r.get("force") == "gravity" and number(r, "interactions_per_s")]
    if not rows:
        return "no gravity rows"
    best = best_by(rows, lambda r: series_key(r) + (r["_n"],))
    series = defaultdict(list)
    for (engine, force, scenario, pipeline, n), r in best.items():
        series[(engine, force, scenario, pipeline)].append((n, number(r, "interactions_per_s")))
    fig, ax, ys = log_log_by_n(plt, series, rows, "interactions per second (N² / median step time)")
    right = ax.secondary_yaxis("right", functions=(lambda x: x * 20 / 1e9, lambda g: g * 1e9 / 20))
    label_log_axis(right.yaxis, min(ys) * 20 / 1e9, max(ys) * 20 / 1e9)
    right.set_ylabel("GFLOP/s (20 flops per interaction)")
    ax.set_title(f"Gravity throughput (grid pipelines: effective, all-pairs equivalent)\n{device_title(rows)}",
                 fontsize=11)
    # Legend inside the axes: the right-hand axis holds the GFLOP/s labels.
    return finish_line_plot(plt, fig, ax, path, legend_outside=False)


def rendered_rows(rows):
    """The rows that drew a frame per step: a frame rate beside the step rate."""
    return [r for r in rows if number(r, "frame_fps")]


def two_rate_axes(plt, title):
    """Side by side: frame rate (left), step rate (right)."""
    fig, axes = plt.subplots(1, 2, figsize=(13, 5.2))
    fig.suptitle(title, fontsize=11)
    return fig, axes


RATES = (("frame_fps", "frames per second (step + draw)"), ("_sps", "simulation steps per second"))


def finish_two(plt, fig, axes, path):
    for ax in axes:
        ax.grid(True, which="both", alpha=0.3)
    axes[1].legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0)
    fig.tight_layout()
    save(plt, fig, path)
    return None


def rate(row, column):
    return row["_sps"] if column == "_sps" else number(row, column)


def plot_fps_vs_n(plt, rows, path, block):
    rows = rendered_rows(rows)
    if not rows:
        return "no rendered rows (murmur bench --render writes frame_fps)"
    if block is not None:
        rows = [r for r in rows if number(r, "block_size") == block]
        if not rows:
            return f"no rendered rows at block size {block:g}"
    # One row per point: at the chosen block size, or the one with the best frame rate.
    best = {}
    for r in rows:
        k = series_key(r) + (r["_n"],)
        if k not in best or number(r, "frame_fps") > number(best[k], "frame_fps"):
            best[k] = r
    fig, axes = two_rate_axes(plt, "Frame rate and step rate against N"
                              + (f" (block size {block:g})" if block is not None else
                                 (" (best block size per point)" if any(number(r, "block_size") for r in rows) else ""))
                              + f"\n{device_title(rows)}")
    ns = sorted({r["_n"] for r in best.values()})
    for ax, (column, ylabel) in zip(axes, RATES):
        series = defaultdict(list)
        for k, r in best.items():
            series[k[:4]].append((k[4], rate(r, column)))
        ys = []
        for key in sort_keys(series):
            xs, vs = zip(*sorted(series[key]))
            ys.extend(vs)
            ax.plot(xs, vs, label=label_for(key, rows), **style_for(key, rows))
        ax.set_xscale("log")
        ax.set_yscale("log")
        label_count_axis(ax, ns)
        label_log_axis(ax.yaxis, min(ys), max(ys))
        ax.set_xlabel("bodies N")
        ax.set_ylabel(ylabel)
    return finish_two(plt, fig, axes, path)


def plot_fps_vs_block(plt, rows, path, n_wanted):
    rows = [r for r in rendered_rows(rows) if number(r, "block_size")]
    if not rows:
        return "no rendered rows with a block size (the CUDA engine's, murmur bench --render)"
    blocks_at = defaultdict(set)
    for r in rows:
        blocks_at[r["_n"]].add(number(r, "block_size"))
    if n_wanted is not None:
        if len(blocks_at.get(n_wanted, ())) < 2:
            return f"no rendered rows at N={count_text(n_wanted)} with more than one block size"
        n = n_wanted
    else:
        ns = [k for k, b in blocks_at.items() if len(b) > 1]
        if not ns:
            return "no rendered rows measured with more than one block size"
        n = max(ns)
    at_n = [r for r in rows if r["_n"] == n]
    best = {}
    for r in at_n:
        k = series_key(r) + (number(r, "block_size"),)
        if k not in best or number(r, "frame_fps") > number(best[k], "frame_fps"):
            best[k] = r
    fig, axes = two_rate_axes(plt, f"Frame rate and step rate against block size at N={count_text(n)}\n"
                              f"{device_title(at_n)}")
    blocks = sorted(blocks_at[n])
    for ax, (column, ylabel) in zip(axes, RATES):
        series = defaultdict(list)
        for k, r in best.items():
            series[k[:4]].append((k[4], rate(r, column)))
        ys = []
        for key in sort_keys(series):
            xs, vs = zip(*sorted(series[key]))
            ys.extend(vs)
            ax.plot(xs, vs, label=label_for(key, at_n), **style_for(key, at_n))
        ax.set_xscale("log", base=2)
        ax.set_xticks(blocks)
        ax.set_xticklabels([str(int(b)) for b in blocks])
        ax.minorticks_off()
        ax.set_yscale("log")
        label_log_axis(ax.yaxis, min(ys), max(ys))
        ax.set_xlabel("CUDA block size (threads per block)")
        ax.set_ylabel(ylabel)
    return finish_two(plt, fig, axes, path)


def parse_count(text):
    text = text.strip()
    mult = 1
    if text[-1:] in ("k", "K"):
        mult, text = 1000, text[:-1]
    elif text[-1:] == "M":
        mult, text = 1_000_000, text[:-1]
    return float(int(text) * mult)


def main(argv=None):
    ap = argparse.ArgumentParser(description="Plots `murmur bench` CSV files as PNG images.")
    ap.add_argument("csv", nargs="+", help="CSV file(s) written by murmur bench")
    ap.add_argument("--out", default=".", help="output folder (created if missing)")
    ap.add_argument("--prefix", help="file name prefix (default: the first CSV's name without .csv)")
    ap.add_argument("--n", type=parse_count, help="N of the per-stage plot, e.g. 1M (default: see above)")
    ap.add_argument("--block-size", type=float, help="block size of fps_vs_n (default: the best per point)")
    ap.add_argument("--fps-n", type=parse_count, help="N of fps_vs_block, e.g. 1M (default: see above)")
    args = ap.parse_args(argv)
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        # Debian's python3-matplotlib belongs to /usr/bin/python3; another python3 first on PATH
        # (pyenv, a venv) does not see it, so hand over to the system interpreter once.
        system = "/usr/bin/python3"
        if os.path.exists(system) and os.path.realpath(sys.executable) != os.path.realpath(system) \
                and not os.environ.get("MURMUR_PLOT_REEXEC"):
            os.environ["MURMUR_PLOT_REEXEC"] = "1"
            os.execv(system, [system, os.path.abspath(__file__)] + list(argv if argv is not None else sys.argv[1:]))
        print("plot.py: needs matplotlib (Debian/Ubuntu: apt install python3-matplotlib)", file=sys.stderr)
        return 3
    try:
        rows = load(args.csv)
    except OSError as e:
        print(f"plot.py: {e}", file=sys.stderr)
        return 2
    if not rows:
        print("plot.py: no measured rows in " + ", ".join(args.csv), file=sys.stderr)
        return 1
    prefix = args.prefix if args.prefix is not None else os.path.splitext(os.path.basename(args.csv[0]))[0]
    os.makedirs(args.out, exist_ok=True)
    plots = [("steps_vs_n", lambda p: plot_steps_vs_n(plt, rows, p)),
             ("steps_vs_block_size", lambda p: plot_steps_vs_block_size(plt, rows, p)),
             ("stages", lambda p: plot_stages(plt, rows, p, args.n)),
             ("gravity_ms_vs_n", lambda p: plot_ms_vs_n(plt, rows, p)),
             ("gravity_interactions", lambda p: plot_gravity(plt, rows, p)),
             ("fps_vs_n", lambda p: plot_fps_vs_n(plt, rows, p, args.block_size)),
             ("fps_vs_block", lambda p: plot_fps_vs_block(plt, rows, p, args.fps_n)),
             ("ms_vs_neighbours", lambda p: plot_ms_vs_neighbours(plt, rows, p))]
    wrote = 0
    for name, draw in plots:
        path = os.path.join(args.out, f"{prefix}_{name}.png" if prefix else f"{name}.png")
        why = draw(path)
        if why:
            print(f"skipped {name}: {why}")
        else:
            print(path)
            wrote += 1
    return 0 if wrote else 1


if __name__ == "__main__":
    sys.exit(main())
