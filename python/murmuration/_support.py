"""The native module, loaded once for the package's modules (an installed package holds it; a plain
CMake build puts it on PYTHONPATH as <build>/python), and the helpers every module shares."""

from __future__ import annotations

import math
import numbers
import os
import re
from typing import Any, Dict, List, Tuple

import numpy as np

# The CPU engine's OpenMP threads sleep when idle, as murmur's do, unless the user chose a policy
# (read when the OpenMP runtime loads with the native module).
os.environ.setdefault("OMP_WAIT_POLICY", "passive")

try:  # installed by pip: the module sits in the package
    from . import _murmuration as native  # type: ignore[attr-defined]
except ImportError:  # a plain CMake build: <build>/python on PYTHONPATH
    import _murmuration as native  # type: ignore[no-redef]

PARAMS: Dict[str, Dict[str, Any]] = {row["key"]: row for row in native.param_table()}
RULES: Dict[str, Dict[str, Any]] = {row["name"]: row for row in native.rules()}


def snake(key: str) -> str:
    """The Python name of a parameter key's last part: cohesionRadius -> cohesion_radius (G stays G)."""
    last = key.split(".")[-1]
    if last.isupper():
        return last
    return re.sub(r"(?<!^)([A-Z])", r"_\1", last).lower()


def shortest(value: float) -> float:
    """A float32 value as the shortest decimal that is the same float32 (0.1, not 0.10000000149011612)."""
    return float(str(np.float32(value)))


def from_native(key: str, value: Any) -> Any:
    """A parameter's value as Python shows it: a name, an int, or a float32 as its shortest decimal."""
    kind = PARAMS[key]["type"]
    if kind == "enum" and not isinstance(value, str):
        return PARAMS[key]["names"][int(value)]
    if kind in ("int", "count") and not isinstance(value, str):
        return int(value)
    if isinstance(value, float):
        return shortest(value)
    return value


def shown(value: Any) -> str:
    """A value as a message shows it: its repr, cut when long (a 400-digit int)."""
    if isinstance(value, np.generic):  # np.float64(nan) reads as nan
        value = value.item()
    text = repr(value)
    return text if len(text) <= 40 else text[:24] + f"... ({len(text)} characters)"


def checked(key: str, value: Any, what: str) -> Tuple[str, float]:
    """(key, value as the engine takes it) after the parameter table's check; ValueError or TypeError
    with one line naming `what`, the value and what is allowed."""
    row = PARAMS[key]
    if row["type"] == "enum":
        if not isinstance(value, str):
            raise TypeError(f"{what}={shown(value)}: must be a str, {row['allowed']}")
        return key, _value(key, value, value, what)
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{what}={shown(value)}: must be a number, {row['allowed']}")
    try:
        number = float(value)
    except OverflowError:
        raise ValueError(f"{what}={shown(value)} is invalid: {row['label']} must be {row['allowed']}") from None
    if row["type"] != "float" and math.isfinite(number) and number != int(value):
        raise ValueError(f"{what}={shown(value)} is invalid: {row['label']} must be {row['allowed']}")
    return key, _value(key, number, value, what)


def _value(key: str, value: Any, given: Any, what: str) -> float:
    try:
        return native.param_value(key, value, what)
    except ValueError as e:
        text = str(e)
        prefix = f"{what}={value!r}"
        if text.startswith(prefix):
            text = f"{what}={shown(given)}" + text[len(prefix):]
        raise ValueError(text) from None


# The options core's messages name, as the package names them (rule parameters by rule.<name>).
_WORLD_NAMES = {"halfSize": "half_size", "boundary": "boundary", "dims": "dims", "cellWidthFactor": "cell_width",
                "topological": "Topological(k)", "topologicalRadius": "Topological(radius=)",
                "listSteps": "list_steps", "blockSize": "block_size", "pipeline": "pipeline", "force": "rule"}


def python_name(key: str) -> str:
    if key in _WORLD_NAMES:
        return _WORLD_NAMES[key]
    if key == "boids.rules":
        return "rule"
    return "rule." + snake(key)


_OPTION_NAMES = {row["option"]: python_name(row["key"]) for row in PARAMS.values()}
_OPTION_NAMES.update({"--n": "n", "--select": "select", "--neighbours": "neighbours", "--seed": "seed",
                      "--engine": "engine", "--scenario": "scenario", "--radius": "rule.radius",
                      "--speed": "rule.speed", "--noise": "rule.noise", "--rules": "rule"})


def pythonize(message: str) -> str:
    """A core message in the package's words: its command-line options as the package's names, its
    notes on --params files left out."""
    text = re.sub(r";?\s*[^;()]*in a --params file\)", ")", message)
    text = re.sub(r" \(\)", "", text)
    text = re.sub(r"\(([^()]*?)\s*\)", r"(\1)", text)
    # "--n 40 is ..." -> "n=40 is ...": an option followed by its value; else the name alone.
    text = re.sub(r"(--[a-zA-Z][a-zA-Z-]*) (-?[0-9.][^ ,;:)]*)",
                  lambda m: f"{_OPTION_NAMES[m.group(1)]}={m.group(2)}" if m.group(1) in _OPTION_NAMES else m.group(0),
                  text)
    return re.sub(r"--[a-zA-Z][a-zA-Z-]*", lambda m: _OPTION_NAMES.get(m.group(0), m.group(0)), text)


def call(fn: Any, *args: Any) -> Any:
    """A native call whose ValueError speaks the package's names."""
    try:
        return fn(*args)
    except ValueError as e:
        raise ValueError(pythonize(str(e))) from None
    except MemoryError as e:
        raise MemoryError(pythonize(str(e))) from None


def count(name: str, value: Any, lo: int, hi: int) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an int, not {type(value).__name__}")
    if not lo <= int(value) <= hi:
        raise ValueError(f"{name}={shown(value)} is invalid: a whole number from {lo} to {hi}")
    return int(value)


def number(name: str, value: Any, lo: float, hi: float, lo_open: bool = True) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a number, not {type(value).__name__}")
    try:
        v = float(value)
    except OverflowError:
        v = math.inf
    ok = math.isfinite(v) and (v > lo if lo_open else v >= lo) and v <= hi
    if not ok:
        raise ValueError(f"{name}={shown(value)} is invalid: a finite number {'>' if lo_open else '>='} {lo:g} "
                         f"and at most {hi:g}")
    return v


def names_of(key: str) -> List[str]:
    return list(PARAMS[key]["names"])
