"""The Python module on the CPU engine through the old keyword forms (force=, scenario="dense",
params={...}, set_params), which stay for one release with a DeprecationWarning: shapes, id order,
the command line's results to the bit, parameters, species, state files, the tables, the
benchmark, rendering, and every error. test_api.py covers the API that replaces them."""
import os
import signal
import subprocess
import sys
import threading

import numpy as np
import pytest

import murmuration as mm

# The old forms warn (test_api.py checks that each does); here they are what is tested.
pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


def small(**kw):
    args = dict(n=800, scenario="dense", pipeline="rows", engine="cpu", seed=3)
    args.update(kw)
    return mm.Simulation(**args)


def read_state(path):
    rows = np.loadtxt(path, comments="#", dtype=np.float64, ndmin=2)
    return rows[:, 1:4].astype(np.float32), rows[:, 4:7].astype(np.float32), rows[:, 0].astype(np.float32)


def test_shapes_dtypes_and_copies():
    sim = small()
    assert (sim.n, sim.engine, sim.force, sim.pipeline, sim.step_count) == (800, "cpu", "boids", "rows", 0)
    p, v, m = sim.positions, sim.velocities, sim.masses
    assert p.shape == (800, 3) and v.shape == (800, 3) and m.shape == (800,)
    assert p.dtype == v.dtype == m.dtype == np.float32
    p[:] = 0  # a copy: the simulation is unchanged
    assert np.any(sim.positions != 0)
    sim.step(3)
    assert sim.step_count == 3
    assert "CPU" in sim.device


def test_id_order_matches_the_state_file(tmp_path):
    sim = small(pipeline="coherent")  # keeps the state in cell order inside the engine
    sim.step(5)
    sim.save(tmp_path / "s.txt")
    p, v, m = read_state(tmp_path / "s.txt")
    np.testing.assert_array_equal(sim.positions, p)
    np.testing.assert_array_equal(sim.velocities, v)
    np.testing.assert_array_equal(sim.masses, m)


CASES = [
    dict(force="boids", scenario="dense", pipeline="rows", n=1500),
    dict(force="boids", scenario="dense", pipeline="verlet", n=1500),
    dict(force="boids", scenario="uniform", pipeline="coherent", n=1200),
    dict(force="boids", scenario="dense", pipeline="naive", n=700),
    dict(force="gravity", scenario="plummer", pipeline="tree", n=600),
    dict(force="gravity", scenario="galaxies", pipeline="naive", n=500),
    dict(force="boids", scenario="dense", pipeline="rows", n=1500, dims=2),
    dict(force="gravity", scenario="galaxies", pipeline="tree", n=500, dims=2),
    dict(force="boids", scenario="dense", pipeline="clusters", n=1500, rule="reynolds"),
]


@pytest.mark.parametrize("case", CASES,
                         ids=lambda c: f"{c['force']}-{c['scenario']}-{c['pipeline']}" + ("-2d" if c.get("dims") == 2 else "")
                         + (f"-{c['rule']}" if "rule" in c else ""))
def test_a_python_run_equals_the_command_line_to_the_bit(case, murmur_exe, tmp_path):
    steps, seed = 12, 7
    cli_out = tmp_path / "cli.txt"
    cmd = [murmur_exe, "--headless", "--no-render", "--engine", "cpu", "--n", str(case["n"]), "--force",
           case["force"], "--scenario", case["scenario"], "--pipeline", case["pipeline"], "--seed", str(seed),
           "--steps", str(steps), "--out", str(cli_out)]
    if "dims" in case:
        cmd += ["--dims", str(case["dims"])]
    if "rule" in case:
        cmd += ["--rule", case["rule"]]
    subprocess.run(cmd, check=True, capture_output=True)
    sim = mm.Simulation(engine="cpu", seed=seed, **case)
    sim.step(steps)
    sim.save(tmp_path / "py.txt")
    assert (tmp_path / "py.txt").read_bytes() == cli_out.read_bytes()
    p, v, _ = read_state(cli_out)
    np.testing.assert_array_equal(sim.positions, p)
    np.testing.assert_array_equal(sim.velocities, v)


def test_the_default_world_equals_the_command_line(murmur_exe, tmp_path):
    cli_out = tmp_path / "cli.txt"
    subprocess.run([murmur_exe, "--headless", "--no-render", "--engine", "cpu", "--n", "1000", "--steps", "5",
                    "--out", str(cli_out)], check=True, capture_output=True)
    sim = mm.Simulation(n=1000, engine="cpu")
    assert (sim.scenario, sim.pipeline) == ("dense", "verlet")
    sim.step(5)
    sim.save(tmp_path / "py.txt")
    assert (tmp_path / "py.txt").read_bytes() == cli_out.read_bytes()


def test_params_round_trip_and_take_effect():
    sim = small()
    params = sim.params
    assert params["boids"]["maxSpeed"] == 1.0 and params["pipeline"] == "rows"
    keys = {row["key"] for row in mm.param_table()}
    flat = {f"{g}.{k}" for g, sub in params.items() if isinstance(sub, dict) for k in sub}
    flat |= {k for k, v in params.items() if not isinstance(v, dict)}
    assert flat == keys
    sim.set_params({"boids": {"maxSpeed": 0.25}})
    assert sim.params["boids"]["maxSpeed"] == 0.25
    sim.step(2)
    assert np.linalg.norm(sim.velocities, axis=1).max() <= 0.25 * (1 + 1e-6)
    again = mm.Simulation(n=800, scenario="dense", engine="cpu", seed=3, params=sim.params)
    assert again.params == sim.params
    sim.set_params({"pipeline": "coherent"})
    assert sim.pipeline == "coherent"


def test_a_world_size_in_params_keeps_the_uniform_cube(murmur_exe, tmp_path):
    # As --half-size does: the default world would size itself from N and drop the half-size.
    sim = mm.Simulation(n=1000, engine="cpu", params={"halfSize": 30.0})
    assert sim.scenario == "uniform" and sim.params["halfSize"] == 30.0 and sim.pipeline == "rows"
    sim.step(3)
    sim.save(tmp_path / "py.txt")
    subprocess.run([murmur_exe, "--headless", "--no-render", "--engine", "cpu", "--n", "1000", "--half-size", "30",
                    "--steps", "3", "--out", str(tmp_path / "cli.txt")], check=True, capture_output=True)
    assert (tmp_path / "py.txt").read_bytes() == (tmp_path / "cli.txt").read_bytes()


def test_options_beat_params_as_they_beat_a_params_file():
    sim = mm.Simulation(n=500, engine="cpu", pipeline="coherent", params={"pipeline": "naive", "force": "boids"})
    assert sim.pipeline == "coherent"
    sim = mm.Simulation(n=500, engine="cpu", scenario="plummer", params={"force": "boids"})
    assert sim.force == "boids"


def test_set_state_round_trip_and_masses():
    sim = small()
    rng = np.random.default_rng(1)
    p = rng.uniform(-5, 5, (800, 3)).astype(np.float32)
    v = rng.uniform(-0.5, 0.5, (800, 3))  # float64: rounded to float32
    sim.set_state(positions=p, velocities=v, masses=np.full(800, 2.0, np.float32))
    np.testing.assert_array_equal(sim.positions, p)
    np.testing.assert_array_equal(sim.velocities, v.astype(np.float32))
    np.testing.assert_array_equal(sim.masses, np.full(800, 2.0, np.float32))
    sim.set_state(velocities=np.zeros((800, 3), np.float32))
    np.testing.assert_array_equal(sim.positions, p)
    sim.step(1)


def test_species_default_to_zero_and_are_a_copy():
    sim = small()
    s = sim.species
    assert s.shape == (800,) and s.dtype == np.uint8 and not s.any()
    s[:] = 7  # a copy: the simulation is unchanged
    assert not sim.species.any()
    sim.step(3)
    assert not sim.species.any()


# Every pipeline of the CPU engine, for each force it runs with a method of its own: the
# reordering ones (coherent, rows, verlet, clusters, tree) carry species through every sort.
SPECIES_CASES = ([("boids", p["name"]) for p in mm.pipelines() if p["boids"]]
                 + [("gravity", p["name"]) for p in mm.pipelines() if p["gravity"] and p["gravity_runs"] == p["name"]])


@pytest.mark.parametrize("force, pipeline", SPECIES_CASES, ids=lambda v: v)
def test_species_follow_their_bodies_through_steps(force, pipeline):
    scenario = "dense" if force == "boids" else "plummer"
    sim = mm.Simulation(n=1200, force=force, scenario=scenario, pipeline=pipeline, engine="cpu", seed=4)
    sim.step(2)  # the engine holds the bodies in its own order now
    species = np.random.default_rng(5).integers(0, 256, sim.n)
    p, v, m = sim.positions, sim.velocities, sim.masses
    sim.set_state(species=species)
    np.testing.assert_array_equal(sim.species, species)
    np.testing.assert_array_equal(sim.positions, p)  # species alone change nothing else
    np.testing.assert_array_equal(sim.velocities, v)
    np.testing.assert_array_equal(sim.masses, m)
    sim.step(12)
    np.testing.assert_array_equal(sim.species, species)
    # Every body moved to another's place: the next sorts start from a shuffled order.
    sim.set_state(positions=sim.positions[::-1])
    np.testing.assert_array_equal(sim.species, species)
    sim.step(6)
    assert sim.step_count == 20
    np.testing.assert_array_equal(sim.species, species)


def test_species_survive_the_other_arrays_and_a_change_of_pipeline():
    sim = small(pipeline="coherent")
    species = np.arange(800) % 256
    sim.set_state(species=species)
    sim.set_state(positions=sim.positions, velocities=np.zeros((800, 3), np.float32),
                  masses=np.full(800, 2.0, np.float32))
    np.testing.assert_array_equal(sim.species, species)
    sim.step(2)
    sim.set_params({"pipeline": "rows"})
    sim.step(2)
    np.testing.assert_array_equal(sim.species, species)
    sim.set_state(species=np.zeros(800, np.uint8))
    assert not sim.species.any()


@pytest.mark.parametrize("dtype", [np.uint8, np.int8, np.int16, np.uint16, np.int32, np.uint32, np.int64, np.uint64])
def test_species_take_any_integer_dtype(dtype):
    sim = small(n=300)
    species = np.arange(300) % min(256, np.iinfo(dtype).max + 1)
    sim.set_state(species=species.astype(dtype))
    np.testing.assert_array_equal(sim.species, species)
    sim.set_state(species=[255] * 300)  # anything np.asarray takes
    np.testing.assert_array_equal(sim.species, np.full(300, 255, np.uint8))


@pytest.mark.parametrize("species, exc, words", [
    (np.full(300, 1.0), TypeError, "set_state: species must be integers 0 to 255 (any integer dtype), not float64"),
    (np.ones(300, bool), TypeError, "species must be integers 0 to 255 (any integer dtype), not bool"),
    (["a"] * 300, TypeError, "species must be integers 0 to 255"),
    (np.ones(299, np.uint8), ValueError, "set_state: species has shape (299,), expected (300,)"),
    (np.ones((300, 1), np.uint8), ValueError, "species has shape (300, 1), expected (300,)"),
    (7, ValueError, "species has shape (), expected (300,)"),
    (np.r_[np.zeros(3, np.int64), 256, np.zeros(296, np.int64)], ValueError,
     "set_state: species must be 0 to 255 (index 3 is 256)"),
    (np.r_[np.zeros(299, np.int16), -1], ValueError, "species must be 0 to 255 (index 299 is -1)"),
    (np.full(300, 2**40, np.uint64), ValueError, "species must be 0 to 255 (index 0 is 1099511627776)"),
], ids=["float", "bool", "str", "short", "column", "scalar", "above", "below", "far-above"])
def test_bad_species_raise_one_line_and_change_nothing(species, exc, words):
    sim = small(n=300)
    sim.set_state(species=np.full(300, 9))
    p, s = sim.positions, sim.species
    with pytest.raises(exc) as e:
        sim.set_state(positions=p[::-1], species=species)
    assert words in str(e.value) and "\n" not in str(e.value)
    np.testing.assert_array_equal(sim.positions, p)
    np.testing.assert_array_equal(sim.species, s)


def test_save_and_load(tmp_path):
    sim = small()
    sim.step(4)
    sim.save(tmp_path / "s.txt")
    back = mm.Simulation.load(tmp_path / "s.txt", engine="cpu")
    assert (back.n, back.step_count, back.force, back.pipeline) == (800, 4, "boids", "rows")
    np.testing.assert_array_equal(back.positions, sim.positions)
    assert back.params == sim.params
    # The loaded engine starts in id order, the running one in cell order: neighbours are summed in
    # another order, as after --out and file: on the command line.
    sim.step(3)
    back.step(3)
    np.testing.assert_allclose(back.positions, sim.positions, rtol=1e-5, atol=1e-5)


def test_file_bodies_are_selected_subset_and_scaled(tmp_path):
    # mass x y z vx vy vz per line, two galaxies of disk, bulge and halo blocks (16 bodies each):
    # keep the disks and bulges (--select), every 2nd of them (n), in other units (scale).
    rows = np.arange(48 * 7, dtype=np.float32).reshape(48, 7) / 8
    rows[:, 0] = 1 + np.arange(48) % 5
    np.savetxt(tmp_path / "mw_m31.txt", rows, fmt="%.9g")
    sim = mm.Simulation(scenario=f"file:{tmp_path / 'mw_m31.txt'}", engine="cpu", select="0-15,24-39", n=16,
                        scale=(4, 0.5, 2))
    kept = np.r_[0:16:2, 24:40:2]
    assert sim.n == 16
    np.testing.assert_array_equal(sim.positions, rows[kept, 1:4] * np.float32(4))
    np.testing.assert_array_equal(sim.velocities, rows[kept, 4:7] * np.float32(0.5))
    np.testing.assert_array_equal(sim.masses, rows[kept, 0] * np.float32(2))
    with pytest.raises(ValueError, match="n=40 is more than the 32 bodies select keeps"):
        mm.Simulation(scenario=f"file:{tmp_path / 'mw_m31.txt'}", engine="cpu", select="0-15,24-39", n=40)


def test_tables():
    names = [p["name"] for p in mm.pipelines()]
    assert names == ["naive", "scattered", "coherent", "rows", "tree", "verlet", "clusters"]
    tree = mm.pipelines()[4]
    assert tree["gravity"] and not tree["boids"]
    assert {"uniform", "dense", "plummer", "galaxies", "galaxy"} <= set(mm.scenarios())
    row = next(r for r in mm.param_table() if r["key"] == "boids.maxSpeed")
    assert row["option"] == "--max-speed" and row["default"] == "1"
    rules = {r["name"]: r for r in mm.rules()}
    assert [r["name"] for r in mm.rules() if r["kind"] == "local"] == ["cis565", "reynolds", "vicsek", "couzin"]
    assert rules["gravity"]["kind"] == "field" and rules["gravity"]["force"] == "gravity"
    assert rules["reynolds"]["section"] == "boids"
    assert mm.Simulation(n=500, engine="cpu", rule="reynolds").params["boids"]["rules"] == "reynolds"
    assert rules["vicsek"]["section"] == "vicsek"
    # Vicsek: its own section of parameters, and a periodic world unless told otherwise.
    sim = mm.Simulation(n=500, engine="cpu", rule="vicsek", dims=2)
    assert sim.params["boids"]["rules"] == "vicsek" and sim.params["boundary"] == "periodic"
    assert sim.params["vicsek"]["speed"] == 0.03
    sim.step(3)
    speeds = np.hypot(sim.velocities[:, 0], sim.velocities[:, 1])
    assert np.allclose(speeds, 0.03, rtol=1e-5)
    # Couzin: its zones, and an open world: the half-size only places the start.
    sim = mm.Simulation(n=100, engine="cpu", rule="couzin", params={"halfSize": 3.0})
    assert sim.params["boundary"] == "open" and sim.params["couzin"]["zoneAttraction"] == 14
    sim.step(400)
    assert np.allclose(np.linalg.norm(sim.velocities, axis=1), 0.3, rtol=1e-5)
    assert np.abs(sim.positions).max() > 3.0  # the group has flown out of where it started
    # Topological neighbours through the parameters: a different run from the metric one.
    runs = []
    for k in (0, 7):
        sim = mm.Simulation(n=500, engine="cpu", rule="vicsek", dims=2, seed=4, params={"topological": k})
        assert sim.params["topological"] == k
        sim.step(5)
        runs.append(sim.velocities)
    assert not np.array_equal(runs[0], runs[1])


def test_bench_rows():
    rows = mm.bench(force="boids", n=[1500], pipeline=["coherent", "rows"], engine="cpu", steps=2, warmup=1,
                    repeats=1, as_frame=False)
    assert rows["pipeline"].tolist() == ["coherent", "rows"]
    for r in rows:
        assert r["engine"] == "cpu" and r["n"] == 1500 and r["force"] == "boids" and r["rule"] == "cis565"
        assert r["sim_ms_median"] > 0 and np.isnan(r["block_size"])
    assert list(rows.dtype.names)[:3] == ["timestamp", "git_sha", "gpu"]


def test_the_plane():
    sim = mm.Simulation(n=2000, engine="cpu", dims=2, seed=3)
    assert sim.params["dims"] == 2
    sim.step(30)
    pos, vel = sim.positions, sim.velocities
    assert np.all(pos[:, 2] == 0) and np.all(vel[:, 2] == 0)
    assert np.ptp(pos[:, 0]) > 0 and np.ptp(pos[:, 1]) > 0
    off = pos.copy()
    off[5, 2] = 0.5
    with pytest.raises(ValueError) as e:
        sim.set_state(positions=off)
    assert "z = 0" in str(e.value) and "\n" not in str(e.value)
    np.testing.assert_array_equal(sim.positions, pos)  # the failed call left the state as it was
    rows = mm.bench(force="boids", n=[1500], pipeline=["rows"], engine="cpu", steps=2, warmup=1, repeats=1, dims=2,
                    as_frame=False)
    assert rows[0]["scenario"] == "dense:4/2d"  # the default world, in the plane


def test_render_offscreen(offscreen):
    sim = small(n=2000)
    img = offscreen(lambda: sim.render(width=160, height=120, draw="points"))
    assert img.shape == (120, 160, 3) and img.dtype == np.uint8
    assert (img.reshape(-1, 3) != img[0, 0]).any(axis=1).sum() > 50  # bodies were drawn
    sim.step(1)
    assert sim.render(width=160, height=120, draw="points").shape == (120, 160, 3)
    assert sim.render(width=64, height=48, draw="splat").shape == (48, 64, 3)


def test_ctrl_c_stops_between_steps():
    sim = small(n=300)
    # Python's own handler, also where SIGINT was ignored at start (a background job of a script).
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    timer = threading.Timer(0.3, lambda: os.kill(os.getpid(), signal.SIGINT))
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            sim.step(10_000_000)
    finally:
        timer.cancel()
        signal.signal(signal.SIGINT, previous)
    done = sim.step_count
    assert 0 < done < 10_000_000
    sim.step(1)  # still usable
    assert sim.step_count == done + 1


@pytest.mark.parametrize("kwargs, exc, words", [
    (dict(n=0), ValueError, "n=0 is invalid: a whole number from 1 to"),
    (dict(n="100"), TypeError, "n must be an int"),
    (dict(pipeline="fast"), ValueError, "pipeline='fast' is invalid: pipeline must be one of: naive"),
    (dict(scenario="swarm"), ValueError, "scenario='swarm' is invalid: one of: uniform, dense"),
    (dict(force="magnetism"), ValueError, "force='magnetism' is invalid: force must be one of: boids, gravity"),
    (dict(engine="tpu"), ValueError, "engine='tpu' is invalid: one of: cpu, cuda"),
    (dict(force="boids", pipeline="tree"), ValueError, "pipeline tree: gravity only"),
    (dict(scenario="uniform", neighbours=4), ValueError, "neighbours=4 applies to Scenario.dense only"),
    (dict(params={"boids": {"maxSpeed": -1}}), ValueError, "params['boids.maxSpeed']=-1 is invalid: max speed"),
    (dict(params={"boids": {"speed": 1}}), ValueError, "'boids.speed' is not a parameter"),
    (dict(params={"blockSize": 48}), ValueError, "params['blockSize']=48 is invalid: block size must be a multiple of 32"),
    (dict(params=[1, 2]), TypeError, "params must be a dict"),
    (dict(params={"halfSize": float("nan")}), ValueError, "params['halfSize']=nan is invalid"),
    (dict(params={"halfSize": {1, 2}}), TypeError, "params['halfSize']={1, 2}: must be a number"),
    (dict(scenario="file:/nonexistent/state.txt"), ValueError, "/nonexistent/state.txt"),
    (dict(select="0-5"), ValueError, "select is an argument of mm.Scenario.from_file(path, select=...)"),
    (dict(scenario="dense", select="0-5"), ValueError, "select applies to a file's bodies only (the scenario is dense)"),
    (dict(neighbours=4), ValueError, "neighbours is an argument of mm.Scenario.dense(n, neighbours=...)"),
    (dict(select=5), TypeError, "select must be a str"),
    (dict(scenario="file:x.txt", scale=(1, 2)), TypeError, "scale must be three numbers"),
    (dict(scenario="file:x.txt", scale=(1, "2", 3)), TypeError, "velocity factor must be a number"),
    (dict(dims=4), ValueError, "dims=4 is invalid: dimensions must be a whole number from 2 to 3"),
    (dict(dims="2"), TypeError, "dims='2': must be a number"),
    (dict(rule="starling"), ValueError, "rule='starling' is invalid: one of: cis565, reynolds, vicsek, couzin"),
    (dict(rule=1), TypeError, "rule must be a rule object"),
    (dict(force="gravity", rule="reynolds"), ValueError, "rule='reynolds' applies to boids only"),
])
def test_bad_arguments_raise_one_line(kwargs, exc, words):
    args = dict(n=500, engine="cpu")
    args.update(kwargs)
    with pytest.raises(exc) as e:
        mm.Simulation(**args)
    assert words in str(e.value) and "\n" not in str(e.value)


def test_a_size_that_does_not_fit_raises_memory_error():
    # 2^30 bodies in a box of half-size 3000: over 100 GB, refused before anything is allocated
    # under a 16 GB limit on the address space (ulimit -v, which the memory check reads), whatever
    # the machine has (a host with 256 GB would hold it).
    code = """
import resource
resource.setrlimit(resource.RLIMIT_AS, (16 << 30, 16 << 30))
import murmuration as mm
try:
    mm.Simulation(n=2**30, scenario="uniform", pipeline="coherent", engine="cpu", params={"halfSize": 3000})
except MemoryError as e:
    assert "needs" in str(e), e
    print("refused")
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "refused"


def test_a_sparse_world_set_by_set_params_runs_in_memory_that_follows_n():
    # A 3000 half-size world at the rule's cell width is a grid of 1.7e9 cells (about 20 GB on the
    # CPU engine); its cells widen instead (a few cells a body), so it runs under a 2 GB limit on
    # the address space (ulimit -v, which the memory check reads), whatever the machine has.
    code = """
import resource
resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))
import murmuration as mm
sim = mm.Simulation(n=800, scenario="dense", pipeline="coherent", engine="cpu", seed=3)
sim.set_params({"halfSize": 3000})
sim.step(3)
assert sim.params["halfSize"] == 3000
print("ran")
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ran"


def test_cuda_engine_without_a_device_is_a_value_error():
    if mm.cuda_available():
        pytest.skip("a CUDA device is present")
    with pytest.raises(ValueError, match="engine='cuda' is not available"):
        mm.Simulation(n=100, engine="cuda")


def test_failed_calls_leave_the_simulation_as_it_was():
    sim = small()
    sim.step(2)
    sim.set_state(species=np.arange(800) % 3)
    p, v, s, params = sim.positions, sim.velocities, sim.species, sim.params
    bad_p = p.copy()
    bad_p[5, 1] = np.nan
    cases = [
        (ValueError, lambda: sim.set_state(positions=bad_p)),
        (ValueError, lambda: sim.set_state(positions=p[:10])),
        (ValueError, lambda: sim.set_state(positions=p.T)),
        (TypeError, lambda: sim.set_state(positions=p.astype(np.int32))),
        (ValueError, lambda: sim.set_state(masses=-np.ones(800, np.float32))),
        (ValueError, lambda: sim.set_state(velocities=v, species=np.full(800, 300))),
        (TypeError, lambda: sim.set_state(velocities=v, species=s.astype(np.float32))),
        (ValueError, lambda: sim.set_params({"boids": {"dt": 0}})),
        (ValueError, lambda: sim.set_params({"pipeline": "tree"})),
        (ValueError, lambda: sim.set_params({"nonsense": 1})),
        (TypeError, lambda: sim.set_params("maxSpeed=2")),
        (ValueError, lambda: sim.step(-1)),
        (TypeError, lambda: sim.step(1.5)),
        (ValueError, lambda: sim.device_positions()),
        (ValueError, lambda: sim.device_species()),
        (ValueError, lambda: sim.save("/nonexistent-dir/state.txt")),
    ]
    if mm._native.has_render:  # a build without the renderer refuses every render alike
        cases += [(ValueError, lambda: sim.render(width=4, height=4)),
                  (ValueError, lambda: sim.render(width=64, height=64, draw="voxels"))]
    for exc, call in cases:
        with pytest.raises(exc) as e:
            call()
        assert "\n" not in str(e.value)
        np.testing.assert_array_equal(sim.positions, p)
        np.testing.assert_array_equal(sim.velocities, v)
        np.testing.assert_array_equal(sim.species, s)
        assert sim.params == params and sim.step_count == 2


def test_the_gil_is_released_and_other_threads_calls_are_refused_meanwhile():
    sim = small(n=300)
    worker = threading.Thread(target=sim.step, args=(20000,))
    worker.start()
    refused = ran_meanwhile = 0
    while worker.is_alive():
        ran_meanwhile += 1  # Python runs while the engine steps
        try:
            sim.positions
        except RuntimeError as e:
            assert "busy in another thread" in str(e)
            refused += 1
            break
    worker.join()
    assert refused == 1 and ran_meanwhile >= 1
    assert sim.step_count == 20000 and sim.positions.shape == (300, 3)
