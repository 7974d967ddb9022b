"""Murmuration from Python: flocks (boids, Vicsek, Couzin) and gravity on the CPU (OpenMP) and CUDA
engines, bound directly to the engine the ``murmur`` command line runs.

    >>> import murmuration as mm
    >>> sim = mm.Simulation(2000, rule=mm.rules.Vicsek(noise=0.3, radius=1.0, speed=0.03), dims=2,
    ...                     boundary="periodic", half_size=10, engine="cpu", seed=1)
    >>> table = sim.run(200, observe_every=50, as_frame=False)   # NumPy, or pandas when installed
    >>> len(table), bool(table["polarization"][-1] > 0)
    (4, True)
    >>> snap = sim.snapshot()          # positions, velocities, species, ids, step: arrays you own
    >>> snap.positions.shape
    (2000, 3)

The pieces: `Simulation` (stepping, `Simulation.run`, `Simulation.observe`,
`Simulation.snapshot`, `Simulation.write_trajectory`, `Simulation.show`), the rules in
`murmuration.rules`, the neighbourhoods `Radius` and `Topological`, the starts in `Scenario`, and
`bench`. The tables the command line reads are `pipelines()`, `rules_table()`, `scenarios()`,
`param_table()` and `observables()`. docs/python.md is the guide.

Every bad argument raises ValueError or TypeError (MemoryError for a size that does not fit) with
one line naming the argument, its value and what is allowed; a failed call leaves the simulation
as it was.
"""

from __future__ import annotations

from typing import Any, Dict, List

from . import rules
from ._support import native as _native
from .simulation import (Animation, DeviceArray, Frame, Observation, Radius, Scenario, Simulation, Snapshot,
                         Topological, TrajectoryWriter, bench)

__all__ = ["Simulation", "rules", "Radius", "Topological", "Scenario", "Observation", "Snapshot",
           "TrajectoryWriter", "Frame", "Animation", "DeviceArray", "bench", "pipelines", "rules_table",
           "scenarios", "param_table", "observables", "cuda_available"]
__version__ = "0.1.0"


def pipelines() -> List[Dict[str, Any]]:
    """The pipeline table (name, key, forces served, stages, whether it sorts, reorders, keeps lists,
    visits all pairs, a one-line summary), as the command line and the benchmark read it.

    >>> import murmuration as mm
    >>> [p["name"] for p in mm.pipelines()][:3]
    ['naive', 'scattered', 'coherent']
    """
    return _native.pipelines()


def rules_table() -> List[Dict[str, Any]]:
    """The rule table: name, kind ("local" rules run on every boids pipeline, "field" rules such as
    gravity on the pipelines that serve them), the force a step runs, the parameter section, a
    one-line summary, the keys of its radius, speed, noise and time step, its default boundary.
    `murmuration.rules` has a class per row.

    >>> import murmuration as mm
    >>> [r["name"] for r in mm.rules_table()]
    ['cis565', 'reynolds', 'vicsek', 'couzin', 'gravity']
    """
    return _native.rules()


def scenarios() -> List[str]:
    """The scenario names (``Scenario.<name>(n)``; a file's bodies are ``Scenario.from_file``).

    >>> import murmuration as mm
    >>> mm.scenarios()
    ['uniform', 'dense', 'plummer', 'galaxies', 'galaxy']
    """
    return list(_native.scenarios())


def param_table() -> List[Dict[str, Any]]:
    """Every parameter: its ``--params`` key, option, label, unit, help, default and allowed values.

    >>> import murmuration as mm
    >>> next(r for r in mm.param_table() if r["key"] == "vicsek.noise")["unit"]
    'radians'
    """
    return _native.param_table()


def observables() -> List[Dict[str, Any]]:
    """The observables' table: column (the ``--observables`` CSV's and ``Observation``'s name), the
    force it belongs to, whether it needs ``flocks=True``, whether it is a drift from the first
    sample, and what it means.

    >>> import murmuration as mm
    >>> [o["column"] for o in mm.observables()][:2]
    ['polarization', 'mean_speed']
    """
    return _native.observable_table()


def cuda_available() -> bool:
    """True when this build has the CUDA engine and a CUDA device is present.

    >>> import murmuration as mm
    >>> isinstance(mm.cuda_available(), bool)
    True
    """
    return bool(_native.cuda_available()[0])
