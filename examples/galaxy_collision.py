"""Two disk galaxies collide: frames of the run as PNG files.

    python examples/galaxy_collision.py --n 20000 --steps 2000 --frames 40 --engine cuda --out frames

Frames come from the offscreen renderer (sim.animate); where no OpenGL context can be made they
are scatter plots of snapshots instead. The energy drift of the run is printed at the end.
"""
import argparse
import os

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

import murmuration as mm  # noqa: E402


def scatter_frame(snap: mm.Snapshot, path: str, extent: float) -> None:
    p = snap.positions
    fig, ax = plt.subplots(figsize=(6, 6), dpi=100, facecolor="black")
    ax.scatter(p[:, 0], p[:, 1], s=0.3, c="white", alpha=0.5, linewidths=0)
    ax.set_xlim(-extent, extent)
    ax.set_ylim(-extent, extent)
    ax.set_aspect("equal")
    ax.axis("off")
    ax.set_title(f"step {snap.step}", color="white")
    fig.savefig(path, facecolor="black")
    plt.close(fig)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=20000)
    ap.add_argument("--steps", type=int, default=2000)
    ap.add_argument("--frames", type=int, default=40)
    ap.add_argument("--engine", default=None, help="cpu or cuda (default: cuda when present)")
    ap.add_argument("--out", default="frames", help="folder for frame_00000.png ...")
    a = ap.parse_args()

    os.makedirs(a.out, exist_ok=True)
    sim = mm.Simulation(rule=mm.rules.Gravity(), scenario=mm.Scenario.galaxies(a.n), pipeline="tree",
                        engine=a.engine, seed=1)
    first = sim.observe()
    every = max(1, a.steps // max(1, a.frames))
    try:
        written = len(sim.animate(a.steps, every=every, width=640, height=480, draw="sprites").save(a.out))
    except RuntimeError as e:
        print(f"no offscreen rendering ({e}): scatter plots instead")
        written = 0
        while True:
            scatter_frame(sim.snapshot(), os.path.join(a.out, f"frame_{written:05d}.png"), extent=30.0)
            written += 1
            if sim.step_count >= a.steps:
                break
            sim.step(min(every, a.steps - sim.step_count))
    last = sim.observe()
    print(f"{sim.step_count} steps of {sim.n} bodies; wrote {written} frames to {a.out}/; "
          f"energy {first.total_energy:.6g} -> {last.total_energy:.6g} (drift {last.energy_drift:.2e})")


if __name__ == "__main__":
    main()
