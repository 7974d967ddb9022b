"""Zero copy on the GPU, shown: run by python/gpu_check.sh on a machine with a CUDA device.

Prints that the CuPy array's data pointer is the engine's id-ordered buffer, that a write through
CuPy changes the next step, that torch.from_dlpack sees the same memory, what a Python call
of sim.step(1) costs against the engine's own time per step at 100k boids, and what one
sim.snapshot() and one sim.positions read cost at 1M boids (the snapshot's target: 3 ms on an H200).
"""
import time

import numpy as np

import murmuration as mm


def main() -> None:
    if not mm.cuda_available():
        raise SystemExit("zero_copy_demo: no CUDA engine or device here")
    n = 100_000
    sim = mm.Simulation(rule=mm.rules.Cis565(), scenario=mm.Scenario.dense(n), pipeline="rows", engine="cuda", seed=1)
    twin = mm.Simulation(rule=mm.rules.Cis565(), scenario=mm.Scenario.dense(n), pipeline="rows", engine="cuda", seed=1)
    print(f"device: {sim.device}; {n} boids, pipeline {sim.pipeline}")
    sim.step(10)
    twin.step(10)

    try:
        import cupy as cp
    except ImportError:
        cp = None
        print("cupy: not importable, skipped")
    if cp is not None:
        d = sim.device_positions()
        c = cp.asarray(d)
        print(f"cupy data pointer 0x{c.data.ptr:x} == engine buffer 0x{d.ptr:x}: {c.data.ptr == d.ptr}")
        print(f"cupy array equals sim.positions (id order): {np.array_equal(cp.asnumpy(c), sim.positions)}")
        v = sim.device_velocities("cupy")
        v *= -1  # every boid turns round, written on the GPU
        sim.step(1)
        twin.step(1)
        moved = float(np.abs(sim.positions - twin.positions).max())
        print(f"write through cupy changes the next step: max |pos - twin's pos| = {moved:.4g} ({moved > 0})")

    try:
        import torch
    except ImportError:
        torch = None
        print("torch: not importable, skipped")
    if torch is not None:
        d = sim.device_positions()
        t = torch.from_dlpack(d)
        print(f"torch data pointer 0x{t.data_ptr():x} == engine buffer 0x{d.ptr:x}: {t.data_ptr() == d.ptr}")
        if cp is not None:
            c = cp.asarray(d)
            t[0, 0] = 12.5
            torch.cuda.synchronize()
            print(f"torch write seen by cupy on the same memory: {float(c[0, 0]) == 12.5}")

    sim.step(20)
    sim.synchronize()  # steps are queued: every timing below waits for its own
    k = 500
    t0 = time.perf_counter()
    sim.step(k)
    sim.synchronize()
    engine_ms = (time.perf_counter() - t0) * 1e3 / k
    t0 = time.perf_counter()
    for _ in range(k):
        sim.step(1)
    sim.synchronize()
    python_ms = (time.perf_counter() - t0) * 1e3 / k
    print(f"per step: sim.step({k}) {engine_ms:.4f} ms; {k} x sim.step(1) {python_ms:.4f} ms per call; "
          f"Python per-call overhead {python_ms - engine_ms:+.4f} ms = {(python_ms / engine_ms - 1) * 100:+.1f}%")

    big = mm.Simulation(rule=mm.rules.Cis565(), scenario=mm.Scenario.dense(1_000_000), pipeline="rows",
                        engine="cuda", seed=1)
    snaps, reads = [], []
    for _ in range(10):
        big.step(1)
        big.synchronize()
        t0 = time.perf_counter()
        big.snapshot()
        snaps.append((time.perf_counter() - t0) * 1e3)
        big.step(1)
        big.synchronize()
        t0 = time.perf_counter()
        big.positions
        reads.append((time.perf_counter() - t0) * 1e3)
    print(f"1M boids: snapshot() median {np.median(snaps):.2f} ms (best {min(snaps):.2f}); "
          f"positions median {np.median(reads):.2f} ms")


if __name__ == "__main__":
    main()
