"""How a flock forms: the order parameter (polarization) |sum of unit velocities| / N over time.

    python examples/order_parameter.py --n 20000 --steps 600 --engine cpu --out order.png

0 is a gas of boids flying every which way, 1 is every boid flying the same way. The samples are
the engine's own observables (sim.run with observe_every), as the command line's --observables
writes them.
"""
import argparse

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

import murmuration as mm  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=20000)
    ap.add_argument("--steps", type=int, default=600)
    ap.add_argument("--engine", default=None, help="cpu or cuda (default: cuda when present)")
    ap.add_argument("--every", type=int, default=5, help="steps between two samples")
    ap.add_argument("--out", default="order.png")
    a = ap.parse_args()

    sim = mm.Simulation(rule=mm.rules.Cis565(), scenario=mm.Scenario.dense(a.n), engine=a.engine, seed=1)
    table = sim.run(a.steps, observe_every=a.every, observe_first=True, as_frame=False)
    steps, phi = table["step"], table["polarization"]

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
