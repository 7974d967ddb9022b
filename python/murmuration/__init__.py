"""Murmuration from Python: boids and gravity on the CPU (OpenMP) and CUDA engines.

    import murmuration as mm
    sim = mm.Simulation(n=100_000, force="boids", scenario="dense", pipeline="rows", engine="cpu", seed=1)
    sim.step(100)
    v = sim.velocities                      # NumPy float32 (n, 3), in body id order: a copy
    print(abs((v / abs(v).max()).sum(0)))

The simulation is built by the command line's own code: the same options give the same bodies
as ``murmur --headless``, and every bad argument raises the command line's one-line message as
ValueError (TypeError for a wrong type or dtype; MemoryError for a size that does not fit).
See docs/python.md for the whole reference.
"""

from __future__ import annotations

import csv
import json
import math
import os
import tempfile
from typing import Any, Dict, Iterable, List, Optional, Sequence, Union, Tuple

import numpy as np

# The CPU engine's OpenMP threads sleep when idle, as murmur's do, unless the user chose a policy
# (read when the OpenMP runtime loads with the native module).
os.environ.setdefault("OMP_WAIT_POLICY", "passive")

try:  # installed by pip: the module sits in the package
    from . import _murmuration as _native
except ImportError:  # a plain CMake build: <build>/python on PYTHONPATH
    import _murmuration as _native  # type: ignore[no-redef]

__all__ = ["Simulation", "DeviceArray", "bench", "pipelines", "rules", "scenarios", "param_table", "cuda_available"]
__version__ = "0.1.0"


def _count(name: str, value: Any) -> str:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{name} must be an int, not {type(value).__name__}")
    return str(int(value))


def _name(name: str, value: Any) -> str:
    if not isinstance(value, str):
        raise TypeError(f"{name} must be a str, not {type(value).__name__}")
    return value


def _params_json(params: Any) -> str:
    if not isinstance(params, dict):
        raise TypeError(f"params must be a dict like the --params JSON, not {type(params).__name__}")
    try:
        return json.dumps(params, allow_nan=False)
    except TypeError as e:
        raise TypeError(f"params: {e}") from None
    except ValueError as e:  # NaN or infinity
        raise ValueError(f"params: {e}") from None


def _shortest(value: Any) -> Any:
    """Floats as the shortest decimal that is the same float32 (0.1, not 0.10000000149011612)."""
    if isinstance(value, dict):
        return {k: _shortest(v) for k, v in value.items()}
    if isinstance(value, float):
        return float(str(np.float32(value)))
    return value


def _is_gpu_array(a: Any) -> bool:
    """True for an array on a CUDA device (CuPy, PyTorch, a DeviceArray): DLPack device type 2."""
    if isinstance(a, np.ndarray) or not hasattr(a, "__dlpack_device__"):
        return False
    try:
        return int(a.__dlpack_device__()[0]) == 2
    except Exception:
        return False


def _host_array(name: str, a: Any, n: int, cols: int) -> np.ndarray:
    arr = np.asarray(a)
    if arr.dtype not in (np.float32, np.float64):
        raise TypeError(f"set_state: {name} must be float32 (or float64, rounded to float32), not {arr.dtype}")
    want = (n, cols) if cols else (n,)
    if arr.shape != want:
        raise ValueError(f"set_state: {name} has shape {arr.shape}, expected {want}")
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
    render). After a step the memory holds the old state until ``device_positions()``,
    ``device_velocities()`` or ``device_species()`` is called again, which refreshes the same
    buffers in place. The simulation outlives every array over it.
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
        # A fresh DLPack capsule over the same buffer each time (a consumer uses a capsule up). The
        # engine works on the legacy default stream, which orders itself with a consumer's stream.
        return self._sim._s.device_array(self._name)

    def __dlpack_device__(self) -> Tuple[int, int]:
        return (2, self._device_id)  # (kDLCUDA, the device ordinal)

    def __len__(self) -> int:
        return self.shape[0]

    def __repr__(self) -> str:
        return f"DeviceArray(shape={self.shape}, dtype={self.dtype}, ptr=0x{self.ptr:x})"


class Simulation:
    """One simulation on one engine.

    Arguments are the command line's options of a headless run; None leaves the command line's
    default (no scenario: the dense default world with 4 neighbours and the verlet pipeline below 1M
    boids; engine: cuda when a GPU is present; n: 100k on a GPU, 10k on the CPU engine):

    n          number of bodies (``--n``)
    force      "boids" or "gravity" (default: the scenario's)
    rule       a local rule of ``rules()``: "cis565" (the default) or "reynolds" (``--rule``)
    scenario   uniform | dense | plummer | galaxies | galaxy | "file:PATH" (a saved state)
    pipeline   naive | scattered | coherent | rows | tree | verlet | clusters (see ``pipelines()``)
    engine     "cpu" or "cuda"
    seed       the scenario's random seed
    neighbours dense: mean neighbours per boid, which sizes the world (``--neighbours``)
    select     "file:" only: the bodies to keep, "0-16383,32768-40959" (``--select``); n then takes
               an even subset of them (``--n`` with a file)
    scale      "file:" only: (length, velocity, mass) factors on the file's values (``--scale-*``)
    dims       3 (the cube) or 2: the plane z = 0, every body and velocity in it (``--dims``)
    params     a dict with the keys of the ``--params`` JSON (``param_table()`` lists them),
               applied below the options above, as a ``--params`` file is
    """

    def __init__(self, n: Optional[int] = None, force: Optional[str] = None, scenario: Optional[str] = None,
                 pipeline: Optional[str] = None, engine: Optional[str] = None, seed: Optional[int] = None,
                 params: Optional[Dict[str, Any]] = None, neighbours: Optional[float] = None,
                 select: Optional[str] = None, scale: Optional[Sequence[float]] = None,
                 dims: Optional[int] = None, rule: Optional[str] = None):
        args: List[str] = []
        if n is not None:
            args += ["--n", _count("n", n)]
        if dims is not None:
            args += ["--dims", _count("dims", dims)]
        for opt, name, value in (("--force", "force", force), ("--scenario", "scenario", scenario),
                                 ("--pipeline", "pipeline", pipeline), ("--engine", "engine", engine),
                                 ("--rule", "rule", rule)):
            if value is not None:
                args += [opt, _name(name, value)]
        if seed is not None:
            args += ["--seed", _count("seed", seed)]
        if neighbours is not None:
            if isinstance(neighbours, bool) or not isinstance(neighbours, (int, float, np.number)):
                raise TypeError(f"neighbours must be a number, not {type(neighbours).__name__}")
            args += ["--neighbours", repr(float(neighbours))]
        if select is not None:
            if not isinstance(select, str):
                raise TypeError(f"select must be a str such as '0-999,2000-2999', not {type(select).__name__}")
            args += ["--select", select]
        if scale is not None:
            try:
                factors = [] if isinstance(scale, (str, bytes)) else list(scale)
            except TypeError:
                factors = []
            if len(factors) != 3:
                raise TypeError(f"scale must be three numbers (length, velocity, mass), not {scale!r}")
            for opt, factor in zip(("--scale-length", "--scale-velocity", "--scale-mass"), factors):
                if isinstance(factor, bool) or not isinstance(factor, (int, float, np.number)):
                    raise TypeError(f"scale: {opt[8:]} factor must be a number, not {type(factor).__name__}")
                args += [opt, repr(float(factor))]
        pj = None if params is None else _params_json(params)
        given = pipeline is not None or (isinstance(params, dict) and "pipeline" in params)
        self._s = _native.Simulation(args, pj, given)

    @classmethod
    def load(cls, path: Union[str, os.PathLike], engine: Optional[str] = None,
             pipeline: Optional[str] = None) -> "Simulation":
        """A simulation from a state file (``save``, ``--out``): its bodies, parameters and step count."""
        return cls(scenario="file:" + os.fspath(path), engine=engine, pipeline=pipeline)

    # --- stepping and parameters -------------------------------------------------------------
    def step(self, k: int = 1) -> None:
        """Advances k steps. Releases the GIL; Ctrl-C raises KeyboardInterrupt between two steps
        (the steps done so far stay done and count in ``step_count``). On the CUDA engine the steps
        are queued on the GPU and this returns once they are queued: reading the state, saving,
        rendering or ``synchronize()`` waits for them (a device error surfaces there)."""
        if isinstance(k, bool) or not isinstance(k, (int, np.integer)):
            raise TypeError(f"step: k must be an int, not {type(k).__name__}")
        self._s.step(int(k))

    def synchronize(self) -> None:
        """Waits for the steps queued on the GPU (nothing to wait for on the CPU engine)."""
        self._s.synchronize()

    @property
    def params(self) -> Dict[str, Any]:
        """Every parameter as a dict with the keys of the ``--params`` JSON (a copy)."""
        return _shortest(json.loads(self._s.params_json()))

    def set_params(self, params: Dict[str, Any]) -> None:
        """Changes the parameters given (a partial dict is fine), validated as ``--params`` is;
        takes effect on the next step. On an error nothing changes."""
        self._s.set_params(_params_json(params))

    # --- the state: host copies ----------------------------------------------------------------
    @property
    def positions(self) -> np.ndarray:
        """float32 (n, 3), row i is body i (id order): a copy."""
        return self._s.positions()

    @property
    def velocities(self) -> np.ndarray:
        """float32 (n, 3) in id order: a copy."""
        return self._s.velocities()

    @property
    def masses(self) -> np.ndarray:
        """float32 (n,) in id order: a copy."""
        return self._s.masses()

    @property
    def species(self) -> np.ndarray:
        """uint8 (n,) in id order, each body's species (0 unless set): a copy."""
        return self._s.species()

    def set_state(self, positions: Any = None, velocities: Any = None, masses: Any = None,
                  species: Any = None) -> None:
        """Replaces the arrays given, in id order; None keeps that array.

        NumPy (or anything np.asarray takes): positions and velocities (n, 3), masses (n,), float32
        or float64 (rounded to float32); species (n,), any integer dtype with values 0 to 255. The
        values are copied. On the CUDA engine the arrays may instead all be GPU arrays (CuPy,
        PyTorch, DeviceArray; float32, species uint8; any strides, species a positive one): they
        are copied on the device and scattered into the engine by id, nothing passes through the
        host. Values must be finite and masses >= 0. On an error the state is unchanged.
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
            self._s.set_state_device(positions, velocities, masses, species)
            return
        n = self.n
        self._s.set_state_host(None if positions is None else _host_array("positions", positions, n, 3),
                               None if velocities is None else _host_array("velocities", velocities, n, 3),
                               None if masses is None else _host_array("masses", masses, n, 0),
                               None if species is None else _host_species(species, n))

    # --- the state on the GPU: views ------------------------------------------------------------
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
        raise ValueError(f"framework {framework!r} is invalid: one of: None, cupy, torch")

    def device_positions(self, framework: Optional[str] = None) -> Any:
        """CUDA engine: the positions on the GPU in id order, a view (no host copy).

        Returns a DeviceArray (``framework=None``), or a CuPy array or PyTorch tensor over the same
        memory (``"cupy"``, ``"torch"``). The buffer is owned by the simulation and gathered by id
        on the GPU when asked for; writes through it are applied before the next step.
        """
        return self._device("positions", framework)

    def device_velocities(self, framework: Optional[str] = None) -> Any:
        """CUDA engine: the velocities on the GPU in id order, a view (see device_positions)."""
        return self._device("velocities", framework)

    def device_species(self, framework: Optional[str] = None) -> Any:
        """CUDA engine: the species on the GPU in id order, uint8 (n,), a view (see device_positions)."""
        return self._device("species", framework)

    # --- pictures and files --------------------------------------------------------------------
    def render(self, width: int = 1280, height: int = 720, draw: Optional[str] = None,
               colour: Optional[str] = None) -> np.ndarray:
        """One frame of the current state, offscreen (EGL): uint8 (height, width, 3), a new array.

        draw: boids | points | sprites | splat (default: the viewer's for the force and N); colour:
        velocity | speed | id. The camera frames the state of the first render of a size and mode
        and then stays, so that frames of a run line up. RuntimeError when no OpenGL context can be
        made here.
        """
        if not getattr(_native, "has_render", False):
            raise RuntimeError("render: this build has no renderer")
        w, h = _count("width", width), _count("height", height)
        return self._s.render(int(w), int(h), "" if draw is None else _name("draw", draw),
                              "" if colour is None else _name("colour", colour))

    def save(self, path: Union[str, os.PathLike]) -> None:
        """Writes the state as ``--out`` does (id order, header with the step and parameters)."""
        self._s.save(os.fspath(path))

    # --- what it is ------------------------------------------------------------------------------
    @property
    def n(self) -> int:
        return self._s.n

    @property
    def step_count(self) -> int:
        """Steps simulated so far (a loaded state continues its count)."""
        return self._s.step_count

    @property
    def engine(self) -> str:
        return self._s.engine

    @property
    def device(self) -> str:
        """The GPU's name, or the CPU engine's description."""
        return self._s.device

    @property
    def pipeline(self) -> str:
        return self._s.pipeline

    @property
    def force(self) -> str:
        return self._s.force

    @property
    def scenario(self) -> str:
        return self._s.scenario

    def __repr__(self) -> str:
        if "_s" not in self.__dict__:
            return "Simulation(<not constructed>)"
        return (f"Simulation(n={self.n}, force={self.force!r}, pipeline={self.pipeline!r}, "
                f"engine={self.engine!r}, step_count={self.step_count})")


def _list(name: str, value: Any) -> Optional[str]:
    if value is None:
        return None
    items = [value] if isinstance(value, (str, int, np.integer)) else list(value)
    if not items:
        raise ValueError(f"{name}: an empty list")
    return ",".join(str(int(v)) if isinstance(v, (int, np.integer)) and not isinstance(v, bool) else str(v)
                    for v in items)


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


def bench(force: Union[str, Sequence[str], None] = None, n: Union[int, Iterable[int], None] = None,
          pipeline: Union[str, Sequence[str], None] = None, engine: Optional[str] = None,
          scenario: Optional[str] = None, block_size: Union[int, Iterable[int], None] = None,
          cell_width: Union[int, Iterable[int], None] = None, steps: Optional[int] = None,
          warmup: Optional[int] = None, repeats: Optional[int] = None, max_seconds: Optional[float] = None,
          preset: Optional[str] = None, csv_path: Union[str, os.PathLike, None] = None,
          dims: Optional[int] = None) -> List[Dict[str, Any]]:
    """Runs ``murmur bench`` over the product of the lists and returns its rows as dicts.

    The keys are the columns of the bench CSV (docs/design.md, "The benchmark CSV schema"); numbers
    are int or float, cells that do not apply None. csv_path keeps the CSV (and its JSON sidecar).
    """
    args: List[str] = []
    for opt, name, value in (("--force", "force", force), ("--n", "n", n), ("--pipeline", "pipeline", pipeline),
                             ("--block-size", "block_size", block_size), ("--cell-width", "cell_width", cell_width)):
        text = _list(name, value)
        if text is not None:
            args += [opt, text]
    for opt, name, value in (("--engine", "engine", engine), ("--scenario", "scenario", scenario),
                             ("--preset", "preset", preset)):
        if value is not None:
            args += [opt, _name(name, value)]
    for opt, name, value in (("--steps", "steps", steps), ("--warmup", "warmup", warmup),
                             ("--repeats", "repeats", repeats), ("--dims", "dims", dims)):
        if value is not None:
            args += [opt, _count(name, value)]
    if max_seconds is not None:
        args += ["--max-seconds", repr(float(max_seconds))]
    with tempfile.TemporaryDirectory(prefix="murmur-bench-") as tmp:
        path = os.fspath(csv_path) if csv_path is not None else os.path.join(tmp, "bench.csv")
        status = _native.run_bench(args + ["--csv", path])
        if status != 0:
            raise RuntimeError(f"murmur bench ended with status {status}")
        with open(path, newline="") as f:
            return [{k: _cell(v) for k, v in row.items()} for row in csv.DictReader(f)]


def pipelines() -> List[Dict[str, Any]]:
    """The pipeline table (name, key, forces served, stages, whether it sorts, reorders, keeps lists,
    visits all pairs, a one-line summary), as the command line and the benchmark read it."""
    return _native.pipelines()


def rules() -> List[Dict[str, Any]]:
    """The rule table (name, kind: "local" rules run on every boids pipeline, "field" rules such as
    gravity on the pipelines that serve them; the force a step runs; the ``--params`` section; a
    one-line summary), as ``--rule`` and ``--force`` read it."""
    return _native.rules()


def scenarios() -> List[str]:
    """The scenario names (a saved state is "file:PATH")."""
    return list(_native.scenarios())


def param_table() -> List[Dict[str, Any]]:
    """Every parameter: its ``--params`` key, option, label, unit, help, default and allowed values."""
    return _native.param_table()


def cuda_available() -> bool:
    """True when this build has the CUDA engine and a CUDA device is present."""
    return bool(_native.cuda_available()[0])
