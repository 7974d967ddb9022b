#!/usr/bin/env python3
"""Checks a trajectory (murmur --trajectory FILE.h5; docs/observables.md#trajectories) as Python
readers see it: h5py reads every frame with the layout the docs give, the XDMF index names only
datasets of the file with the shapes it states, and (with --out, or a run this script makes with
--murmur) the last frame is bitwise the state murmur wrote, species included. meshio, where it is installed, reads
the XDMF as a time series and must find the same points and velocities.

    python3 tests/check_trajectory.py run.h5 [--out final.txt]
    python3 tests/check_trajectory.py --murmur build/murmur       # makes its own small run

Exits 0 when every check passes, 1 on a failed check, 77 (CTest's skip) without h5py or numpy.
"""
import argparse
import os
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

SKIP = 77


def fail(msg):
    print(f"check_trajectory: FAIL: {msg}")
    sys.exit(1)


def read_state(path, np):
    """A murmur state file (--out): '#' lines, then mass x y z vx vy vz per body and, when some
    body has a species other than 0, the species as an eighth column. Returns the (n, 7) float32
    columns and the uint8 (n,) species (0 for a file of seven columns)."""
    rows, species = [], []
    with open(path) as f:
        for line in f:
            if line.startswith("#") or not line.strip():
                continue
            fields = line.split()
            rows.append([np.float32(v) for v in fields[:7]])
            species.append(int(fields[7]) if len(fields) == 8 else 0)
    return np.array(rows, dtype=np.float32), np.array(species, dtype=np.uint8)


def check(h5path, out_path, h5py, np):
    with h5py.File(h5path, "r") as f:
        if int(f.attrs["murmuration_trajectory"]) != 1:
            fail("murmuration_trajectory attribute is not 1")
        for key in ("force", "half_size", "params", "bodies"):
            if key not in f.attrs:
                fail(f"root attribute {key} missing")
        n = int(f.attrs["bodies"])
        steps = f["step"][...]
        times = f["time"][...]
        frames = len(steps)
        if frames == 0 or len(times) != frames:
            fail(f"/step has {frames} entries, /time {len(times)}")
        if not np.array_equal(f["ids"][...], np.arange(n, dtype=np.uint32)):
            fail("/ids is not 0..n-1 (id order)")
        if f["masses"].shape != (n,) or f["masses"].dtype != np.float32:
            fail(f"/masses has shape {f['masses'].shape} and type {f['masses'].dtype}")
        for k in range(frames):
            g = f[f"frames/{k:06d}"]
            for name in ("positions", "velocities"):
                if g[name].shape != (n, 3) or g[name].dtype != np.float32:
                    fail(f"frame {k} {name}: shape {g[name].shape}, type {g[name].dtype}")
            if g["species"].shape != (n,) or g["species"].dtype != np.uint8:
                fail(f"frame {k} species: shape {g['species'].shape}, type {g['species'].dtype}")
            if int(g.attrs["step"]) != int(steps[k]):
                fail(f"frame {k}: step attribute {g.attrs['step']} but /step says {steps[k]}")
        if "observables" in f:
            cols = f["observables"].attrs["columns"]
            cols = cols.decode() if isinstance(cols, bytes) else cols
            if f["observables"].shape[1] != len(cols.split(",")):
                fail("/observables has another column count than its columns attribute")

        # The XDMF as a reader sees it.
        xdmf = os.path.splitext(h5path)[0] + ".xdmf"
        root = ET.parse(xdmf).getroot()
        if root.tag != "Xdmf" or root.get("Version", "").split(".")[0] != "3":
            fail("the index is not XDMF 3")
        collection = root.find("Domain/Grid")
        if collection.get("GridType") != "Collection" or collection.get("CollectionType") != "Temporal":
            fail("the index is not a temporal collection")
        grids = list(collection)
        if len(grids) != frames:
            fail(f"the index names {len(grids)} frames, the file holds {frames} complete ones")
        for k, grid in enumerate(grids):
            t = float(grid.find("Time").get("Value"))
            if t != float(times[k]):
                fail(f"frame {k}: time {t} in the index, {times[k]} in the file")
            if grid.find("Topology").get("TopologyType") != "Polyvertex":
                fail(f"frame {k}: topology is not Polyvertex")
            attrs = {a.get("Name") for a in grid.findall("Attribute")}
            if not {"Velocity", "id", "mass", "species"} <= attrs:
                fail(f"frame {k}: attributes {sorted(attrs)}")
            for item in grid.iter("DataItem"):
                fname, path = item.text.strip().split(":")
                if fname != os.path.basename(h5path):
                    fail(f"frame {k}: DataItem names {fname}")
                dims = tuple(int(d) for d in item.get("Dimensions").split())
                if path not in f:
                    fail(f"frame {k}: {path} does not exist")
                if f[path].shape != dims:
                    fail(f"frame {k}: {path} has shape {f[path].shape}, the index says {dims}")

        if out_path:
            want, want_species = read_state(out_path, np)
            last = f[f"frames/{frames - 1:06d}"]
            got = np.concatenate([f["masses"][...][:, None], last["positions"][...], last["velocities"][...]], axis=1)
            if want.shape != got.shape or want.tobytes() != got.astype(np.float32).tobytes():
                fail("the last frame differs from the state --out wrote")
            if not np.array_equal(last["species"][...], want_species):
                fail("the last frame's species differ from the state --out wrote")
        last_positions = f[f"frames/{frames - 1:06d}/positions"][...]
        last_velocities = f[f"frames/{frames - 1:06d}/velocities"][...]
        last_species = f[f"frames/{frames - 1:06d}/species"][...]
        first_positions = f["frames/000000/positions"][...]

    try:
        import meshio.xdmf
    except ImportError:
        print("check_trajectory: meshio not importable, its reading of the XDMF not checked")
    else:
        with meshio.xdmf.TimeSeriesReader(xdmf) as reader:
            points, _ = reader.read_points_cells()
            if not np.array_equal(points, first_positions):
                fail("meshio's points differ from frame 0's positions")
            if reader.num_steps != frames:
                fail(f"meshio sees {reader.num_steps} steps")
            t, point_data, _ = reader.read_data(frames - 1)
            if not np.array_equal(point_data["Velocity"], last_velocities):
                fail("meshio's last Velocity differs from the file")
            if not np.array_equal(point_data["species"], last_species):
                fail("meshio's last species differ from the file")
        print("check_trajectory: meshio reads the XDMF time series")
    del last_positions
    print(f"check_trajectory: {h5path}: {frames} frames of {n} bodies OK")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("h5", nargs="?")
    ap.add_argument("--out", help="the state murmur wrote with --out at the last frame's step")
    ap.add_argument("--murmur", help="make a small run with this executable and check it")
    a = ap.parse_args()
    try:
        import h5py
        import numpy as np
    except ImportError as e:
        print(f"check_trajectory: skipped: {e}")
        sys.exit(SKIP)
    if a.murmur:
        with tempfile.TemporaryDirectory() as d:
            h5 = os.path.join(d, "run.h5")
            out = os.path.join(d, "final.txt")
            species = os.path.join(d, "species.txt")
            for world in (["--n", "2000"], ["--scenario", "plummer", "--n", "1000", "--pipeline", "tree"],
                          ["--scenario", "file:" + species]):
                if world[1].startswith("file:"):
                    # The last state with a species per body (an eighth column) runs on with them.
                    with open(out) as f, open(species, "w") as s:
                        body = 0
                        for line in f:
                            if line.startswith("# mass"):
                                line = "# mass x y z vx vy vz species\n"
                            elif not line.startswith("#"):
                                line = f"{line.rstrip()} {(body * 37 + 11) % 256}\n"
                                body += 1
                            s.write(line)
                subprocess.run([a.murmur, "--headless", "--no-render", "--engine", "cpu", *world, "--steps", "30",
                                "--trajectory", h5, "--trajectory-every", "10", "--out", out, "--observables",
                                os.path.join(d, "o.csv"), "--observe-every", "5"], check=True)
                check(h5, out, h5py, np)
            with h5py.File(h5, "r") as f:
                if not np.array_equal(f["frames/000000/species"][...], (np.arange(1000) * 37 + 11) % 256):
                    fail("the species of the state file are not those of the trajectory's first frame")
        return
    if not a.h5:
        ap.error("give FILE.h5 or --murmur EXE")
    check(a.h5, a.out, h5py, np)


if __name__ == "__main__":
    main()
