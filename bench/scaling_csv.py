#!/usr/bin/env python3
"""Turns the log of bench/run-scaling.sh into tidy CSV rows and a plot.

    python3 bench/scaling_csv.py scaling.log --csv scaling.csv --png images/scaling.png \
        --gpu "NVIDIA H200" --sha abc1234

Columns: those of docs/design.md#the-benchmark-csv-schema that a headless run reports (empty where it does not:
min/p90, frame rate, render), ranks, then the communication columns: comm_ms (rank 0's mean time
per step between two local steps: for boids choosing the halo and migrants, packing them and the
exchange; for gravity the position gathers), moved_mb_per_step (bulk bytes all ranks sent per step: halos and
migrants for boids, the position gathers for gravity), halo_bodies_per_step, imbalance (bodies on
the fullest rank / mean), scaling (strong or weak) with speedup (one GPU's ms per step / this
row's, at the same N for strong scaling and at the same N per GPU for weak scaling), and the start-up
in seconds: making the bodies on the host (every rank makes them all) and the engine taking them.
"""
import argparse
import csv
import re
import sys

sys.path.insert(0, __import__("os").path.dirname(__import__("os").path.abspath(__file__)))

import schema  # noqa: E402  (bench/schema.py: the tables, read from the C++ sources)

# The bench CSV's columns up to gflops (what a headless run reports), then the scaling columns.
_BENCH = schema.bench_columns()
COLUMNS = _BENCH[:_BENCH.index("gflops") + 1] + ["ranks", "comm_ms", "moved_mb_per_step", "halo_bodies_per_step",
                                                 "imbalance", "scaling", "speedup", "startup_scenario_s",
                                                 "startup_engine_s"]


def fields(line):
    return dict(kv.split("=", 1) for kv in line.split() if "=" in kv)


def parse(path):
    runs, cur = [], None
    with open(path) as f:
        for line in f:
            line = line.strip()
            if line.startswith("### config="):
                head = fields(line[4:].split(" args=")[0])
                args = line.split(" args=", 1)[1].split()
                cur = {"config": head["config"], "ranks": int(head["ranks"]), "args": args}
                runs.append(cur)
            elif cur is None:
                continue
            elif line.startswith("### rc="):
                cur.update({"rc": int(fields(line[4:])["rc"])})
            elif line.startswith("engine="):
                cur["summary"] = fields(line)
            elif line.startswith("ranks="):
                cur["dist"] = fields(line)
            elif line.startswith("stages_ms_mean"):
                cur["stages"] = fields(line)
            elif line.startswith("startup_s"):
                cur["startup"] = fields(line)
    return runs


def arg(args, name):
    return args[args.index(name) + 1] if name in args else ""


def rows_of(runs, gpu, sha, timestamp):
    out = []
    for r in runs:
        s = r.get("summary")
        if not s:
            print(f"skipped {r['config']} ranks={r['ranks']}: no summary line (rc={r.get('rc')})", file=sys.stderr)
            continue
        st, d = r.get("stages", {}), r.get("dist", {})
        n, ms = int(s["n"]), float(s["ms_per_step"])
        row = {c: "" for c in COLUMNS}
        row.update({"timestamp": timestamp, "git_sha": sha, "gpu": gpu, "engine": s["engine"], "force": s["force"],
                    "pipeline": s["pipeline"], "scenario": s["scenario"], "n": n, "block_size": "" if s["block"] == "-" else s["block"],
                    "cell_width_factor": "" if s["cell_width"] == "-" else s["cell_width"],
                    "render": 1 if "render_ms" in s else 0, "render_ms": s.get("render_ms", ""),
                    "frame_fps": "" if s.get("fps", "-") == "-" else s["fps"],
                    "warmup_steps": arg(r["args"], "--warmup"), "steps": s["steps"], "sim_ms_median": ms,
                    "steps_per_s": round(1000.0 / ms, 4), "ranks": r["ranks"],
                    "comm_ms": st.get("comm", "0") if r["ranks"] > 1 else 0,
                    "moved_mb_per_step": d.get("moved_mb_per_step", 0),
                    "halo_bodies_per_step": d.get("halo_bodies_per_step", ""),
                    "imbalance": d.get("imbalance", ""), "scaling": r["config"].split("-")[-1],
                    "startup_scenario_s": r.get("startup", {}).get("scenario", ""),
                    "startup_engine_s": r.get("startup", {}).get("engine", "")})
        for k, column in schema.stages():
            if column in _BENCH[:_BENCH.index("gflops") + 1]:  # comm_ms is set above, per rank count
                row[column] = st.get(k, "")
        if s["force"] == "gravity":
            ips = n * n * 1000.0 / ms
            row["interactions_per_s"] = f"{ips:.4g}"
            row["gflops"] = f"{20 * ips / 1e9:.1f}"
        out.append(row)
    # Speedup against the one-GPU row: same N (strong), same N per GPU (weak).
    for row in out:
        per_gpu = row["n"] / row["ranks"] if row["scaling"] == "weak" else row["n"]
        base = [b for b in out if b["ranks"] == 1 and b["force"] == row["force"] and b["pipeline"] == row["pipeline"]
                and b["n"] == per_gpu and b["render"] == row["render"]]
        if base:
            row["speedup"] = round(base[0]["sim_ms_median"] / row["sim_ms_median"], 3)
    return out


def plot(rows, path):
    """Speedup over one GPU per multi-GPU row (weak rows: one GPU's time at the same N per GPU over
    this row's, 1 = perfect weak scaling for boids), with the communication share of the step."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    multi = [dict(r) for r in rows if r["ranks"] > 1 and r["speedup"] not in ("", None)]
    # A weak pair measured as a one-GPU row at N plus a strong row at K N on K GPUs.
    for one in [r for r in rows if r["ranks"] == 1 and r["scaling"] == "weak"]:
        for r in rows:
            same = r["force"] == one["force"] and r["pipeline"] == one["pipeline"]
            if r["ranks"] > 1 and same and r["n"] == one["n"] * r["ranks"] and \
                    not any(m["scaling"] == "weak" and m["n"] == r["n"] and m["force"] == r["force"] and
                            m["pipeline"] == r["pipeline"] for m in multi):
                multi.append(dict(r, scaling="weak", speedup=round(one["sim_ms_median"] / r["sim_ms_median"], 3)))
    multi.sort(key=lambda r: (r["force"] != "gravity", r["pipeline"], r["scaling"] != "strong", r["n"], r["ranks"]))
    fig, ax = plt.subplots(figsize=(max(9, 1.55 * len(multi)), 5.2))
    palette = ["#1f77b4", "#2ca02c", "#d62728", "#9467bd", "#8c564b"]
    series = sorted({(r["force"], r["pipeline"]) for r in multi}, key=lambda fp: (fp[0] != "gravity", fp[1]))
    colours = {fp: palette[i % len(palette)] for i, fp in enumerate(series)}
    for i, r in enumerate(multi):
        ms, comm = r["sim_ms_median"], float(r["comm_ms"] or 0)
        ax.bar(i, r["speedup"], color=colours[(r["force"], r["pipeline"])], alpha=0.55 if r["scaling"] == "weak" else 1.0)
        per_gpu = r["n"] / r["ranks"] if r["scaling"] == "weak" else r["n"]
        one_ms = next(b["sim_ms_median"] for b in rows if b["ranks"] == 1 and b["force"] == r["force"] and
                      b["pipeline"] == r["pipeline"] and b["n"] == per_gpu and b["render"] == r["render"])
        one_gpu = f"1 GPU {one_ms:.4g} ms" + (f" ({per_gpu / 1e6:g}M)" if r["scaling"] == "weak" else "") + "\n"
        text = f"{r['speedup']:.2f}x\n" + one_gpu + \
            f"{r['ranks']} GPUs {ms:.4g} ms\n(comm {comm:.2g} ms)"
        if r["speedup"] >= 1.5:  # inside the bar
            ax.text(i, r["speedup"] - 0.05, text, ha="center", va="top", fontsize=7.5, color="white", fontweight="bold")
        else:  # a short bar: above it
            ax.text(i, r["speedup"] + 0.05, text, ha="center", va="bottom", fontsize=7.5, color="#222222")
    ax.set_xticks(range(len(multi)))
    # All pairs is O(N^2): with N per GPU fixed each GPU does K times the work, so 1/K is ideal.
    # The tree's walk is O(N log N): a little under 1.
    ideal = {("naive", "weak"): "\n(ideal 1/K: N\u00b2 work)", ("tree", "weak"): "\n(ideal ~1: N log N work)",
             ("rows", "weak"): "\n(ideal 1)", ("coherent", "weak"): "\n(ideal 1)"}
    ax.set_xticklabels([f"{r['force']} {r['pipeline']}\n{r['scaling']}" + (", drawn 1080p" if r["render"] else "") +
                        f"\nN={r['n'] / 1e6:g}M on {r['ranks']} GPUs" +
                        ideal.get((r["pipeline"], r["scaling"]), "") for r in multi], fontsize=7.5)
    for k in sorted({r["ranks"] for r in multi}):
        ax.axhline(k, color="#777777", ls="--", lw=1)
        ax.text(len(multi) - 0.5, k, f" ideal strong scaling on {k} GPUs", fontsize=7, va="bottom", ha="right",
                color="#555555")
    ax.set_ylim(0, max([2.3] + [r["speedup"] + 0.3 for r in multi] + [r["ranks"] + 0.5 for r in multi]))
    ax.set_ylabel("speedup over one GPU of the same pipeline")
    gpu = rows[0]["gpu"] if rows else ""
    kinds = {r["scaling"] for r in multi}
    what = " and ".join(k for k in ("strong scaling (same N)", "weak scaling (same N per GPU)") if k.split()[0] in kinds)
    ax.set_title(f"{what[0].upper() + what[1:]}, {gpu}", fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    print(path)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("log")
    ap.add_argument("--csv", required=True)
    ap.add_argument("--png")
    ap.add_argument("--gpu", default="")
    ap.add_argument("--sha", default="")
    ap.add_argument("--timestamp", default="")
    a = ap.parse_args()
    rows = rows_of(parse(a.log), a.gpu, a.sha, a.timestamp)
    with open(a.csv, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=COLUMNS, lineterminator="\n")
        w.writeheader()
        w.writerows(rows)
    print(a.csv)
    for r in rows:
        print(f"{r['force']:8s} {r['pipeline']:9s} {r['scaling']:6s} n={r['n']:>10} ranks={r['ranks']} ms={r['sim_ms_median']:.3f} "
              f"comm={r['comm_ms']} speedup={r['speedup']}")
    if a.png and rows:
        plot(rows, a.png)


if __name__ == "__main__":
    main()
