#!/usr/bin/env python3
"""How much skin exact neighbour lists would need, measured on a settled flock.

Runs murmur's CPU engine for --warmup steps, then one step at a time for --steps more, writing the
state after each (`--out`), and for every k in 1..--steps reports, over the pairs that are
neighbours (closer than the largest rule radius r, shortest distance through the wrap) k steps
after the first saved state, how much farther than r they were at that state:

    needed(k) = max over neighbours at step k of (distance at step 0 - r)

and its running maximum over steps 1..k (`needed_max_so_far`: the skin lists built at step 0 need
to serve steps 1..k). Lists built at step 0 with a skin below it miss a pair by step k, so no
exact list scheme,
however it decides when to rebuild from the motion it sees, can serve k steps with less skin in
this run. The verlet pipeline's skin for lists serving k + 1 steps is the speed clamp's bound,
2 k maxSpeed dt (core/verlet.h); the CSV has both, and the 99th and 99.9th percentiles of the
same quantity (what a scheme that treated the fastest few pairs apart would face).

    bench/relative-motion.py build/murmur out.csv -- --scenario uniform --half-size 50 --n 125k

Needs numpy and scipy (Debian: python3-numpy python3-scipy).
"""
import argparse
import csv
import json
import os
import subprocess
import sys
import tempfile

import numpy as np
from scipy.spatial import cKDTree


def read_state(path):
    header = {}
    with open(path) as f:
        for line in f:
            if not line.startswith('#'):
                break
            key, _, value = line[1:].strip().partition(':')
            header[key.strip()] = value.strip()
    data = np.loadtxt(path, comments='#', ndmin=2)
    return header, data[:, 1:4]


def run(murmur, args, out):
    cmd = [murmur, '--headless', '--no-render', '--engine', 'cpu', '--pipeline', 'rows'] + args + ['--out', out]
    done = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if done.returncode != 0:
        sys.exit(f'relative-motion.py: {" ".join(cmd)} failed ({done.returncode}): {done.stderr.strip()}')


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('murmur')
    ap.add_argument('csv')
    ap.add_argument('--warmup', type=int, default=500)
    ap.add_argument('--steps', type=int, default=16)
    argv = sys.argv[1:]
    cut = argv.index('--') if '--' in argv else len(argv)
    a = ap.parse_args(argv[:cut])
    scenario = argv[cut + 1:]  # murmur options for the world, after --
    if a.warmup < 1 or a.steps < 1:
        sys.exit('relative-motion.py: --warmup and --steps must be at least 1')
    with tempfile.TemporaryDirectory() as tmp:
        states = [os.path.join(tmp, f's{i}.txt') for i in range(a.steps + 1)]
        run(a.murmur, scenario + ['--steps', str(a.warmup)], states[0])
        for i in range(1, a.steps + 1):
            run(a.murmur, ['--scenario', 'file:' + states[i - 1], '--steps', '1'], states[i])
            print(f'step {i}/{a.steps}', file=sys.stderr)
        header, p0 = read_state(states[0])
        params = json.loads(header['params'])['boids']
        h = float(header['half_size'])
        r = max(params['cohesionRadius'], params['separationRadius'], params['alignmentRadius'])
        delta = params['maxSpeed'] * params['dt']
        L = 2.0 * h
        rows = []
        so_far = 0.0
        for k in range(1, a.steps + 1):
            _, pk = read_state(states[k])
            tree = cKDTree(np.mod(pk + h, L), boxsize=L)
            pairs = tree.query_pairs(r, output_type='ndarray')
            d = p0[pairs[:, 0]] - p0[pairs[:, 1]]
            d -= L * np.round(d / L)
            excess = np.linalg.norm(d, axis=1) - r
            so_far = max(so_far, excess.max())
            rows.append({'k': k, 'n': len(p0), 'radius': r, 'neighbour_pairs': len(pairs),
                         'bound_2k_delta': 2 * k * delta, 'needed_max': max(0.0, excess.max()), 'needed_max_so_far': so_far,
                         'needed_p999': max(0.0, np.quantile(excess, 0.999)),
                         'needed_p99': max(0.0, np.quantile(excess, 0.99))})
    with open(a.csv + '.tmp', 'w', newline='') as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0].keys()))
        w.writeheader()
        for row in rows:
            w.writerow({key: (f'{v:.4f}' if isinstance(v, float) else v) for key, v in row.items()})
    os.replace(a.csv + '.tmp', a.csv)
    for row in rows:
        print(f"k={row['k']:2d}  bound {row['bound_2k_delta']:.3f}  needed {row['needed_max']:.3f}  "
              f"so far {row['needed_max_so_far']:.3f}  "
              f"p99.9 {row['needed_p999']:.3f}  p99 {row['needed_p99']:.3f}")


if __name__ == '__main__':
    main()
