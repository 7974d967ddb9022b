"""Simulations and what they are made of: neighbourhoods, scenarios, observations, snapshots,
trajectories, frames, and the benchmark. Everything here is also reachable as ``murmuration.<name>``.
"""

from __future__ import annotations

import base64
import json
import math
import numbers
import os
import struct
import sys
import time
import warnings
import zlib
from typing import Any, Callable, Dict, Iterable, Iterator, List, Mapping, Optional, Sequence, Tuple, Union

import numpy as np

from . import _support as _n
from . import rules as _rules

_native = _n.native
PathLike = Union[str, "os.PathLike[str]"]


def _path(what: str, path: Any) -> str:
    """A path argument as str; TypeError naming `what` for anything else (bytes included)."""
    try:
        text = os.fspath(path)
    except TypeError:
        text = None
    if not isinstance(text, str):
        raise TypeError(f"{what}: path must be a str or os.PathLike, not {type(path).__name__}")
    return text


def _deprecated(old: str, new: str, depth: int = 0) -> None:
    """Warns at the caller's line (`depth` more frames up from the public function that calls this),
    where Python's default filters show a DeprecationWarning in a script."""
    warnings.warn(f"{old} is deprecated and goes in the next release; use {new}", DeprecationWarning,
                  stacklevel=3 + depth)


# --- neighbourhoods --------------------------------------------------------------------------------


class Radius:
    """Metric neighbours: every body closer than the rule's radius (the default neighbourhood).

    ``radius`` sets the radius of a rule that has one (Vicsek's ``radius``); None keeps the rule's.
    The boids rules have three radii and Couzin's zones, set on the rule itself.

    >>> import murmuration as mm
    >>> sim = mm.Simulation(500, rule=mm.rules.Vicsek(), neighbourhood=mm.Radius(1.5), dims=2, engine="cpu")
    >>> sim.rule.radius
    1.5
    """

    def __init__(self, radius: Optional[float] = None):
        self.radius = radius  #: the rule's radius, or None to keep it

    def __repr__(self) -> str:
        return "Radius()" if self.radius is None else f"Radius({self.radius!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Radius) and other.radius == self.radius


class Topological:
    """Topological neighbours: each body's ``k`` nearest (1 to 64), only those closer than ``radius``
    when it is given (the cutoff; None: no cutoff). Runs on the rows pipeline.

    >>> import murmuration as mm
    >>> sim = mm.Simulation(500, rule=mm.rules.Vicsek(), neighbourhood=mm.Topological(7), dims=2, engine="cpu")
    >>> sim.neighbourhood, sim.pipeline
    (Topological(7), 'rows')
    """

    def __init__(self, k: int, radius: Optional[float] = None):
        _n.checked("topological", k, "Topological(k)")
        if k == 0:
            raise ValueError("Topological(k)=0 is invalid: k must be a whole number from 1 to 64 (Radius() is metric)")
        if radius is not None:
            _n.checked("topologicalRadius", radius, "Topological(radius)")
        self.k = int(k)  #: the neighbours each body takes
        self.radius = None if radius is None or radius == 0 else float(radius)  #: the cutoff, or None

    def __repr__(self) -> str:
        return f"Topological({self.k})" if self.radius is None else f"Topological({self.k}, radius={self.radius!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Topological) and (other.k, other.radius) == (self.k, self.radius)


Neighbourhood = Union[Radius, Topological]


# --- scenarios -------------------------------------------------------------------------------------


class Scenario:
    """Where the bodies start: a scenario of the scenario table, or a file's bodies. Make one with
    the class methods (``Scenario.dense(n)``, ``Scenario.from_file(path)``, ...); the same scenario,
    N and seed give the same bodies as ``murmur --scenario``.

    >>> import murmuration as mm
    >>> mm.Scenario.dense(1000, neighbours=4)
    Scenario.dense(n=1000, neighbours=4.0)
    """

    def __init__(self, name: str, n: Optional[int] = None, neighbours: Optional[float] = None,
                 path: Optional[str] = None, select: str = "", scale: Tuple[float, float, float] = (1.0, 1.0, 1.0)):
        self.name = name  #: the scenario's name ("file" for a file's bodies)
        self.n = n  #: bodies (None: the simulation's n, or the command line's default)
        self.neighbours = neighbours  #: dense: mean neighbours per boid (None: 8)
        self.path = path  #: from_file: the file, with @K for a trajectory's frame
        self._select = select
        self.scale = scale  #: from_file: (length, velocity, mass) factors

    @staticmethod
    def _n(n: Optional[int]) -> Optional[int]:
        return None if n is None else _n.count("n", n, 1, _native.max_bodies())

    @classmethod
    def uniform(cls, n: Optional[int] = None) -> "Scenario":
        """Boids at uniform random positions in the world cube (or square) of the simulation's
        ``half_size``, random directions at the rule's speed.

        >>> import murmuration as mm
        >>> mm.Simulation(rule=mm.rules.Cis565(), scenario=mm.Scenario.uniform(800), half_size=40, engine="cpu").n
        800
        """
        return cls("uniform", cls._n(n))

    @classmethod
    def dense(cls, n: Optional[int] = None, neighbours: Optional[float] = None) -> "Scenario":
        """Uniform boids in a world sized to N so that each has ``neighbours`` others within the
        largest rule radius on average (None: 8, as ``--scenario dense``; the default world, with no
        scenario given, is dense at 4).

        >>> import murmuration as mm
        >>> mm.Simulation(scenario=mm.Scenario.dense(1000, neighbours=4), engine="cpu").scenario
        'dense'
        """
        if neighbours is not None:
            neighbours = _n.number("Scenario.dense: neighbours", neighbours, 0, 1000)
        return cls("dense", cls._n(n), neighbours)

    @classmethod
    def plummer(cls, n: Optional[int] = None) -> "Scenario":
        """A Plummer sphere in N-body units (gravity).

        >>> import murmuration as mm
        >>> mm.Simulation(scenario=mm.Scenario.plummer(500), engine="cpu").force
        'gravity'
        """
        return cls("plummer", cls._n(n))

    @classmethod
    def galaxies(cls, n: Optional[int] = None) -> "Scenario":
        """Two disk galaxies on a collision course (gravity; the default world of ``rules.Gravity``).

        >>> import murmuration as mm
        >>> mm.Scenario.galaxies(2000).name
        'galaxies'
        """
        return cls("galaxies", cls._n(n))

    @classmethod
    def galaxy(cls, n: Optional[int] = None) -> "Scenario":
        """One disk galaxy: halo, bulge and disk (gravity).

        >>> import murmuration as mm
        >>> mm.Scenario.galaxy(2000).n
        2000
        """
        return cls("galaxy", cls._n(n))

    @classmethod
    def named(cls, name: str, n: Optional[int] = None) -> "Scenario":
        """The scenario of this name in the scenario table (``scenarios()``).

        >>> import murmuration as mm
        >>> mm.Scenario.named("plummer", 100)
        Scenario.plummer(n=100)
        """
        if not isinstance(name, str):
            raise TypeError(f"scenario must be a Scenario or a str, not {type(name).__name__}")
        if name not in _native.scenarios():
            raise ValueError(f"scenario={name!r} is invalid: one of: {', '.join(_native.scenarios())}")
        return cls(name, cls._n(n))

    @classmethod
    def from_file(cls, path: PathLike, frame: Union[int, str, None] = None,
                  select: Optional[Iterable[Union[range, int, Tuple[int, int]]]] = None, n: Optional[int] = None,
                  scale: Optional[Sequence[float]] = None) -> "Scenario":
        """The bodies of a file: a state written by ``Simulation.save`` or ``murmur --out`` (with its
        parameters and step), a plain ``mass x y z vx vy vz`` table, or a frame of an HDF5 trajectory
        (``write_trajectory``, ``--trajectory``; ``frame``: its index from 0, or None or "last" for
        the last), which restarts the run there.

        select: the bodies to keep, in file order: ranges (``range(0, 16384)``), single indices,
        or inclusive (first, last) pairs, ascending. n: then an even subset of n of them.
        scale: (length, velocity, mass) factors on the file's values.

        >>> import murmuration as mm, numpy as np, tempfile, os
        >>> d = tempfile.mkdtemp(); p = os.path.join(d, "bodies.txt")
        >>> np.savetxt(p, np.c_[np.ones(64), np.random.default_rng(1).normal(size=(64, 6))])
        >>> mm.Simulation(scenario=mm.Scenario.from_file(p, select=[range(0, 32)], n=16), engine="cpu").n
        16
        """
        text = _path("Scenario.from_file", path)
        if frame is not None:
            if frame == "last":
                text += "@last"
            else:
                text += "@" + str(_n.count("Scenario.from_file: frame", frame, 0, 2**53))
        ranges = []
        if select is not None:
            if isinstance(select, (str, bytes)):
                raise TypeError("Scenario.from_file: select must be ranges, indices or (first, last) pairs, "
                                f"not {type(select).__name__}")
            for item in select:
                if isinstance(item, range):
                    if item.step != 1 or len(item) == 0:
                        raise ValueError(f"Scenario.from_file: select has {item!r}; a range of step 1, not empty")
                    ranges.append((item.start, item.stop - 1))
                elif isinstance(item, tuple) and len(item) == 2:
                    ranges.append((_n.count("select: first", item[0], 0, 2**53),
                                   _n.count("select: last", item[1], 0, 2**53)))
                else:
                    i = _n.count("select: index", item, 0, 2**53)
                    ranges.append((i, i))
            if not ranges:
                raise ValueError("Scenario.from_file: select is empty (None keeps every body)")
        factors = (1.0, 1.0, 1.0)
        if scale is not None:
            try:
                factors = tuple(scale)  # type: ignore[assignment]
            except TypeError:
                factors = ()  # type: ignore[assignment]
            if isinstance(scale, (str, bytes)) or len(factors) != 3:
                raise TypeError(f"Scenario.from_file: scale must be three numbers (length, velocity, mass), not {scale!r}")
            factors = tuple(_n.number(f"scale: {what} factor", f, 0, 1e30)
                            for what, f in zip(("length", "velocity", "mass"), factors))  # type: ignore[assignment]
        sel = ",".join(f"{a}-{b}" if a != b else f"{a}" for a, b in ranges)
        return cls("file", cls._n(n), path=text, select=sel, scale=factors)

    @property
    def select(self) -> str:
        """from_file: the bodies kept, as 0-based inclusive ranges ("0-16383,32768-40959"; "" = all).

        >>> import murmuration as mm
        >>> mm.Scenario.from_file("bodies.txt", select=[range(0, 100), 200]).select
        '0-99,200'
        """
        return self._select

    def __repr__(self) -> str:
        if self.name == "file":
            extra = "".join([f", select={self._select!r}" if self._select else "",
                             f", n={self.n}" if self.n is not None else "",
                             f", scale={self.scale!r}" if self.scale != (1.0, 1.0, 1.0) else ""])
            return f"Scenario.from_file({self.path!r}{extra})"
        args = [f"n={self.n}"] if self.n is not None else []
        if self.neighbours is not None:
            args.append(f"neighbours={self.neighbours!r}")
        return f"Scenario.{self.name}({', '.join(args)})"


# --- records -----------------------------------------------------------------------------------------


class Observation(Mapping[str, float]):
    """One sample of the observables: ``step``, ``time`` and the ``--observables`` CSV's columns for
    the simulation's force (docs/observables.md), by attribute and by key. A value not computed
    (an empty CSV cell) is NaN.

    >>> import murmuration as mm
    >>> obs = mm.Simulation(800, engine="cpu", seed=2).observe()
    >>> obs.polarization == obs["polarization"], obs.step
    (True, 0)
    """

    __slots__ = ("_values",)

    def __init__(self, values: Dict[str, float]):
        object.__setattr__(self, "_values", values)

    def __getitem__(self, key: str) -> float:
        return self._values[key]

    def __getattr__(self, name: str) -> float:
        try:
            return self._values[name]
        except KeyError:
            raise AttributeError(f"Observation has no {name!r}; its columns: {', '.join(self._values)}") from None

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("an Observation is read-only")

    def __iter__(self) -> Iterator[str]:
        return iter(self._values)

    def __len__(self) -> int:
        return len(self._values)

    def __repr__(self) -> str:
        return "Observation(" + ", ".join(f"{k}={v:.6g}" for k, v in self._values.items()) + ")"


class Snapshot:
    """The state at one step as NumPy arrays the caller owns (nothing aliases a buffer of the
    simulation): ``positions`` and ``velocities`` float32 (n, 3), ``masses`` float32 (n,),
    ``species`` uint8 (n,), ``ids`` uint32 (n,), all in id order (row i is body i), and ``step``.

    >>> import murmuration as mm
    >>> snap = mm.Simulation(800, engine="cpu").snapshot()
    >>> snap.positions.shape, snap.ids[:3], snap.step
    ((800, 3), array([0, 1, 2], dtype=uint32), 0)
    """

    __slots__ = ("positions", "velocities", "masses", "species", "ids", "step")

    def __init__(self, positions: np.ndarray, velocities: np.ndarray, masses: np.ndarray, species: np.ndarray,
                 ids: np.ndarray, step: int):
        self.positions = positions  #: float32 (n, 3)
        self.velocities = velocities  #: float32 (n, 3)
        self.masses = masses  #: float32 (n,)
        self.species = species  #: uint8 (n,)
        self.ids = ids  #: uint32 (n,): 0..n-1
        self.step = step  #: the step the state is at

    def __repr__(self) -> str:
        return f"Snapshot(n={len(self.ids)}, step={self.step})"


def _png(rgb: np.ndarray) -> bytes:
    """An RGB uint8 (h, w, 3) array as PNG bytes."""
    h, w, _ = rgb.shape
    raw = b"".join(b"\x00" + rgb[y].tobytes() for y in range(h))

    def chunk(tag: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + tag + data + struct.pack(">I", zlib.crc32(tag + data) & 0xFFFFFFFF)

    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(raw, 6)) + chunk(b"IEND", b""))


class Frame:
    """One rendered frame: ``array`` (uint8 (h, w, 3)); shown inline by Jupyter (PNG).

    >>> import murmuration as mm
    >>> frame = mm.Frame(np.zeros((16, 16, 3), np.uint8))
    >>> frame.png()[:4]
    b'\\x89PNG'
    """

    def __init__(self, array: np.ndarray, step: int = 0):
        self.array = array  #: uint8 (height, width, 3)
        self.step = step  #: the step it shows

    def png(self) -> bytes:
        """The frame as PNG bytes (``open("f.png", "wb").write(frame.png())``).

        >>> import murmuration as mm, numpy as np
        >>> len(mm.Frame(np.zeros((16, 16, 3), np.uint8)).png()) > 50
        True
        """
        return _png(self.array)

    def _repr_png_(self) -> bytes:
        return self.png()

    def __repr__(self) -> str:
        h, w, _ = self.array.shape
        return f"Frame({w}x{h}, step={self.step})"


class Animation:
    """Frames of a run (``Simulation.animate``); shown inline by Jupyter as a looping animation.

    >>> import murmuration as mm
    >>> anim = mm.Animation([mm.Frame(np.zeros((16, 16, 3), np.uint8))], fps=10)
    >>> len(anim.frames), "<img" in anim._repr_html_()
    (1, True)
    """

    def __init__(self, frames: List[Frame], fps: float = 15):
        self.frames = frames  #: the Frame objects, in order
        self.fps = fps  #: frames per second when shown

    def _repr_html_(self) -> str:
        ident = f"murmur{id(self):x}"
        srcs = json.dumps(["data:image/png;base64," + base64.b64encode(f.png()).decode() for f in self.frames])
        delay = int(1000 / max(self.fps, 0.1))
        return (f'<img id="{ident}" src="{json.loads(srcs)[0] if self.frames else ""}"/>'
                f"<script>(function(){{var s={srcs},i=0,e=document.getElementById('{ident}');"
                f"setInterval(function(){{i=(i+1)%s.length;e.src=s[i];}},{delay});}})();</script>")

    def save(self, folder: PathLike) -> List[str]:
        """Writes the frames as numbered PNG files (frame_00000.png, ...) into `folder`; their paths.

        >>> import murmuration as mm, tempfile
        >>> len(mm.Animation([mm.Frame(np.zeros((16, 16, 3), np.uint8))]).save(tempfile.mkdtemp()))
        1
        """
        folder = _path("Animation.save", folder)
        os.makedirs(folder, exist_ok=True)
        paths = []
        for i, f in enumerate(self.frames):
            p = os.path.join(folder, f"frame_{i:05d}.png")
            with open(p, "wb") as out:
                out.write(f.png())
            paths.append(p)
        return paths

    def __repr__(self) -> str:
        return f"Animation({len(self.frames)} frames)"


# --- tables -----------------------------------------------------------------------------------------


def _table(rows: List[Dict[str, Any]], columns: List[str], as_frame: Optional[bool]) -> Any:
    """Rows as a NumPy structured array (numbers float64 or int64, text object), or a pandas
    DataFrame when pandas is installed (as_frame None) or asked for (True)."""
    dtypes = []
    for c in columns:
        values = [r.get(c) for r in rows]
        if c == "step":
            dtypes.append((c, np.int64))
        elif all(isinstance(v, (int, np.integer)) and not isinstance(v, bool) for v in values) and values:
            dtypes.append((c, np.int64))
        elif all(v is None or (isinstance(v, (int, float, np.number)) and not isinstance(v, bool)) for v in values):
            dtypes.append((c, np.float64))
        else:
            dtypes.append((c, object))
    arr = np.zeros(len(rows), dtype=dtypes)
    for i, r in enumerate(rows):
        for c, dt in dtypes:
            v = r.get(c)
            arr[c][i] = (math.nan if v is None and dt is np.float64 else v)
    if as_frame is False:
        return arr
    try:
        import pandas as pd  # type: ignore[import-not-found]
    except ImportError:
        if as_frame:
            raise ImportError("as_frame=True needs pandas (pip install pandas)") from None
        return arr
    return pd.DataFrame.from_records(arr, columns=columns)


class _Progress:
    """A progress display for a long run: tqdm when installed, else one line on stderr; shown only
    once the run has taken a second."""

    def __init__(self, total: int, enabled: Optional[bool]):
        self.total, self.done, self.start = total, 0, time.monotonic()
        self.enabled = enabled is not False and total > 0
        self.at_once = enabled is True
        self.bar: Any = None
        self.shown = False
        self.last = 0.0
        if self.enabled:
            try:
                from tqdm.auto import tqdm  # type: ignore[import-not-found]
                self.bar = tqdm(total=total, unit="step", delay=0 if enabled else 1.0, leave=True)
            except ImportError:
                self.bar = None

    def update(self, done: int) -> None:
        if not self.enabled:
            return
        if self.bar is not None:
            self.bar.update(done - self.done)
        else:
            now = time.monotonic()
            if (self.at_once or now - self.start >= 1.0) and (now - self.last >= 0.5 or done == self.total):
                rate = done / max(now - self.start, 1e-9)
                sys.stderr.write(f"\rrun: step {done}/{self.total} ({rate:.0f} steps/s)")
                sys.stderr.flush()
                self.shown, self.last = True, now
        self.done = done

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
        elif self.shown:
            sys.stderr.write(f"\rrun: step {self.done}/{self.total} in {time.monotonic() - self.start:.1f} s\n")
            sys.stderr.flush()


class TrajectoryWriter:
    """A trajectory being written (``Simulation.write_trajectory``): HDF5 frames every ``every``
    steps and the XDMF index beside it, as ``murmur --trajectory`` writes them. Every frame is
    complete once written; ``close()`` (or the simulation's end) finishes the file.

    >>> import murmuration as mm, tempfile, os
    >>> sim = mm.Simulation(500, engine="cpu")
    >>> with sim.write_trajectory(os.path.join(tempfile.mkdtemp(), "run.h5"), every=5) as traj:
    ...     sim.step(10)
    >>> traj.frames
    3
    """

    def __init__(self, sim: "Simulation", path: str, every: int):
        self.path = path  #: the HDF5 file (the XDMF file is beside it)
        self.every = every  #: steps between frames
        self._sim = sim
        self._native = _n.call(_native.Trajectory, sim._s, path)
        self._next = sim.step_count
        self._frames = 0
        self._due()

    def _due(self) -> None:
        if self._native is not None and self._sim.step_count >= self._next:
            _n.call(self._native.frame, self._sim._s)
            self._next = self._sim.step_count + self.every

    @property
    def frames(self) -> int:
        """Frames written so far.

        >>> import murmuration as mm, tempfile, os
        >>> sim = mm.Simulation(500, engine="cpu")
        >>> w = sim.write_trajectory(os.path.join(tempfile.mkdtemp(), "run.h5"), every=2); sim.step(4); w.frames
        3
        """
        return self._native.frames if self._native is not None else self._frames

    @property
    def xdmf_path(self) -> str:
        """The XDMF file beside the HDF5 file (ParaView and VisIt open it as a time series).

        >>> import murmuration as mm, tempfile, os
        >>> w = mm.Simulation(500, engine="cpu").write_trajectory(os.path.join(tempfile.mkdtemp(), "run.h5"))
        >>> os.path.basename(w.xdmf_path), os.path.exists(w.xdmf_path)
        ('run.xdmf', True)
        """
        return os.path.splitext(self.path)[0] + ".xdmf"

    def close(self) -> None:
        """Stops writing and closes the file (the frames written stay); later steps write nothing.

        >>> import murmuration as mm, tempfile, os
        >>> sim = mm.Simulation(500, engine="cpu")
        >>> w = sim.write_trajectory(os.path.join(tempfile.mkdtemp(), "run.h5"), every=1)
        >>> w.close(); sim.step(3); w.frames
        1
        """
        if self._native is not None:
            self._frames = self._native.frames
            self._native.close()
            self._native = None
            if self in self._sim._writers:
                self._sim._writers.remove(self)

    def __enter__(self) -> "TrajectoryWriter":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"TrajectoryWriter({self.path!r}, every={self.every}, frames={self.frames})"


# --- the simulation ---------------------------------------------------------------------------------

_WORLD = {"half_size": "halfSize", "boundary": "boundary", "dims": "dims", "cell_width": "cellWidthFactor",
          "block_size": "blockSize", "list_steps": "listSteps", "pipeline": "pipeline"}


def _flatten(params: Any, prefix: str = "") -> List[Tuple[str, Any]]:
    out = []
    for k, v in params.items():
        if not isinstance(k, str):
            raise TypeError(f"params: keys must be str, not {type(k).__name__}")
        key = prefix + k
        if isinstance(v, dict):
            out += _flatten(v, key + ".")
        else:
            if key not in _n.PARAMS:
                raise ValueError(f"params: {key!r} is not a parameter (param_table() lists them)")
            out.append((key, v))
    return out


class Simulation:
    """One simulation on one engine (CPU with OpenMP, or CUDA).

    n: bodies (None: the scenario's n, else 100k on a GPU and 10k on the CPU engine).
    rule: a rule object of `murmuration.rules` (None: ``rules.Cis565()``, the boids of the default
    world); its parameters, and ``sim.rule`` afterwards, are attributes.
    neighbourhood: ``Radius()`` (metric, the default) or ``Topological(k)``.
    dims: 3, or 2 (the plane z = 0). boundary: "wrap", "periodic", "reflect" or "open" (None: the
    rule's). half_size: the world's half width; with no scenario it asks for the uniform cube of
    that size, as ``--half-size`` does. pipeline: the neighbour search (``pipelines()``; None: the
    command line's choice). engine: "cpu" or "cuda" (None: cuda when a GPU is present). seed: the
    scenario's and the rule's random draws. scenario: a `Scenario` (None: the default world, dense
    at 4 neighbours; two colliding galaxies for ``rules.Gravity``; the uniform cube with
    half_size). block_size, cell_width, list_steps: the engine's tuning (the parameter table).

    The same choices give the same bodies and, on either engine, the same steps to the bit as the
    ``murmur`` command line. Every argument is checked by the command line's validation code; a bad
    one raises ValueError or TypeError in one line naming it, its value and what is allowed.

    >>> import murmuration as mm
    >>> sim = mm.Simulation(2000, rule=mm.rules.Vicsek(noise=0.3, radius=1.0, speed=0.03), dims=2,
    ...                     boundary="periodic", half_size=10, pipeline="rows", engine="cpu", seed=1)
    >>> table = sim.run(100, observe_every=50, as_frame=False)
    >>> table["step"].tolist()
    [50, 100]
    >>> sim.rule.noise = 0.5   # checked now, used from the next step
    """

    def __init__(self, n: Optional[int] = None, rule: Union[_rules.Rule, str, None] = None, *,
                 neighbourhood: Optional[Neighbourhood] = None, dims: Optional[int] = None,
                 boundary: Optional[str] = None, half_size: Optional[float] = None, pipeline: Optional[str] = None,
                 engine: Optional[str] = None, seed: Optional[int] = None,
                 scenario: Union[Scenario, str, None] = None, block_size: Optional[int] = None,
                 cell_width: Optional[int] = None, list_steps: Optional[int] = None,
                 force: Optional[str] = None, params: Optional[Dict[str, Any]] = None,
                 neighbours: Optional[float] = None, select: Optional[str] = None,
                 scale: Optional[Sequence[float]] = None):
        self._writers: List[TrajectoryWriter] = []
        values: List[Tuple[str, float]] = []
        # The old keyword forms, translated (and warned about): params below everything else.
        if params is not None:
            _deprecated("Simulation(params={...})", "rule objects and keyword arguments (rule=mm.rules.Cis565(max_speed=2))")
            if not isinstance(params, dict):
                raise TypeError(f"params must be a dict like the --params JSON, not {type(params).__name__}")
            for key, v in _flatten(params):
                values.append(_n.checked(key, v, f"params[{key!r}]"))
        if isinstance(scenario, str):
            _deprecated(f"Simulation(scenario={scenario!r})", "scenario=mm.Scenario.<name>(...)")
            if scenario.startswith("file:"):
                scenario = Scenario.from_file(scenario[5:], select=_old_select(select),
                                              n=n, scale=scale)
                n = None
            else:
                scenario = Scenario.named(scenario)
                if select is not None or scale is not None:
                    what = "select" if select is not None else "scale"
                    raise ValueError(f"{what} applies to a file's bodies only (the scenario is {scenario.name}): "
                                     "mm.Scenario.from_file(path, select=..., scale=...)")
                if neighbours is not None:
                    if scenario.name != "dense":
                        raise ValueError(f"neighbours={neighbours!r} applies to Scenario.dense only "
                                         f"(the scenario is {scenario.name})")
                    scenario.neighbours = _n.number("neighbours", neighbours, 0, 1000)
        elif neighbours is not None or select is not None or scale is not None:
            what = "neighbours" if neighbours is not None else "select" if select is not None else "scale"
            if what != "neighbours" and select is not None and not isinstance(select, str):
                raise TypeError(f"select must be a str such as '0-999,2000-2999', not {type(select).__name__}")
            where = "dense(n, neighbours=...)" if what == "neighbours" else f"from_file(path, {what}=...)"
            raise ValueError(f"{what} is an argument of mm.Scenario.{where}, not of Simulation")
        if scenario is not None and not isinstance(scenario, Scenario):
            raise TypeError(f"scenario must be a Scenario (mm.Scenario.dense(n), ...), not {type(scenario).__name__}")
        if force is not None:
            _deprecated(f"Simulation(force={force!r})", "rule=mm.rules.Gravity() (or another rule object)")
            if not isinstance(force, str):
                raise TypeError(f"force must be a str, not {type(force).__name__}")
            values.append(_n.checked("force", force, "force"))
        if isinstance(rule, str):
            _deprecated(f"Simulation(rule={rule!r})", f"rule=mm.rules.{rule.capitalize()}()")
            if force == "gravity":
                raise ValueError(f"rule={rule!r} applies to boids only (force='gravity')")
            local = [r for r, row in _n.RULES.items() if row["kind"] == "local"]
            if rule not in local:
                raise ValueError(f"rule={rule!r} is invalid: one of: {', '.join(local)}")
            values.append(_n.checked("boids.rules", rule, "rule"))
            rule_obj: Optional[_rules.Rule] = None
        elif rule is None or isinstance(rule, _rules.Rule):
            rule_obj = rule
            if rule is not None:
                values += rule._assignments()
        else:
            raise TypeError(f"rule must be a rule object (mm.rules.Vicsek(...), ...), not {type(rule).__name__}")
        for attr, value in (("dims", dims), ("boundary", boundary), ("half_size", half_size),
                            ("pipeline", pipeline), ("block_size", block_size), ("cell_width", cell_width),
                            ("list_steps", list_steps)):
            if value is not None:
                values.append(_n.checked(_WORLD[attr], value, attr))
        if neighbourhood is not None:
            values += _neighbourhood_values(neighbourhood, rule_obj)
        if n is not None:
            n = _n.count("n", n, 1, _native.max_bodies())
        if scenario is not None and scenario.n is not None:
            if n is not None and n != scenario.n:
                raise ValueError(f"n={n} and the scenario's n={scenario.n} differ: give one")
            n = scenario.n
        if engine is not None and not isinstance(engine, str):
            raise TypeError(f"engine must be a str ('cpu' or 'cuda'), not {type(engine).__name__}")
        if engine is not None and engine not in ("cpu", "cuda"):
            raise ValueError(f"engine={engine!r} is invalid: one of: cpu, cuda")
        seed_value = 1 if seed is None else _n.count("seed", seed, 0, 2**53)
        sc = scenario
        self._s = _n.call(_native.Simulation, engine or "", n or 0, "" if sc is None else sc.name,
                          sc.path if sc is not None and sc.path else "", sc.select if sc is not None else "",
                          sc is not None and sc.name == "file" and n is not None,
                          list(sc.scale) if sc is not None else [1.0, 1.0, 1.0],
                          float(sc.neighbours) if sc is not None and sc.neighbours is not None else 0.0,
                          seed_value, values)
        self._seed = seed_value

    @classmethod
    def load(cls, path: PathLike, engine: Optional[str] = None, pipeline: Optional[str] = None) -> "Simulation":
        """A simulation from a state file (``save``, ``--out``) or a trajectory's last frame: its
        bodies, parameters and step count (``Scenario.from_file`` takes a frame and a selection).

        >>> import murmuration as mm, tempfile, os
        >>> p = os.path.join(tempfile.mkdtemp(), "s.txt")
        >>> sim = mm.Simulation(500, engine="cpu"); sim.step(3); sim.save(p)
        >>> mm.Simulation.load(p, engine="cpu").step_count
        3
        """
        return cls(scenario=Scenario.from_file(path), engine=engine, pipeline=pipeline)

    # --- stepping -----------------------------------------------------------------------------------
    def step(self, k: int = 1) -> None:
        """Advances k steps. Releases the GIL (calls on this simulation from other threads meanwhile
        raise RuntimeError); Ctrl-C raises KeyboardInterrupt between two steps, the steps done
        staying done. On the CUDA engine the steps are queued and this returns once they are; reads
        wait for them. Attached trajectory writers write their frames on the way.

        >>> import murmuration as mm
        >>> sim = mm.Simulation(500, engine="cpu"); sim.step(5); sim.step_count
        5
        """
        if isinstance(k, bool) or not isinstance(k, numbers.Integral):
            raise TypeError(f"step: k must be an int, not {type(k).__name__}")
        if k < 0:
            raise ValueError(f"step: k={k} is invalid: the number of steps must be >= 0")
        k = _n.count("step: k", k, 0, 2**62)
        if not self._writers:
            self._s.step(k)
            return
        target = self.step_count + k
        while self.step_count < target:
            due = min([w._next for w in self._writers] + [target])
            self._s.step(min(max(due - self.step_count, 1), target - self.step_count))
            for w in list(self._writers):
                w._due()

    def synchronize(self) -> None:
        """Waits for the steps queued on the GPU (nothing to wait for on the CPU engine).

        >>> import murmuration as mm
        >>> mm.Simulation(500, engine="cpu").synchronize()
        """
        self._s.synchronize()

    def run(self, steps: int, observe_every: Optional[int] = None, callback: Optional[Callable[..., Any]] = None,
            observe_first: bool = False, flocks: bool = False, progress: Optional[bool] = None,
            as_frame: Optional[bool] = None) -> Any:
        """Steps `steps` steps and samples the observables after every `observe_every` of them (steps
        k, 2k, ..., so ``steps // k`` rows; ``observe_first=True`` adds the state before the first
        step, with or without observe_every). Returns the samples as a table with the columns of ``observe()``: a pandas DataFrame
        when pandas is installed (``as_frame=False``: always a NumPy structured array).

        callback(sim, observation) runs after each sample; returning False stops the run there.
        flocks: the flock columns too (a connected-components pass per sample). progress: a
        progress bar (tqdm when installed, else one line) for a run longer than a second; True
        shows it at once, False never. Ctrl-C stops the run between two steps and returns the
        samples taken so far (a line on stderr says so).

        >>> import murmuration as mm
        >>> sim = mm.Simulation(1000, engine="cpu", seed=1)
        >>> t = sim.run(30, observe_every=10, observe_first=True, as_frame=False)
        >>> t["step"].tolist(), "polarization" in t.dtype.names
        ([0, 10, 20, 30], True)
        """
        steps = _n.count("run: steps", steps, 0, 2**62)
        if observe_every is not None:
            observe_every = _n.count("run: observe_every", observe_every, 1, 2**62)
        if callback is not None and not callable(callback):
            raise TypeError(f"run: callback must be callable, not {type(callback).__name__}")
        rows: List[Dict[str, Any]] = []
        columns = ["step", "time"] + self._columns(flocks)

        def sample() -> bool:
            obs = self.observe(flocks=flocks)
            rows.append(dict(obs))
            for w in self._writers:
                if w._native is not None:
                    w._native.observables(list(obs.keys()), [float(v) for v in obs.values()])
            return callback is None or callback(self, obs) is not False

        go = True
        if observe_first:
            go = sample()
        bar = _Progress(steps, progress)
        start = self.step_count
        done = 0
        # Calls of at most a hundredth of the run, so that the progress moves; each ends at a sample.
        cap = max(1, steps // 100)
        try:
            while go and done < steps:
                k = min(steps - done, cap)
                if observe_every is not None:
                    k = min(k, observe_every - done % observe_every)
                self.step(k)
                done += k
                bar.update(done)
                if observe_every is not None and done % observe_every == 0:
                    go = sample()
        except KeyboardInterrupt:
            bar.close()
            # The signal may land after the steps of a sample were done but before it was taken:
            # the state at a sampling step is still sampled (a second Ctrl-C skips it).
            ran = self.step_count - start
            if observe_every is not None and ran > 0 and ran % observe_every == 0 and \
                    (not rows or rows[-1]["step"] != self.step_count):
                try:
                    rows.append(dict(self.observe(flocks=flocks)))
                except KeyboardInterrupt:
                    pass
            sys.stderr.write(f"run: interrupted at step {self.step_count}; returning the {len(rows)} samples so far\n")
            return _table(rows, columns, as_frame)
        bar.close()
        return _table(rows, columns, as_frame)

    # --- observables and state --------------------------------------------------------------------
    def _columns(self, flocks: bool) -> List[str]:
        force = self.force
        return [r["column"] for r in _native.observable_table() if r["force"] == force and (flocks or not r["flocks"])]

    def observe(self, flocks: bool = False, milling_min_size: int = 10) -> Observation:
        """The observables of the current state, computed by the engine where the state lives (on the
        GPU for the CUDA engine): ``step``, ``time`` and the ``--observables`` CSV's columns of the
        force (flocks: the flock columns too; milling leaves out flocks smaller than
        milling_min_size). The drifts take the first sample since the simulation was made, or since
        ``set_state`` or ``reset_observe_baseline()``, as their baseline.

        >>> import murmuration as mm
        >>> obs = mm.Simulation(1000, engine="cpu").observe(flocks=True)
        >>> obs.flocks >= 1
        True
        """
        if not isinstance(flocks, bool):
            raise TypeError(f"observe: flocks must be a bool, not {type(flocks).__name__}")
        size = _n.count("observe: milling_min_size", milling_min_size, 1, 2**32 - 1)
        pairs = _n.call(self._s.observe, flocks, size)
        return Observation({k: (int(v) if k == "step" else float(v)) for k, v in pairs})

    def reset_observe_baseline(self) -> None:
        """Makes the next sample the baseline of the drift columns (energy_drift, ...).

        >>> import murmuration as mm
        >>> sim = mm.Simulation(rule=mm.rules.Gravity(), scenario=mm.Scenario.plummer(300), engine="cpu")
        >>> sim.reset_observe_baseline(); sim.observe().energy_drift
        0.0
        """
        self._s.reset_observe_baseline()

    def snapshot(self) -> Snapshot:
        """The whole state in one call as arrays the caller owns (see `Snapshot`). On the CUDA
        engine: one gather by id on the GPU, a copy into page-locked staging, one unpack.

        >>> import murmuration as mm
        >>> sim = mm.Simulation(500, engine="cpu"); sim.step(2)
        >>> s = sim.snapshot(); s.step, s.velocities.dtype
        (2, dtype('float32'))
        """
        p, v, m, s, i, step = _n.call(self._s.snapshot)
        return Snapshot(p, v, m, s, i, int(step))

    @property
    def positions(self) -> np.ndarray:
        """float32 (n, 3), row i is body i (id order): a new copy at every read, through the same one
        read as ``snapshot()`` (which gives every array at once).

        >>> import murmuration as mm
        >>> mm.Simulation(500, engine="cpu").positions.shape
        (500, 3)
        """
        return self.snapshot().positions

    @property
    def velocities(self) -> np.ndarray:
        """float32 (n, 3) in id order: a new copy at every read.

        >>> import murmuration as mm
        >>> mm.Simulation(500, engine="cpu").velocities.dtype
        dtype('float32')
        """
        return self.snapshot().velocities

    @property
    def masses(self) -> np.ndarray:
        """float32 (n,) in id order: a new copy at every read.

        >>> import murmuration as mm
        >>> float(mm.Simulation(500, engine="cpu").masses[0])
        1.0
        """
        return self.snapshot().masses

    @property
    def species(self) -> np.ndarray:
        """uint8 (n,) in id order, each body's species (0 unless set): a new copy at every read.

        >>> import murmuration as mm
        >>> int(mm.Simulation(500, engine="cpu").species.max())
        0
        """
        return self.snapshot().species

    def set_state(self, positions: Any = None, velocities: Any = None, masses: Any = None,
                  species: Any = None) -> None:
        """Replaces the arrays given, in id order; None keeps that array.

        NumPy (or anything np.asarray takes): positions and velocities (n, 3), masses (n,), float32
        or float64 (rounded to float32); species (n,), integers 0 to 255. Values must be finite and
        masses >= 0; under a boundary with a box (wrap, periodic, reflect) every position must lie
        in [-half_size, half_size] (the engine would move it, so it is refused). On the CUDA engine
        the arrays may instead all be GPU arrays (CuPy, PyTorch, DeviceArray), copied on the device
        and checked there for finite values and masses (not against the box: that would need them
        on the host).

        What it resets: the engine restarts from these values as from a new state (the body order
        becomes id order again, and what a step carries to the next is rebuilt: verlet lists, cell
        counts, the leapfrog's accelerations), so a run continued after ``set_state`` with the very
        same values can differ from one that was not interrupted by float rounding; the step count
        goes on; the observables' drift baseline restarts. On an error nothing changes.

        >>> import murmuration as mm, numpy as np
        >>> sim = mm.Simulation(500, engine="cpu")
        >>> sim.set_state(velocities=np.zeros((500, 3)))
        >>> float(abs(sim.velocities).max())
        0.0
        """
        given = [a for a in (positions, velocities, masses, species) if a is not None]
        if not given:
            return
        gpu = [_is_gpu_array(a) for a in given]
        if any(gpu):
            if self.engine != "cuda":
                raise ValueError(f"set_state: GPU arrays need the cuda engine (this simulation runs on {self.engine})")
            if not all(gpu):
                raise ValueError("set_state: mixes host and GPU arrays (give all on the GPU, or all as NumPy)")
            _n.call(self._s.set_state_device, positions, velocities, masses, species)
            return
        n = self.n
        _n.call(self._s.set_state_host, None if positions is None else _host_array("positions", positions, n, 3),
                None if velocities is None else _host_array("velocities", velocities, n, 3),
                None if masses is None else _host_array("masses", masses, n, 0),
                None if species is None else _host_species(species, n))

    # --- parameters ------------------------------------------------------------------------------------
    def _set_values(self, values: List[Tuple[str, float]]) -> None:
        _n.call(self._s.set_param_values, values)

    def _param(self, key: str) -> Any:
        return _n.from_native(key, self._s.param(key))

    @property
    def rule(self) -> _rules.Rule:
        """The rule this simulation runs, its parameters as attributes: setting one is checked at
        once and used from the next step. Assigning a rule object switches to that rule (its
        parameters given, the others kept).

        >>> import murmuration as mm
        >>> sim = mm.Simulation(500, rule=mm.rules.Vicsek(), dims=2, engine="cpu")
        >>> sim.rule.noise = 0.8; sim.rule.noise
        0.8
        """
        cls = _rules._rule_of({"force": self._param("force"), "boids.rules": self._param("boids.rules")})
        assert cls is not None
        return cls()._bound(self)

    @rule.setter
    def rule(self, rule: _rules.Rule) -> None:
        if not isinstance(rule, _rules.Rule):
            raise TypeError(f"rule must be a rule object (mm.rules.Vicsek(...), ...), not {type(rule).__name__}")
        self._set_values(rule._assignments())

    @property
    def neighbourhood(self) -> Neighbourhood:
        """``Radius()`` or ``Topological(k, radius)``; settable (topological neighbours need the rows
        pipeline).

        >>> import murmuration as mm
        >>> mm.Simulation(500, engine="cpu").neighbourhood
        Radius()
        """
        k = self._param("topological")
        if k == 0:
            return Radius()
        cut = self._param("topologicalRadius")
        return Topological(k, radius=cut or None)

    @neighbourhood.setter
    def neighbourhood(self, value: Neighbourhood) -> None:
        self._set_values(_neighbourhood_values(value, self.rule, live=True))

    def _world(attr: str, doc: str) -> property:  # type: ignore[misc]
        key = _WORLD[attr]

        def get(self: "Simulation") -> Any:
            return self._param(key)

        def put(self: "Simulation", value: Any) -> None:
            self._set_values([_n.checked(key, value, attr)])

        return property(get, put, doc=doc)

    half_size = _world("half_size", """The world's half width (world units; settable).

        >>> import murmuration as mm
        >>> mm.Simulation(500, half_size=40, engine="cpu").half_size
        40.0
        """)
    boundary = _world("boundary", """What the world's faces do: wrap, periodic, reflect or open (settable).

        >>> import murmuration as mm
        >>> mm.Simulation(500, rule=mm.rules.Vicsek(), dims=2, engine="cpu").boundary
        'periodic'
        """)
    dims = _world("dims", """3, or 2 for the plane z = 0.

        >>> import murmuration as mm
        >>> mm.Simulation(500, dims=2, engine="cpu").dims
        2
        """)
    pipeline = _world("pipeline", """The neighbour search the engine runs (``pipelines()``; settable).

        >>> import murmuration as mm
        >>> sim = mm.Simulation(500, pipeline="rows", engine="cpu"); sim.pipeline = "coherent"; sim.pipeline
        'coherent'
        """)
    block_size = _world("block_size", """CUDA threads per block, a multiple of 32 (settable).

        >>> import murmuration as mm
        >>> mm.Simulation(500, engine="cpu").block_size
        256
        """)
    cell_width = _world("cell_width", """Boids grid cell width in largest rule radii, 1 or 2 (settable).

        >>> import murmuration as mm
        >>> mm.Simulation(500, engine="cpu").cell_width
        1
        """)
    list_steps = _world("list_steps", """Verlet pipeline: steps a neighbour list serves (0: the cost model's).

        >>> import murmuration as mm
        >>> mm.Simulation(500, engine="cpu").list_steps
        0
        """)
    del _world

    @property
    def params(self) -> Dict[str, Any]:
        """Every parameter as a dict with the keys of the ``--params`` JSON (a copy).

        >>> import murmuration as mm
        >>> mm.Simulation(500, engine="cpu").params["boids"]["maxSpeed"]
        1.0
        """
        def short(v: Any) -> Any:
            if isinstance(v, dict):
                return {k: short(x) for k, x in v.items()}
            return _n.shortest(v) if isinstance(v, float) else v
        return short(json.loads(self._s.params_json()))

    def set_params(self, params: Dict[str, Any]) -> None:
        """Deprecated: set attributes instead (``sim.rule.max_speed = 2``, ``sim.half_size = 50``).
        Changes the parameters of a (partial) ``--params``-style dict; on an error nothing changes.

        >>> import murmuration as mm, warnings
        >>> sim = mm.Simulation(500, engine="cpu")
        >>> with warnings.catch_warnings():
        ...     warnings.simplefilter("ignore"); sim.set_params({"boids": {"maxSpeed": 2.0}})
        >>> sim.rule.max_speed
        2.0
        """
        _deprecated("set_params({...})", "attributes: sim.rule.max_speed = 2.0, sim.half_size = 50, ...")
        if not isinstance(params, dict):
            raise TypeError(f"set_params: params must be a dict like the --params JSON, not {type(params).__name__}")
        values = [_n.checked(key, v, f"params[{key!r}]") for key, v in _flatten(params)]
        self._set_values(values)

    # --- the state on the GPU: views ----------------------------------------------------------------
    def _device(self, name: str, framework: Optional[str]) -> Any:
        if self.engine != "cuda" or not hasattr(self._s, "device_array"):
            raise ValueError(f"device arrays: the {self.engine} engine keeps the state on the host "
                             "(use engine=\"cuda\")")
        if framework is None:
            return DeviceArray(name, self._s.device_pointer(name), self.n, self, self._s.cuda_device())
        if framework == "cupy":
            return self._s.device_array_cupy(name)
        if framework == "torch":
            return self._s.device_array_torch(name)
        raise ValueError(f"framework={framework!r} is invalid: one of: None, cupy, torch")

    def device_positions(self, framework: Optional[str] = None) -> Any:
        """CUDA engine: the positions on the GPU in id order, a view (no host copy): a DeviceArray
        (``framework=None``), or a CuPy array or PyTorch tensor over the same memory (``"cupy"``,
        ``"torch"``). Writes through it are applied before the next step.

        >>> import murmuration as mm
        >>> mm.Simulation(500, engine="cpu").device_positions()
        Traceback (most recent call last):
        ...
        ValueError: device arrays: the cpu engine keeps the state on the host (use engine="cuda")
        """
        return self._device("positions", framework)

    def device_velocities(self, framework: Optional[str] = None) -> Any:
        """CUDA engine: the velocities on the GPU in id order, a view (see device_positions).

        >>> import murmuration as mm
        >>> sim = mm.Simulation(1000, engine="cuda") if mm.cuda_available() else None
        >>> v = sim.device_velocities("cupy") if sim else None   # a CuPy (1000, 3) view where CuPy is installed
        """
        return self._device("velocities", framework)

    def device_species(self, framework: Optional[str] = None) -> Any:
        """CUDA engine: the species on the GPU in id order, uint8 (n,), a view (see device_positions).

        >>> import murmuration as mm
        >>> sim = mm.Simulation(1000, engine="cuda") if mm.cuda_available() else None
        >>> s = sim.device_species() if sim else None   # a DeviceArray of shape (1000,), uint8
        """
        return self._device("species", framework)

    # --- pictures and files ---------------------------------------------------------------------------
    def render(self, width: int = 1280, height: int = 720, draw: Optional[str] = None,
               colour: Optional[str] = None) -> np.ndarray:
        """One frame of the current state, offscreen (EGL): uint8 (height, width, 3), a new array.

        width, height: 16 to 8192 pixels. draw: boids | points | sprites | splat (default: the
        viewer's for the force and N); colour: velocity | speed | id. The camera frames the state of
        the first render of a size and mode, then stays. RuntimeError when no OpenGL context can be
        made here.

        >>> import murmuration as mm
        >>> mm.Simulation(500, engine="cpu").render(width=0, height=0)
        Traceback (most recent call last):
        ...
        ValueError: render: width=0 is invalid: a whole number from 16 to 8192
        """
        w = _n.count("render: width", width, -2**31, 2**31 - 1) if not isinstance(width, bool) else width
        h = _n.count("render: height", height, -2**31, 2**31 - 1) if not isinstance(height, bool) else height
        for what, v, names in (("draw", draw, ("boids", "points", "sprites", "splat")),
                               ("colour", colour, ("velocity", "speed", "id"))):
            if v is not None and not isinstance(v, str):
                raise TypeError(f"render: {what} must be a str, one of: {', '.join(names)}")
        for what, v in (("width", w), ("height", h)):  # bad sizes are refused in any build
            if not 16 <= v <= 8192:
                raise ValueError(f"render: {what}={v} is invalid: a whole number from 16 to 8192")
        if not getattr(_native, "has_render", False):
            raise RuntimeError("render: this build has no renderer")
        return _n.call(self._s.render, int(w), int(h), draw or "", colour or "")

    def show(self, width: int = 640, height: int = 360, draw: Optional[str] = None,
             colour: Optional[str] = None) -> Optional[Frame]:
        """Shows the current state as a frame inline in Jupyter (IPython's display); elsewhere
        returns the `Frame` (its ``png()`` writes a file).

        >>> import murmuration as mm
        >>> frame = mm.Simulation(500, engine="cpu").show(width=64, height=48)  # doctest: +SKIP
        """
        frame = Frame(self.render(width, height, draw, colour), self.step_count)
        display = _ipython_display()
        if display is not None:
            display(frame)
            return None
        return frame

    def animate(self, steps: int, every: int = 1, width: int = 480, height: int = 270, draw: Optional[str] = None,
                colour: Optional[str] = None, fps: float = 15) -> Animation:
        """Steps `steps` steps and renders a frame every `every` of them (and the first): an
        `Animation`, which Jupyter shows inline as a loop.

        >>> import murmuration as mm
        >>> anim = mm.Simulation(500, engine="cpu").animate(20, every=10, width=64, height=48)  # doctest: +SKIP
        """
        steps = _n.count("animate: steps", steps, 0, 2**62)
        every = _n.count("animate: every", every, 1, 2**62)
        if steps // every > 10000:
            raise ValueError(f"animate: steps={steps} every={every} is {steps // every} frames; at most 10000")
        frames = [Frame(self.render(width, height, draw, colour), self.step_count)]
        done = 0
        while done < steps:
            k = min(every, steps - done)
            self.step(k)
            done += k
            frames.append(Frame(self.render(width, height, draw, colour), self.step_count))
        return Animation(frames, fps)

    def save(self, path: PathLike) -> None:
        """Writes the state as ``murmur --out`` does (id order, a header with the step and the
        parameters); ``Simulation.load`` and ``Scenario.from_file`` read it back.

        >>> import murmuration as mm, tempfile, os
        >>> mm.Simulation(500, engine="cpu").save(os.path.join(tempfile.mkdtemp(), "s.txt"))
        """
        _n.call(self._s.save, _path("save", path))

    def write_trajectory(self, path: PathLike, every: int = 10) -> TrajectoryWriter:
        """Writes the state now and every `every` steps from here on to an HDF5 trajectory with an
        XDMF index beside it, as ``murmur --trajectory`` does (the command line's own writer); the
        samples ``run`` takes go into it too. Returns the `TrajectoryWriter` (close it, or use it as
        a context manager). ``Scenario.from_file(path, frame=K)`` restarts from a frame.

        >>> import murmuration as mm, tempfile, os
        >>> sim = mm.Simulation(500, engine="cpu")
        >>> w = sim.write_trajectory(os.path.join(tempfile.mkdtemp(), "run.h5"), every=2)
        >>> sim.step(4); w.close(); w.frames
        3
        """
        every = _n.count("write_trajectory: every", every, 1, 2**62)
        text = _path("write_trajectory", path)
        if not _native.trajectory_available():
            raise RuntimeError("write_trajectory: this build has no HDF5 (install libhdf5-dev and rebuild)")
        writer = TrajectoryWriter(self, text, every)
        self._writers.append(writer)
        return writer

    # --- what it is -------------------------------------------------------------------------------------
    @property
    def n(self) -> int:
        """The number of bodies.

        >>> import murmuration as mm
        >>> mm.Simulation(500, engine="cpu").n
        500
        """
        return self._s.n

    @property
    def step_count(self) -> int:
        """Steps simulated so far (a loaded state continues its count).

        >>> import murmuration as mm
        >>> sim = mm.Simulation(500, engine="cpu"); sim.step(4); sim.step_count
        4
        """
        return self._s.step_count

    @property
    def engine(self) -> str:
        """"cpu" or "cuda".

        >>> import murmuration as mm
        >>> mm.Simulation(500, engine="cpu").engine
        'cpu'
        """
        return self._s.engine

    @property
    def device(self) -> str:
        """The GPU's name, or the CPU engine's description.

        >>> import murmuration as mm
        >>> mm.Simulation(500, engine="cpu").device.startswith("CPU")
        True
        """
        return self._s.device

    @property
    def force(self) -> str:
        """The force a step runs: "boids" (every local rule) or "gravity".

        >>> import murmuration as mm
        >>> mm.Simulation(rule=mm.rules.Gravity(), scenario=mm.Scenario.plummer(300), engine="cpu").force
        'gravity'
        """
        return self._s.force

    @property
    def scenario(self) -> str:
        """The scenario's name ("file:PATH" for a file's bodies).

        >>> import murmuration as mm
        >>> mm.Simulation(500, half_size=30, engine="cpu").scenario
        'uniform'
        """
        return self._s.scenario

    @property
    def scenario_note(self) -> str:
        """What was taken from a file when not every body as it is (the selection, the subset, the
        scales), or a gravity scenario's projection onto the plane; "" otherwise.

        >>> import murmuration as mm
        >>> mm.Simulation(rule=mm.rules.Gravity(), scenario=mm.Scenario.plummer(300), dims=2, engine="cpu").scenario_note != ""
        True
        """
        return self._s.note

    @property
    def seed(self) -> int:
        """The seed of the scenario and of the rule's random draws.

        >>> import murmuration as mm
        >>> mm.Simulation(500, engine="cpu", seed=7).seed
        7
        """
        return self._seed

    def __repr__(self) -> str:
        if "_s" not in self.__dict__:
            return "Simulation(<not constructed>)"
        return (f"Simulation(n={self.n}, rule={self.rule.name!r}, pipeline={self.pipeline!r}, "
                f"engine={self.engine!r}, step_count={self.step_count})")


def _neighbourhood_values(value: Any, rule: Optional[_rules.Rule], live: bool = False) -> List[Tuple[str, float]]:
    """The parameters of a neighbourhood. Metric neighbours are the default: at construction
    Radius() gives no parameter (a topological count given would leave the default world's
    pipeline, as --topological does); on a running simulation it sets the count back to 0."""
    if isinstance(value, Topological):
        out = [_n.checked("topological", value.k, "Topological(k)")]
        out.append(_n.checked("topologicalRadius", value.radius or 0.0, "Topological(radius)"))
        return out
    if isinstance(value, Radius):
        out = [_n.checked("topological", 0, "Radius()")] if live else []
        if value.radius is not None:
            key = _n.RULES[rule.name]["radius_key"] if rule is not None else None
            if key is None:
                raise ValueError(f"Radius({value.radius!r}): the {rule.name if rule else 'cis565'} rule has no one "
                                 "radius (set its own radius parameters)")
            out.append(_n.checked(key, value.radius, "Radius(radius)"))
        return out
    raise TypeError(f"neighbourhood must be mm.Radius(...) or mm.Topological(k), not {type(value).__name__}")


def _old_select(select: Any) -> Optional[List[Tuple[int, int]]]:
    if select is None:
        return None
    if not isinstance(select, str):
        raise TypeError(f"select must be a str such as '0-999,2000-2999', not {type(select).__name__}")
    _deprecated("select='A-B,...'", "mm.Scenario.from_file(path, select=[range(A, B + 1), ...])", depth=1)
    out = []
    for item in select.split(","):
        a, _, b = item.partition("-")
        try:
            out.append((int(a), int(b) if b else int(a)))
        except ValueError:
            raise ValueError(f"select={select!r} is invalid: 0-based ranges A-B or indices A, comma-separated") from None
    return out


def _ipython_display() -> Optional[Callable[[Any], None]]:
    ip = sys.modules.get("IPython")
    if ip is None:
        return None
    try:
        if ip.get_ipython() is None:  # type: ignore[attr-defined]
            return None
        from IPython.display import display  # type: ignore[import-not-found]
        return display  # type: ignore[no-any-return]
    except Exception:
        return None


# --- host arrays -------------------------------------------------------------------------------------


def _is_gpu_array(a: Any) -> bool:
    """True for an array on a CUDA device (CuPy, PyTorch, a DeviceArray): DLPack device type 2."""
    if isinstance(a, np.ndarray) or not hasattr(a, "__dlpack_device__"):
        return False
    try:
        return int(a.__dlpack_device__()[0]) == 2
    except Exception:
        return False


def _host_array(name: str, a: Any, n: int, cols: int) -> np.ndarray:
    try:
        arr = np.asarray(a)
    except (ValueError, TypeError) as e:
        raise TypeError(f"set_state: {name} is not an array of numbers ({e})") from None
    if arr.dtype not in (np.float32, np.float64):
        raise TypeError(f"set_state: {name} must be float32 (or float64, rounded to float32), not {arr.dtype}")
    want = (n, cols) if cols else (n,)
    if arr.shape != want:
        raise ValueError(f"set_state: {name} has shape {arr.shape}, expected {want}")
    if arr.dtype == np.float64:
        big = np.flatnonzero(np.isfinite(arr) & (np.abs(arr) > np.finfo(np.float32).max))
        if big.size:
            i = int(big[0])
            raise ValueError(f"set_state: {name} has a value beyond float32 (flat index {i} is {arr.flat[i]:g})")
    return np.ascontiguousarray(arr, dtype=np.float32)


def _host_species(a: Any, n: int) -> np.ndarray:
    arr = np.asarray(a)
    if not np.issubdtype(arr.dtype, np.integer):  # bool is not an integer dtype
        raise TypeError(f"set_state: species must be integers 0 to 255 (any integer dtype), not {arr.dtype}")
    if arr.shape != (n,):
        raise ValueError(f"set_state: species has shape {arr.shape}, expected {(n,)}")
    out = np.flatnonzero((arr < 0) | (arr > 255))
    if out.size:
        i = int(out[0])
        raise ValueError(f"set_state: species must be 0 to 255 (index {i} is {arr[i]})")
    return np.ascontiguousarray(arr, dtype=np.uint8)


class DeviceArray:
    """A GPU array over one of the simulation's id-ordered state buffers: a view, not a copy.

    Positions and velocities: shape (n, 3), float32, row stride 16 bytes (the buffer is float4 per
    body; the fourth float of the position buffer is the mass, which this view leaves out).
    Species: shape (n,), uint8, stride 1 byte. It exposes ``__cuda_array_interface__`` and
    ``__dlpack__``, so ``cupy.asarray(a)`` and ``torch.from_dlpack(a)`` see the same memory without
    a copy. Writes through it are applied to the simulation before its next step (or read, save,
    render). After a step the memory holds the old state until ``device_positions()`` (or
    ``device_velocities()``, ``device_species()``) is called again, which refreshes the same
    buffers in place. The simulation outlives every array over it.

    >>> import murmuration as mm
    >>> sim = mm.Simulation(1000, engine="cuda") if mm.cuda_available() else None
    >>> d = sim.device_positions() if sim else None  # a DeviceArray of shape (1000, 3)
    """

    def __init__(self, name: str, ptr: int, n: int, sim: "Simulation", device_id: int):
        self._name = name  # positions | velocities | species
        self._device_id = device_id
        self.ptr = ptr  #: the device address of the buffer (row 0, x; body 0's species)
        if name == "species":
            self.shape: Tuple[int, ...] = (n,)
            self.strides: Tuple[int, ...] = (1,)  #: in bytes
            self.dtype = np.dtype(np.uint8)
        else:
            self.shape = (n, 3)
            self.strides = (16, 4)
            self.dtype = np.dtype(np.float32)
        self._sim = sim

    @property
    def __cuda_array_interface__(self) -> Dict[str, Any]:
        # The engine works on the legacy default stream (1): consumers order their work after it.
        return {"shape": self.shape, "typestr": self.dtype.str, "data": (self.ptr, False), "strides": self.strides,
                "version": 3, "stream": 1}

    def __dlpack__(self, *args: Any, **kwargs: Any) -> Any:
        # A fresh DLPack capsule over the same buffer each time (a consumer uses a capsule up).
        return self._sim._s.device_array(self._name)

    def __dlpack_device__(self) -> Tuple[int, int]:
        return (2, self._device_id)  # (kDLCUDA, the device ordinal)

    def __len__(self) -> int:
        return self.shape[0]

    def __repr__(self) -> str:
        return f"DeviceArray(shape={self.shape}, dtype={self.dtype}, ptr=0x{self.ptr:x})"


# --- the benchmark ---------------------------------------------------------------------------------


def _listed(name: str, value: Any, kind: type) -> List[Any]:
    if value is None:
        return []
    items = [value] if isinstance(value, (str, numbers.Integral)) else list(value)
    if not items:
        raise ValueError(f"bench: {name} is an empty list (None takes the default)")
    out = []
    for v in items:
        if kind is str:
            if not isinstance(v, str):
                raise TypeError(f"bench: {name} must be str or a list of str, not {type(v).__name__}")
            out.append(v)
        else:
            out.append(_n.count(f"bench: {name}", v, 1, _native.max_bodies() if name == "n" else 1 << 20))
    return out


def _cell(text: str) -> Any:
    if text == "":
        return None
    try:
        return int(text)
    except ValueError:
        pass
    try:
        v = float(text)
        return v if math.isfinite(v) else text
    except ValueError:
        return text


def bench(rule: Union[str, Sequence[str], None] = None, n: Union[int, Iterable[int], None] = None,
          pipeline: Union[str, Sequence[str], None] = None, engine: Optional[str] = None,
          scenario: Optional[str] = None, block_size: Union[int, Iterable[int], None] = None,
          cell_width: Union[int, Iterable[int], None] = None, steps: Optional[int] = None,
          warmup: Optional[int] = None, repeats: Optional[int] = None, max_seconds: Optional[float] = None,
          preset: Optional[str] = None, dims: Optional[int] = None, as_frame: Optional[bool] = None,
          force: Union[str, Sequence[str], None] = None, csv_path: Optional[PathLike] = None) -> Any:
    """Times the product of the lists in this process, as ``murmur bench`` does (the same plan, the
    same measurement, the same columns: docs/design.md, "The benchmark CSV schema"), and returns the
    rows as a table like ``Simulation.run``'s: a pandas DataFrame when pandas is installed
    (``as_frame=False``: a NumPy structured array). Empty cells are NaN (numbers) or None (text).

    rule: a rule of the rule table ("cis565", "vicsek", ..., "gravity"), or a force ("boids",
    "gravity"), or a list of them (one local rule per sweep; a local rule brings its boundary, as
    ``--rule`` does). n, pipeline, block_size, cell_width: one value or a list. engine: "cpu" or "cuda". steps, warmup, repeats, max_seconds: per
    configuration. preset: a named sweep of ``murmur bench --preset``. dims: 3 or 2. Progress goes
    to stderr, one line per configuration; Ctrl-C stops between two and returns the rows so far.

    >>> import murmuration as mm
    >>> t = mm.bench(n=1500, pipeline=["rows"], engine="cpu", steps=2, warmup=1, repeats=1, as_frame=False)
    >>> t["pipeline"].tolist(), bool(t["sim_ms_median"][0] > 0)
    (['rows'], True)
    """
    if force is not None:
        _deprecated("bench(force=...)", "bench(rule=...)")
        rule = force if rule is None else rule
    names = _listed("rule", rule, str)
    local = [r for r, row in _n.RULES.items() if row["kind"] == "local"]
    picked = [r for r in names if r in local]
    if len(set(picked)) > 1:
        raise ValueError(f"bench: rule={names!r}: one local rule per sweep (its parameters are the sweep's); "
                         f"give {picked[0]!r} or {picked[1]!r}")
    forces = []
    for r in names:
        f = _n.RULES[r]["force"] if r in _n.RULES else r
        if f not in forces:
            forces.append(f)
    pipelines = _listed("pipeline", pipeline, str)
    counts = _listed("n", n, int)
    blocks = _listed("block_size", block_size, int)
    widths = _listed("cell_width", cell_width, int)
    for name, value in (("engine", engine), ("scenario", scenario), ("preset", preset)):
        if value is not None and not isinstance(value, str):
            raise TypeError(f"bench: {name} must be a str, not {type(value).__name__}")
    st = 0 if steps is None else _n.count("bench: steps", steps, 1, 100_000_000)
    wu = -1 if warmup is None else _n.count("bench: warmup", warmup, 0, 1_000_000)
    rp = 0 if repeats is None else _n.count("bench: repeats", repeats, 1, 1000)
    ms = 0.0 if max_seconds is None else _n.number("bench: max_seconds", max_seconds, 0, 1e9)
    dm = 0 if dims is None else _n.count("bench: dims", dims, 2, 3)
    rows, status = _n.call(_native.bench, forces, pipelines, counts, blocks, widths, engine or "", scenario or "",
                           st, wu, rp, ms, preset or "", dm, picked[0] if picked else "")
    records = [{c: _cell(v) for c, v in row} for row in rows]
    columns = [c for c, _ in rows[0]] if rows else []
    if status >= 128:  # a signal stopped the sweep between two configurations (app::StopSignal)
        sys.stderr.write(f"bench: interrupted; returning the {len(records)} rows measured so far\n")
    elif status != 0 and not records:
        raise RuntimeError("bench: every configuration was skipped (the lines above say why)")
    if csv_path is not None:
        _deprecated("bench(csv_path=...)", "the returned table's to_csv (pandas) or numpy.savetxt")
        import csv as _csv
        with open(os.fspath(csv_path), "w", newline="") as f:
            w = _csv.writer(f)
            w.writerow(columns)
            for row in rows:
                w.writerow([v for _, v in row])
    return _table(records, columns, as_frame)
