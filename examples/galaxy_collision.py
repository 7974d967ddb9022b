"""Two disk galaxies collide: frames of the run as PNG files.

    python examples/galaxy_collision.py --n 20000 --steps 2000 --frames 40 --engine cuda --out frames

Frames come from the offscreen renderer (sim.render); where no OpenGL context can be made they
are scatter plots of the positions instead.
"""
import argparse
import os

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

import murmuration as mm  # noqa: E402


def scatter_frame(sim: mm.Simulation, path: str, extent: float) -> None:
    p = sim.positions
    fig, ax = plt.subplots(figsize=(6, 6), dpi=100, facecolor="black")
    ax.scatter(p[:, 0], p[:, 1], s=0.3, c="white", alpha=0.5, linewidths=0)
    ax.set_xlim(-extent, extent)
    ax.set_ylim(-extent, extent)
    ax.set_aspect("equal")
    ax.axis("off")
    ax.set_title(f"step {sim.step_count}", color="white")
    fig.savefig(path, facecolor="black")
    plt.close(fig)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=20000)
    ap.add_argument("--steps", type=int, default=2000)
    ap.add_argument("--frames", type=int, default=40)
    ap.add_argument("--engine", default=None, help="cpu or cuda (default: cuda when present)")
    ap.add_argument("--out", default="frames", help="folder for frame_0000.png ...")
    a = ap.parse_args()

    os.makedirs(a.out, exist_ok=True)
    sim = mm.Simulation(n=a.n, force="gravity", scenario="galaxies", pipeline="tree", engine=a.engine, seed=1)
    use_gl = True
    per_frame = max(1, a.steps // max(1, a.frames))
    for frame in range(a.frames):
        path = os.path.join(a.out, f"frame_{frame:04d}.png")
        if use_gl:
            try:
                plt.imsave(path, sim.render(width=640, height=480, draw="sprites"))
            except RuntimeError as e:
                print(f"no offscreen rendering ({e}): scatter plots instead")
                use_gl = False
        if not use_gl:
            scatter_frame(sim, path, extent=30.0)
        if sim.step_count >= a.steps:
            break
        sim.step(min(per_frame, a.steps - sim.step_count))
    print(f"{sim.step_count} steps of {sim.n} bodies; wrote {frame + 1} frames to {a.out}/")


if __name__ == "__main__":
    main()
