"""The Python API on the CPU engine: rule objects made from the tables, parameters as checked
attributes, scenarios and neighbourhoods as objects, the command line's bits, observables, run,
snapshots, set_state's box, trajectories and restarts, the in-process benchmark, frames, the old
forms' warnings, and errors (shapes, dtypes, NaN and Inf, huge values, use after an error, two
threads)."""
import csv
import doctest
import math
import os
import signal
import subprocess
import sys
import threading
import warnings

import numpy as np
import pytest

import murmuration as mm
import murmuration.simulation
from murmuration import _support

VICSEK = dict(rule=lambda: mm.rules.Vicsek(noise=0.3, radius=1.0, speed=0.03), dims=2, boundary="periodic",
              half_size=10, pipeline="rows")
VICSEK_CLI = ["--rule", "vicsek", "--dims", "2", "--boundary", "periodic", "--half-size", "10", "--pipeline", "rows",
              "--noise", "0.3", "--radius", "1", "--speed", "0.03"]


def vicsek(n=2000, seed=1, **kw):
    args = {k: (v() if callable(v) else v) for k, v in VICSEK.items()}
    args.update(kw)
    return mm.Simulation(n, engine="cpu", seed=seed, **args)


def run_cli(exe, args, tmp_path):
    subprocess.run([os.path.abspath(exe), "--headless", "--no-render", "--engine", "cpu"] + args, check=True, capture_output=True,
                   cwd=tmp_path)


# --- rules and parameters ---------------------------------------------------------------------------


def test_every_rule_of_the_table_has_a_class_with_its_section():
    assert [r["name"] for r in mm.rules_table()] == ["cis565", "reynolds", "vicsek", "couzin", "gravity"]
    classes = {"cis565": mm.rules.Cis565, "reynolds": mm.rules.Reynolds, "vicsek": mm.rules.Vicsek,
               "couzin": mm.rules.Couzin, "gravity": mm.rules.Gravity}
    for row in mm.rules_table():
        cls = classes[row["name"]]
        keys = [p["key"] for p in mm.param_table() if p["key"].startswith(row["section"] + ".")
                and p["key"] != "boids.rules"]
        assert [cls._fields[f] for f in cls.fields()] == keys
        rule = cls()
        for f in cls.fields():
            default = next(p for p in mm.param_table() if p["key"] == cls._fields[f])["default_value"]
            got = getattr(rule, f)
            assert got == (_support.shortest(default) if isinstance(default, float) else default)
        assert cls.__doc__ and ">>>" in cls.__doc__
    assert mm.rules.Couzin.fields()[:3] == ["zone_repulsion", "zone_orientation", "zone_attraction"]
    assert "G" in mm.rules.Gravity.fields() and "max_speed" in mm.rules.Cis565.fields()


@pytest.mark.parametrize("attr, value, exc, words", [
    ("max_speed", float("inf"), ValueError, "rule.max_speed=inf is invalid: max speed must be a finite number > 0 and at most 1000000"),
    ("max_speed", float("nan"), ValueError, "rule.max_speed=nan is invalid: max speed must be a finite number > 0"),
    ("max_speed", -1, ValueError, "rule.max_speed=-1 is invalid"),
    ("max_speed", 10**400, ValueError, "rule.max_speed=100000000000000000000000... (401 characters) is invalid"),
    ("max_speed", 1e-300, ValueError, "the smallest normal float"),
    ("max_speed", "fast", TypeError, "rule.max_speed='fast': must be a number, a finite number > 0"),
    ("max_speed", True, TypeError, "rule.max_speed=True: must be a number"),
    ("max_speed", None, TypeError, "rule.max_speed=None: must be a number"),
    ("dt", 0, ValueError, "rule.dt=0 is invalid: boids dt must be a finite number > 0 and at most 1000"),
    ("speed", 1, AttributeError, "Cis565 has no parameter 'speed'; its parameters: cohesion_radius"),
], ids=lambda v: str(v)[:16])
def test_rule_attributes_are_checked_on_assignment(attr, value, exc, words):
    rule = mm.rules.Cis565()
    with pytest.raises(exc) as e:
        setattr(rule, attr, value)
    assert words in str(e.value) and "\n" not in str(e.value)
    assert rule.max_speed == 1.0 and rule.dt == 0.2  # unchanged


def test_enum_and_int_parameters():
    rule = mm.rules.Vicsek(noise_kind="vectorial")
    assert rule.noise_kind == "vectorial"
    with pytest.raises(ValueError, match="rule.noise_kind='gaussian' is invalid: noise kind must be one of: angular, vectorial"):
        rule.noise_kind = "gaussian"
    with pytest.raises(TypeError, match="rule.noise_kind=1: must be a str"):
        rule.noise_kind = 1
    g = mm.rules.Gravity(grid_dim=32)
    assert g.grid_dim == 32 and isinstance(g.grid_dim, int)
    with pytest.raises(ValueError, match=r"rule.grid_dim=2.5 is invalid: .* whole number from 1 to 128"):
        g.grid_dim = 2.5
    with pytest.raises(TypeError, match="Vicsek.. got an unexpected parameter 'max_speed'; its parameters: radius"):
        mm.rules.Vicsek(max_speed=1)


def test_a_rule_attribute_on_a_simulation_takes_effect_at_the_next_step():
    sim = mm.Simulation(1500, rule=mm.rules.Cis565(), scenario=mm.Scenario.dense(), pipeline="rows", engine="cpu",
                        seed=3)
    sim.step(2)
    sim.rule.max_speed = 0.25
    assert sim.rule.max_speed == 0.25 and sim.params["boids"]["maxSpeed"] == 0.25
    sim.step(1)
    assert np.linalg.norm(sim.velocities, axis=1).max() <= 0.25 * (1 + 1e-6)
    # A value the whole set refuses (a radius beyond the world) changes nothing.
    half = sim.half_size
    with pytest.raises(ValueError) as e:
        sim.rule.cohesion_radius = half * 3
    assert "half_size" in str(e.value) and "--" not in str(e.value) and "\n" not in str(e.value)
    assert sim.rule.cohesion_radius == 5.0
    sim.half_size = half * 2
    assert sim.half_size == half * 2
    with pytest.raises(ValueError, match="half_size=-1 is invalid: world half-size must be a finite number > 0"):
        sim.half_size = -1
    with pytest.raises(ValueError, match="boundary='torus' is invalid: boundary must be one of: wrap, periodic"):
        sim.boundary = "torus"
    sim.pipeline = "coherent"
    assert sim.pipeline == "coherent"


def test_the_same_choices_as_the_command_line_give_the_same_bits(murmur_exe, tmp_path):
    run_cli(murmur_exe, VICSEK_CLI + ["--n", "2000", "--seed", "1", "--steps", "20", "--out", "cli.txt"], tmp_path)
    sim = vicsek()
    assert sim.scenario == "uniform"  # a half-size and no scenario: the uniform square, as --half-size
    sim.step(20)
    sim.save(tmp_path / "py.txt")
    assert (tmp_path / "py.txt").read_bytes() == (tmp_path / "cli.txt").read_bytes()


@pytest.mark.parametrize("make, cli", [
    (lambda: mm.Simulation(1200, rule=mm.rules.Couzin(zone_attraction=10.0), scenario=mm.Scenario.uniform(),
                           half_size=6, engine="cpu", seed=2),
     ["--n", "1200", "--rule", "couzin", "--zone-attraction", "10", "--scenario", "uniform", "--half-size", "6",
      "--seed", "2"]),
    (lambda: mm.Simulation(rule=mm.rules.Gravity(softening=0.02), scenario=mm.Scenario.plummer(600),
                           pipeline="tree", engine="cpu", seed=4),
     ["--n", "600", "--force", "gravity", "--softening", "0.02", "--scenario", "plummer", "--pipeline", "tree",
      "--seed", "4"]),
    (lambda: mm.Simulation(1000, rule=mm.rules.Gravity(), engine="cpu", seed=3),
     ["--n", "1000", "--force", "gravity", "--seed", "3"]),
    (lambda: mm.Simulation(1500, rule=mm.rules.Reynolds(), scenario=mm.Scenario.dense(neighbours=6),
                           pipeline="clusters", engine="cpu", seed=5),
     ["--n", "1500", "--rule", "reynolds", "--scenario", "dense", "--neighbours", "6", "--pipeline", "clusters",
      "--seed", "5"]),
    (lambda: mm.Simulation(800, rule=mm.rules.Vicsek(), neighbourhood=mm.Topological(7), dims=2, engine="cpu",
                           seed=6),
     ["--n", "800", "--rule", "vicsek", "--topological", "7", "--dims", "2", "--seed", "6"]),
    (lambda: mm.Simulation(1000, engine="cpu"), ["--n", "1000"]),
], ids=["couzin", "gravity-plummer-tree", "gravity-default-world", "reynolds-dense-clusters", "vicsek-topological",
        "default-world"])
def test_rules_scenarios_and_neighbourhoods_equal_the_command_line(make, cli, murmur_exe, tmp_path):
    run_cli(murmur_exe, cli + ["--steps", "15", "--out", "cli.txt"], tmp_path)
    sim = make()
    sim.step(15)
    sim.save(tmp_path / "py.txt")
    assert (tmp_path / "py.txt").read_bytes() == (tmp_path / "cli.txt").read_bytes()


def test_neighbourhoods_and_scenarios_as_objects():
    # Radius() is the default: the default world keeps its pipeline.
    assert mm.Simulation(500, neighbourhood=mm.Radius(), engine="cpu").pipeline == mm.Simulation(500, engine="cpu").pipeline
    sim = mm.Simulation(500, rule=mm.rules.Vicsek(), neighbourhood=mm.Radius(1.5), dims=2, engine="cpu")
    assert sim.rule.radius == 1.5 and sim.neighbourhood == mm.Radius() and sim.pipeline == "verlet"
    with pytest.raises(ValueError, match=r"Topological\(k\)=5 runs on the rows pipeline .*, not pipeline verlet"):
        sim.neighbourhood = mm.Topological(5)
    sim.pipeline = "rows"
    sim.neighbourhood = mm.Topological(5, radius=2.0)
    assert sim.neighbourhood == mm.Topological(5, radius=2.0) and sim.params["topological"] == 5
    sim.step(2)
    sim.neighbourhood = mm.Radius()
    assert sim.params["topological"] == 0
    with pytest.raises(ValueError, match=r"Topological\(k\)=65 is invalid: .* from 0 to 64"):
        mm.Topological(65)
    with pytest.raises(ValueError, match="k must be a whole number from 1 to 64"):
        mm.Topological(0)
    with pytest.raises(ValueError, match="the cis565 rule has no one radius"):
        mm.Simulation(500, rule=mm.rules.Cis565(), neighbourhood=mm.Radius(2.0), engine="cpu")
    assert {name for name in mm.scenarios()} <= {n for n in dir(mm.Scenario) if not n.startswith("_")}
    assert mm.Simulation(scenario=mm.Scenario.dense(900, neighbours=4), engine="cpu").n == 900
    with pytest.raises(ValueError, match="n=900 and the scenario's n=800 differ"):
        mm.Simulation(900, scenario=mm.Scenario.dense(800), engine="cpu")
    with pytest.raises(ValueError, match="neighbours=0 is invalid"):
        mm.Scenario.dense(100, neighbours=0)
    with pytest.raises(TypeError, match="scenario must be a Scenario"):
        mm.Simulation(500, scenario=3, engine="cpu")
    # A rule switched on a running simulation (its parameters given, the others kept).
    sim = mm.Simulation(500, engine="cpu", half_size=20)
    sim.rule = mm.rules.Reynolds(max_speed=0.5)
    assert sim.rule.name == "reynolds" and sim.rule.max_speed == 0.5


def test_files_selections_and_scales_as_objects(tmp_path):
    rows = np.arange(48 * 7, dtype=np.float32).reshape(48, 7) / 8
    rows[:, 0] = 1 + np.arange(48) % 5
    np.savetxt(tmp_path / "b.txt", rows, fmt="%.9g")
    sim = mm.Simulation(scenario=mm.Scenario.from_file(tmp_path / "b.txt", select=[range(0, 16), (24, 39)], n=16,
                                                       scale=(4, 0.5, 2)), engine="cpu")
    kept = np.r_[0:16:2, 24:40:2]
    np.testing.assert_array_equal(sim.positions, rows[kept, 1:4] * np.float32(4))
    np.testing.assert_array_equal(sim.masses, rows[kept, 0] * np.float32(2))
    for kwargs, exc, words in [
        (dict(select="0-5"), TypeError, "select must be ranges"),
        (dict(select=[range(5, 0)]), ValueError, "a range of step 1, not empty"),
        (dict(select=[]), ValueError, "select is empty"),
        (dict(scale=(1, 2)), TypeError, "scale must be three numbers"),
        (dict(scale=(1, -2, 3)), ValueError, "scale: velocity factor=-2 is invalid"),
        (dict(frame=-1), ValueError, "frame=-1 is invalid"),
    ]:
        with pytest.raises(exc) as e:
            mm.Scenario.from_file(tmp_path / "b.txt", **kwargs)
        assert words in str(e.value) and "\n" not in str(e.value)
    # n on the simulation is the file's subset as well (as --n with a file)
    assert mm.Simulation(20, scenario=mm.Scenario.from_file(tmp_path / "b.txt"), engine="cpu").n == 20
    with pytest.raises(ValueError, match="n=40 is more than the 32 bodies select keeps"):
        mm.Simulation(scenario=mm.Scenario.from_file(tmp_path / "b.txt", select=[range(0, 16), range(24, 40)], n=40),
                      engine="cpu")
    with pytest.raises(ValueError) as e:
        mm.Simulation(scenario=mm.Scenario.from_file(tmp_path / "missing.txt"), engine="cpu")
    assert "missing.txt" in str(e.value) and "\n" not in str(e.value)


# --- observables and run ------------------------------------------------------------------------------


def test_observe_equals_the_command_lines_observables(murmur_exe, tmp_path):
    run_cli(murmur_exe, VICSEK_CLI + ["--n", "2000", "--seed", "1", "--steps", "20", "--observables", "o.csv",
                                      "--observe-every", "10", "--observables-flocks"], tmp_path)
    with open(tmp_path / "o.csv") as f:
        cli = list(csv.DictReader(f))
    sim = vicsek()
    table = sim.run(20, observe_every=10, observe_first=True, flocks=True, as_frame=False)
    assert list(table.dtype.names) == list(cli[0].keys())
    assert table["step"].tolist() == [0, 10, 20]
    for row, ref in zip(table, cli):
        for col, text in ref.items():
            if text == "":
                assert math.isnan(row[col]), col
            else:
                assert row[col] == pytest.approx(float(text), rel=1e-11, abs=1e-12), col
    obs = sim.observe(flocks=True)
    assert obs.polarization == obs["polarization"] and set(obs) == set(cli[0])
    assert obs.step == 20 and isinstance(obs.step, int)
    with pytest.raises(AttributeError, match="Observation has no 'order'; its columns: step, time, polarization"):
        obs.order


def test_gravity_observables_and_their_drift_baseline():
    sim = mm.Simulation(rule=mm.rules.Gravity(), scenario=mm.Scenario.plummer(400), engine="cpu", seed=2)
    first = sim.observe()
    assert first.energy_drift == 0.0 and first.mass == pytest.approx(1.0)
    sim.step(10)
    later = sim.observe()
    assert later.energy_drift != 0.0 and abs(later.energy_drift) < 1e-2
    sim.reset_observe_baseline()
    assert sim.observe().energy_drift == 0.0
    assert [o["column"] for o in mm.observables() if o["force"] == "gravity"][:2] == ["mass", "kinetic"]


def test_run_rows_callback_pandas_and_progress(capsys):
    sim = vicsek(n=800)
    table = sim.run(25, observe_every=10, as_frame=False)
    assert table["step"].tolist() == [10, 20] and sim.step_count == 25  # steps // k rows
    assert table.dtype["step"] == np.int64 and table.dtype["polarization"] == np.float64
    seen = []
    table = sim.run(50, observe_every=5, callback=lambda s, o: seen.append(o.step) or o.step < 40, as_frame=False)
    assert seen == [30, 35, 40] and sim.step_count == 40  # False stopped the run after the sample at 40
    with pytest.raises(TypeError, match="callback must be callable"):
        sim.run(10, observe_every=5, callback=3)
    with pytest.raises(ValueError, match="observe_every=0 is invalid"):
        sim.run(10, observe_every=0)
    empty = sim.run(5, as_frame=False)
    assert len(empty) == 0 and "polarization" in empty.dtype.names
    first = sim.run(5, observe_first=True, as_frame=False)
    assert first["step"].tolist() == [45] and sim.step_count == 50
    sim.run(3, progress=True)  # shown at once: tqdm's bar or the one line, on stderr
    assert sim.step_count == 53


def test_run_gives_a_data_frame_with_pandas_and_numpy_without(monkeypatch):
    sim = vicsek(n=500)
    pd = pytest.importorskip("pandas")
    frame = sim.run(10, observe_every=5)
    assert isinstance(frame, pd.DataFrame) and list(frame["step"]) == [5, 10]
    assert frame["polarization"].dtype == np.float64 and list(frame.columns)[:3] == ["step", "time", "polarization"]
    monkeypatch.setitem(sys.modules, "pandas", None)  # as if not installed
    table = sim.run(10, observe_every=5)
    assert isinstance(table, np.ndarray) and table["step"].tolist() == [15, 20]
    with pytest.raises(ImportError, match="as_frame=True needs pandas"):
        sim.run(5, observe_every=5, as_frame=True)


def test_progress_without_tqdm_is_one_line(monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "tqdm", None)  # as if not installed
    monkeypatch.setitem(sys.modules, "tqdm.auto", None)
    sim = vicsek(n=300)
    sim.run(10, progress=True)
    err = capsys.readouterr().err
    assert "run: step 10/10" in err and err.endswith(" s\n") and err.count("\n") == 1
    sim.run(10)  # a short run shows nothing
    assert capsys.readouterr().err == ""


def test_ctrl_c_in_run_keeps_the_samples():
    sim = vicsek(n=600)
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    timer = threading.Timer(0.5, lambda: os.kill(os.getpid(), signal.SIGINT))
    timer.start()
    try:
        table = sim.run(50_000_000, observe_every=100, as_frame=False, progress=False)
    finally:
        timer.cancel()
        signal.signal(signal.SIGINT, previous)
    assert 0 < sim.step_count < 50_000_000
    assert len(table) == sim.step_count // 100 and table["step"].tolist() == list(range(100, len(table) * 100 + 1, 100))


# --- snapshots and set_state ------------------------------------------------------------------------


def read_state(path):
    rows = np.loadtxt(path, comments="#", dtype=np.float64, ndmin=2)
    return rows[:, 1:4].astype(np.float32), rows[:, 4:7].astype(np.float32), rows[:, 0].astype(np.float32)


def test_snapshot_is_owned_and_whole(tmp_path):
    sim = vicsek(n=1000, pipeline="coherent")  # keeps the bodies in cell order inside the engine
    sim.step(3)
    sim.set_state(species=np.arange(1000) % 7)
    snap = sim.snapshot()
    assert snap.step == 3 and snap.positions.shape == (1000, 3) and snap.ids.dtype == np.uint32
    sim.save(tmp_path / "s.txt")  # the state file's own reader of the engine, in id order
    p, v, m = read_state(tmp_path / "s.txt")
    np.testing.assert_array_equal(snap.positions, p)
    np.testing.assert_array_equal(snap.velocities, v)
    np.testing.assert_array_equal(snap.masses, m)
    np.testing.assert_array_equal(snap.species, np.arange(1000) % 7)
    np.testing.assert_array_equal(snap.ids, np.arange(1000))
    for a in (snap.positions, snap.velocities, snap.masses, snap.species, snap.ids):
        assert a.flags.owndata or a.base is not None and not isinstance(a.base, np.ndarray)
        assert a.flags.writeable
    kept = snap.positions.copy()
    again = sim.snapshot()
    sim.step(2)
    np.testing.assert_array_equal(snap.positions, kept)  # nothing the next call reuses
    assert not np.shares_memory(again.positions, sim.snapshot().positions)


def test_set_state_refuses_positions_it_would_wrap():
    sim = vicsek(n=500)
    p = sim.positions
    far = np.full((500, 3), 1e6, np.float32)
    far[:, 2] = 0
    with pytest.raises(ValueError) as e:
        sim.set_state(positions=far)
    msg = str(e.value)
    assert "positions[0, 0] = 1e+06 lies outside the world [-10, 10] of the periodic boundary" in msg and "\n" not in msg
    np.testing.assert_array_equal(sim.positions, p)
    edge = p.copy()
    edge[0, :2] = 10.0
    sim.set_state(positions=edge)  # the faces themselves are inside
    # An open world has no box: anything finite goes.
    couzin = mm.Simulation(200, rule=mm.rules.Couzin(), engine="cpu")
    couzin.set_state(positions=np.full((200, 3), 1e5, np.float32))


# --- trajectories ----------------------------------------------------------------------------------------


def test_write_trajectory_equals_the_command_line_and_restarts(murmur_exe, tmp_path):
    h5py = pytest.importorskip("h5py")
    run_cli(murmur_exe, VICSEK_CLI + ["--n", "2000", "--seed", "1", "--steps", "20", "--trajectory", "cli.h5",
                                      "--trajectory-every", "10"], tmp_path)
    sim = vicsek()
    with sim.write_trajectory(tmp_path / "py.h5", every=10) as traj:
        sim.step(7)
        sim.step(13)
    assert traj.frames == 3 and os.path.exists(tmp_path / "py.xdmf")
    with h5py.File(tmp_path / "cli.h5") as a, h5py.File(tmp_path / "py.h5") as b:
        assert list(a["step"]) == list(b["step"]) == [0, 10, 20]
        for name in a["frames"]:
            for ds in ("positions", "velocities", "species"):
                np.testing.assert_array_equal(a["frames"][name][ds][()], b["frames"][name][ds][()])
        assert a.attrs["params"] == b.attrs["params"]
    # A restart from frame 1 (step 10) goes on as the command line's restart does.
    run_cli(murmur_exe, ["--scenario", f"file:{tmp_path / 'py.h5'}@1", "--steps", "5", "--out", "cli.txt"], tmp_path)
    back = mm.Simulation(scenario=mm.Scenario.from_file(tmp_path / "py.h5", frame=1), engine="cpu")
    assert back.step_count == 10 and back.rule.noise == 0.3
    back.step(5)
    back.save(tmp_path / "py.txt")
    assert (tmp_path / "py.txt").read_bytes() == (tmp_path / "cli.txt").read_bytes()
    with pytest.raises(ValueError, match="a trajectory is an HDF5 file"):
        sim.write_trajectory(tmp_path / "run.txt")
    with pytest.raises(ValueError, match="every=0 is invalid"):
        sim.write_trajectory(tmp_path / "x.h5", every=0)


def test_run_writes_its_samples_into_the_trajectory(tmp_path):
    h5py = pytest.importorskip("h5py")
    sim = vicsek(n=600)
    w = sim.write_trajectory(tmp_path / "r.h5", every=5)
    table = sim.run(10, observe_every=5, as_frame=False)
    w.close()
    with h5py.File(tmp_path / "r.h5") as f:
        obs = f["observables"][()]
        assert obs.shape == (2, len(table.dtype.names))
        np.testing.assert_array_equal(obs[:, 0], [5, 10])
        assert list(f["step"]) == [0, 5, 10]


# --- the benchmark and frames -----------------------------------------------------------------------------


def test_bench_runs_in_this_process(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    table = mm.bench(n=[1200], pipeline=["coherent", "rows"], engine="cpu", steps=2, warmup=1, repeats=1,
                     as_frame=False)
    assert table["pipeline"].tolist() == ["coherent", "rows"] and (table["sim_ms_median"] > 0).all()
    assert table.dtype["n"] == np.int64 and np.isnan(table["block_size"]).all()
    assert os.listdir(tmp_path) == []  # no CSV, no sidecar
    vic = mm.bench(rule="vicsek", n=1200, pipeline="rows", engine="cpu", dims=2, steps=2, warmup=1, repeats=1,
                   as_frame=False)
    assert vic["rule"].tolist() == ["vicsek"] and vic["force"].tolist() == ["boids"]
    with pytest.raises(ValueError, match="one local rule per sweep"):
        mm.bench(rule=["vicsek", "couzin"], engine="cpu")
    with pytest.raises(ValueError, match="bench: pipeline='fast' is invalid: one of: naive"):
        mm.bench(pipeline="fast", engine="cpu")
    with pytest.raises(TypeError, match="bench: n must be an int"):
        mm.bench(n=["x"], engine="cpu")


def test_show_and_animate_give_frames(offscreen):
    sim = vicsek(n=500)
    frame = offscreen(lambda: sim.show(width=64, height=48, draw="points"))
    assert isinstance(frame, mm.Frame) and frame.array.shape == (48, 64, 3)
    assert frame._repr_png_()[:8] == b"\x89PNG\r\n\x1a\n"
    anim = sim.animate(20, every=10, width=32, height=32, draw="points")
    assert [f.step for f in anim.frames] == [0, 10, 20] and "<script>" in anim._repr_html_()
    with pytest.raises(ValueError, match="render: width=0 is invalid: a whole number from 16 to 8192"):
        sim.render(0, 0)
    with pytest.raises(ValueError, match="render: draw='voxels' is invalid"):
        sim.render(64, 64, draw="voxels")


def test_show_displays_inline_under_ipython(monkeypatch, offscreen):
    import types
    shown = []
    ipython = types.ModuleType("IPython")
    ipython.get_ipython = lambda: object()  # a running shell
    display = types.ModuleType("IPython.display")
    display.display = shown.append
    ipython.display = display
    monkeypatch.setitem(sys.modules, "IPython", ipython)
    monkeypatch.setitem(sys.modules, "IPython.display", display)
    sim = vicsek(n=300)
    assert offscreen(lambda: sim.show(width=32, height=32, draw="points")) is None
    assert len(shown) == 1 and isinstance(shown[0], mm.Frame) and shown[0].array.shape == (32, 32, 3)


# --- old forms ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("call", [
    lambda: mm.Simulation(500, force="boids", engine="cpu"),
    lambda: mm.Simulation(500, scenario="dense", engine="cpu"),
    lambda: mm.Simulation(500, params={"boids": {"maxSpeed": 2.0}}, engine="cpu"),
    lambda: mm.Simulation(500, rule="reynolds", engine="cpu"),
    lambda: mm.Simulation(500, engine="cpu").set_params({"halfSize": 50}),
    lambda: mm.rules(),
], ids=["force", "scenario-str", "params", "rule-str", "set_params", "rules()"])
def test_old_forms_work_and_warn(call):
    with pytest.warns(DeprecationWarning, match="deprecated and goes in the next release"):
        call()


def test_old_forms_warn_at_the_callers_line(tmp_path):
    np.savetxt(tmp_path / "b.txt", np.ones((4, 7)))
    with pytest.warns(DeprecationWarning) as record:
        mm.Simulation(scenario=f"file:{tmp_path / 'b.txt'}", select="0-1", engine="cpu")
    assert {os.path.basename(w.filename) for w in record} == {"test_api.py"}


def test_the_new_api_does_not_warn():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        sim = vicsek(n=500)
        sim.rule.noise = 0.4
        sim.run(10, observe_every=5, as_frame=False)
        sim.snapshot()


# --- errors --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("arrays, exc, words", [
    (dict(positions=np.zeros((10, 3), np.float32)), ValueError, "positions has shape (10, 3), expected (500, 3)"),
    (dict(positions=np.zeros((3, 500), np.float32)), ValueError, "positions has shape (3, 500), expected (500, 3)"),
    (dict(velocities=np.zeros((500, 3, 1))), ValueError, "velocities has shape (500, 3, 1)"),
    (dict(positions=np.zeros((500, 3), np.int64)), TypeError, "positions must be float32 (or float64"),
    (dict(positions=np.zeros((500, 3), np.complex64)), TypeError, "not complex64"),
    (dict(positions=[["a", "b", "c"]] * 500), TypeError, "positions must be float32"),
    (dict(positions=[[1, 2], [3]]), TypeError, "positions is not an array of numbers"),
    (dict(velocities=np.full((500, 3), np.nan)), ValueError, "velocities has a value that is not finite (index 0)"),
    (dict(velocities=np.full((500, 3), np.inf, np.float32)), ValueError, "not finite"),
    (dict(velocities=np.full((500, 3), 1e300)), ValueError, "velocities has a value beyond float32 (flat index 0 is 1e+300)"),
    (dict(masses=np.full(500, -1.0)), ValueError, "masses must be >= 0 (index 0 is -1"),
    (dict(species=np.full(500, 300)), ValueError, "species must be 0 to 255 (index 0 is 300)"),
])
def test_bad_arrays_raise_one_line_and_change_nothing(arrays, exc, words):
    sim = vicsek(n=500)
    sim.step(2)
    before = sim.snapshot()
    with pytest.raises(exc) as e:
        sim.set_state(**arrays)
    assert words in str(e.value) and "\n" not in str(e.value)
    after = sim.snapshot()
    np.testing.assert_array_equal(after.positions, before.positions)
    np.testing.assert_array_equal(after.velocities, before.velocities)
    assert after.step == 2
    sim.step(1)  # usable after the error
    assert sim.step_count == 3


@pytest.mark.parametrize("kwargs, exc, words", [
    (dict(n=0), ValueError, "n=0 is invalid: a whole number from 1 to 1073741824"),
    (dict(n=2**40), ValueError, "n=1099511627776 is invalid"),
    (dict(n=1.5), TypeError, "n must be an int, not float"),
    (dict(rule="vicsek!"), ValueError, "rule='vicsek!' is invalid"),
    (dict(rule=mm.rules.Vicsek), TypeError, "rule must be a rule object"),
    (dict(half_size=float("inf")), ValueError, "half_size=inf is invalid: world half-size must be a finite number > 0"),
    (dict(half_size=1e300), ValueError, "half_size=1e+300 is invalid"),
    (dict(half_size=2.0), ValueError, "half_size=2 is invalid: the world half-size must be at least the largest rule radius (5)"),
    (dict(dims=2.5), ValueError, "dims=2.5 is invalid: dimensions must be a whole number from 2 to 3"),
    (dict(boundary=3), TypeError, "boundary=3: must be a str, one of: wrap, periodic, reflect, open"),
    (dict(pipeline="tree"), ValueError, "pipeline tree: gravity only"),
    (dict(block_size=48), ValueError, "block_size=48 is invalid: block size must be a multiple of 32 from 32 to 1024"),
    (dict(seed=-1), ValueError, "seed=-1 is invalid"),
    (dict(engine="gpu"), ValueError, "engine='gpu' is invalid: one of: cpu, cuda"),
    (dict(neighbourhood=7), TypeError, "neighbourhood must be mm.Radius(...) or mm.Topological(k)"),
    (dict(neighbourhood=mm.Topological(7), pipeline="verlet"), ValueError,
     "Topological(k)=7 runs on the rows pipeline"),
    (dict(rule=mm.rules.Vicsek(speed=50.0), half_size=20), ValueError, "rule.speed=50 is invalid with a vicsek time step"),
])
@pytest.mark.filterwarnings("ignore::DeprecationWarning")  # rule='vicsek!' is the old str form
def test_bad_arguments_name_themselves(kwargs, exc, words):
    args = dict(engine="cpu")
    args.update(kwargs)
    n = args.pop("n", 500)
    with pytest.raises(exc) as e:
        mm.Simulation(n, **args)
    assert words in str(e.value) and "\n" not in str(e.value) and "--params" not in str(e.value)


def test_huge_counts_and_odd_types_are_one_line_errors():
    sim = vicsek(n=300)
    for call, exc, words in [
        (lambda: sim.step(2**70), ValueError, "step: k=1180591620717411303424 is invalid"),
        (lambda: sim.step(np.int64(-3)), ValueError, "step: k=-3 is invalid"),
        (lambda: sim.run(2**70), ValueError, "run: steps=1180591620717411303424 is invalid"),
        (lambda: sim.observe(flocks=1), TypeError, "observe: flocks must be a bool"),
        (lambda: sim.observe(milling_min_size=0), ValueError, "milling_min_size=0 is invalid"),
        (lambda: sim.render(2**40, 64), ValueError, "render: width=1099511627776 is invalid"),
        (lambda: sim.write_trajectory(3), TypeError, "write_trajectory: path must be a str"),
        (lambda: mm.Scenario.from_file("x.h5", frame=2**60), ValueError, "frame=1152921504606846976 is invalid"),
        (lambda: mm.Simulation(500, engine="cpu", seed=2**64), ValueError, "seed=18446744073709551616 is invalid"),
        (lambda: setattr(sim.rule, "noise", np.float64("nan")), ValueError, "rule.noise=nan is invalid"),
        (lambda: setattr(sim.rule, "noise", np.float32(7)), ValueError, "rule.noise=7.0 is invalid"),
    ]:
        with pytest.raises(exc) as e:
            call()
        assert words in str(e.value) and "\n" not in str(e.value)
    sim.rule.noise = np.float32(0.25)  # NumPy scalars are numbers
    assert sim.rule.noise == 0.25 and sim.step_count == 0
    sim.step(np.int64(2))
    assert sim.step_count == 2


def test_two_threads_on_one_simulation_and_on_two():
    sim = vicsek(n=400)
    errors = []

    def reader():
        for _ in range(200):
            try:
                sim.observe()
                sim.snapshot()
                sim.rule.noise = 0.2
            except RuntimeError as e:
                if "busy in another thread" not in str(e):
                    errors.append(e)

    def stepper():
        while True:  # refused while the reader holds the simulation: try again
            try:
                sim.step(5000)
                return
            except RuntimeError as e:
                if "busy in another thread" not in str(e):
                    errors.append(e)
                    return

    worker = threading.Thread(target=stepper)
    worker.start()
    reader()
    worker.join()
    assert not errors and sim.step_count == 5000
    # Two simulations in two threads are independent, and equal to one run alone.
    results = {}

    def own(i):
        s = vicsek(n=700, seed=9)
        s.step(30)
        results[i] = s.positions

    threads = [threading.Thread(target=own, args=(i,)) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    alone = vicsek(n=700, seed=9)
    alone.step(30)
    np.testing.assert_array_equal(results[0], alone.positions)
    np.testing.assert_array_equal(results[1], alone.positions)


# --- the docstrings' examples ------------------------------------------------------------------------------


@pytest.mark.parametrize("module", [mm, mm.rules, murmuration.simulation], ids=lambda m: m.__name__)
def test_docstring_examples_run(module):
    flags = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE | doctest.IGNORE_EXCEPTION_DETAIL
    finder = doctest.DocTestFinder()
    runner = doctest.DocTestRunner(optionflags=flags)
    globs = {"np": np, "mm": mm}
    tests = [t for t in finder.find(module, module.__name__, globs=globs) if t.examples]
    assert tests
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        for t in tests:
            runner.run(t)
    assert runner.failures == 0, f"{runner.failures} docstring example(s) failed (run with -s to see them)"


def test_every_public_name_has_an_example():
    names = [getattr(mm, n) for n in mm.__all__ if n != "rules"]
    names += [getattr(mm.Simulation, n) for n in dir(mm.Simulation) if not n.startswith("_")]
    names += [getattr(mm.rules, n) for n in mm.rules.__all__]
    for cls in [getattr(mm, n) for n in mm.__all__ if isinstance(getattr(mm, n), type)]:
        for name, x in vars(cls).items():
            if not name.startswith("_") and (callable(x) or isinstance(x, (property, classmethod, staticmethod))):
                names.append(x.__func__ if isinstance(x, (classmethod, staticmethod)) else x)
    names += [mm.rules.Rule.fields.__func__, mm.rules.Rule.describe.__func__, mm.rules.Rule.copy,
              mm.rules.Rule.as_dict]
    missing = [getattr(x.fget if isinstance(x, property) else x, "__name__", repr(x)) for x in names
               if ">>>" not in (x.__doc__ or "")]
    assert not missing
