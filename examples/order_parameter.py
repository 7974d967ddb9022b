"""How a flock forms: the order parameter (polarization) |sum of unit velocities| / N over time.

    python examples/order_parameter.py --n 20000 --steps 600 --engine cpu --out order.png

0 is a gas of boids flying every which way, 1 is every boid flying the same way.
"""
import argparse

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

import murmuration as mm  # noqa: E402


def polarization(v: np.ndarray) -> float:
    unit = v / np.maximum(np.linalg.norm(v, axis=1, keepdims=True), 1e-12)
    return float(np.linalg.norm(unit.sum(axis=0)) / len(v))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=20000)
    ap.add_argument("--steps", type=int, default=600)
    ap.add_argument("--engine", default=None, help="cpu or cuda (default: cuda when present)")
    ap.add_argument("--every", type=int, default=5, help="steps between two samples")
    ap.add_argument("--out", default="order.png")
    a = ap.parse_args()

    sim = mm.Simulation(n=a.n, force="boids", scenario="dense", engine=a.engine, seed=1)
    steps, phi = [0], [polarization(sim.velocities)]
    while sim.step_count < a.steps:
        sim.step(min(a.every, a.steps - sim.step_count))
        steps.append(sim.step_count)
        phi.append(polarization(sim.velocities))

    fig, ax = plt.subplots(figsize=(7, 4), dpi=120)
    ax.plot(steps, phi, color="#2a6f97", lw=2)
    ax.set_xlabel("step")
    ax.set_ylabel(r"polarization $|\sum_i \hat v_i| / N$")
    ax.set_ylim(0, 1)
    ax.set_title(f"A flock forming: {sim.n} boids, {sim.pipeline} pipeline, {sim.engine} engine")
    ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(a.out)
    print(f"polarization {phi[0]:.3f} -> {phi[-1]:.3f} over {sim.step_count} steps; wrote {a.out}")


if __name__ == "__main__":
    main()
