"""The interaction rules, one class per row of the rule table (`murmur --help`, docs/models.md).

Each class is made from the tables the command line reads: its attributes are the parameters of
its section of the parameter table in snake_case (``boids.maxSpeed`` is ``max_speed``), with the
table's defaults, units and allowed values. A value is checked when it is set, by the command
line's own check, and a bad one raises ValueError (or TypeError) in one line that names the
attribute, the value and what is allowed:

    >>> import murmuration as mm
    >>> rule = mm.rules.Vicsek(noise=0.3, radius=1.0, speed=0.03)
    >>> rule.noise
    0.3
    >>> rule.noise = 9
    Traceback (most recent call last):
    ...
    ValueError: rule.noise=9 is invalid: vicsek noise eta must be a finite number >= 0 and at most 6.2832

A rule given to a `murmuration.Simulation` is the simulation's own copy (``sim.rule``): setting an
attribute there changes the running simulation from its next step.
"""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Tuple

from . import _support as _n

__all__ = ["Rule", "Cis565", "Boids", "Reynolds", "Vicsek", "Couzin", "Gravity", "by_name"]


class Rule:
    """An interaction rule and its parameters (the base of the classes below; use those).

    Attributes are the parameters of the rule's section of the parameter table; ``fields()`` lists
    them. Unset attributes read as the table's default (or, on a simulation's rule, the value the
    simulation runs with).

    >>> import murmuration as mm
    >>> r = mm.rules.Reynolds(max_speed=2.0)
    >>> r.max_speed, r.name
    (2.0, 'reynolds')
    """

    name: str = ""  #: the rule's name in the rule table (``--rule``, ``--force``)
    summary: str = ""  #: the rule table's one-line summary
    _fields: Dict[str, str] = {}  # attribute -> parameter key
    _section: str = ""

    def __init__(self, **values: Any):
        object.__setattr__(self, "_values", {})
        object.__setattr__(self, "_sim", None)
        unknown = [a for a in values if a not in type(self)._fields]
        if unknown:
            raise TypeError(f"{type(self).__name__}() got an unexpected parameter {unknown[0]!r}; its parameters: "
                            f"{', '.join(type(self)._fields)}")
        for attr, value in values.items():
            setattr(self, attr, value)

    @classmethod
    def fields(cls) -> List[str]:
        """The parameter attributes of this rule, in the table's order.

        >>> import murmuration as mm
        >>> mm.rules.Vicsek.fields()
        ['radius', 'speed', 'noise', 'dt', 'noise_kind']
        """
        return list(cls._fields)

    @classmethod
    def describe(cls, attr: str) -> Dict[str, Any]:
        """The parameter table's row of one attribute: key, label, unit, help, default, allowed.

        >>> import murmuration as mm
        >>> mm.rules.Vicsek.describe("noise")["unit"]
        'radians'
        """
        if attr not in cls._fields:
            raise AttributeError(cls._unknown(attr))
        row = _n.PARAMS[cls._fields[attr]]
        return {k: row[k] for k in ("key", "label", "unit", "help", "default_value", "allowed")}

    @classmethod
    def _unknown(cls, attr: str) -> str:
        return f"{cls.__name__} has no parameter {attr!r}; its parameters: {', '.join(cls._fields)}"

    def __getattr__(self, attr: str) -> Any:
        fields = type(self)._fields
        if attr.startswith("_") or attr not in fields:
            raise AttributeError(type(self)._unknown(attr))
        key = fields[attr]
        sim = self.__dict__.get("_sim")
        if sim is not None:
            return _n.from_native(key, sim._s.param(key))
        values = self.__dict__["_values"]
        if attr in values:
            return _n.from_native(key, values[attr][1])
        return _n.from_native(key, _n.PARAMS[key]["default_value"])

    def __setattr__(self, attr: str, value: Any) -> None:
        fields = type(self)._fields
        if attr not in fields:
            raise AttributeError(type(self)._unknown(attr))
        key, v = _n.checked(fields[attr], value, "rule." + attr)
        sim = self.__dict__.get("_sim")
        if sim is not None:
            sim._set_values([(key, v)])
        self.__dict__["_values"][attr] = (key, v)

    def _selection(self) -> List[Tuple[str, float]]:
        """The keys that select this rule (its force, and a local rule's rule set)."""
        row = _n.RULES[self.name]
        out = [_n.checked("force", row["force"], "rule")]
        if row["kind"] == "local":
            out.append(_n.checked("boids.rules", self.name, "rule"))
        return out

    def _assignments(self) -> List[Tuple[str, float]]:
        return self._selection() + list(self.__dict__["_values"].values())

    def _bound(self, sim: Any) -> "Rule":
        copy = type(self)()
        copy.__dict__["_values"] = dict(self.__dict__["_values"])
        copy.__dict__["_sim"] = sim
        return copy

    def copy(self) -> "Rule":
        """An unattached copy with the values this rule has (a simulation's rule: its current ones).

        >>> import murmuration as mm
        >>> mm.rules.Vicsek(noise=1.0).copy().noise
        1.0
        """
        out = type(self)()
        sim = self.__dict__.get("_sim")
        for attr in self._fields:
            if sim is not None or attr in self.__dict__["_values"]:
                out.__dict__["_values"][attr] = (self._fields[attr], _n.checked(self._fields[attr], getattr(self, attr),
                                                                               "rule." + attr)[1])
        return out

    def as_dict(self) -> Dict[str, Any]:
        """Every parameter of the rule by attribute.

        >>> import murmuration as mm
        >>> mm.rules.Vicsek().as_dict()["speed"]
        0.03
        """
        return {attr: getattr(self, attr) for attr in self._fields}

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and self.as_dict() == other.as_dict()  # type: ignore[union-attr]

    def __repr__(self) -> str:
        sim = self.__dict__.get("_sim")
        shown = self._fields if sim is not None else [a for a in self._fields if a in self.__dict__["_values"]]
        return f"{type(self).__name__}({', '.join(f'{a}={getattr(self, a)!r}' for a in shown)})"


def _make(rule_name: str, class_name: str) -> type:
    row = _n.RULES[rule_name]
    section = row["section"]
    fields = {_n.snake(key): key for key in _n.PARAMS if key.startswith(section + ".") and key != "boids.rules"}
    lines = [f"{row['summary'][0].upper()}{row['summary'][1:]}.", "",
             f"The ``{rule_name}`` row of the rule table ({row['kind']} rule; parameters of the ``{section}`` "
             "section). Parameters (attribute: meaning, unit, default, allowed):", ""]
    for attr, key in fields.items():
        p = _n.PARAMS[key]
        unit = f" [{p['unit']}]" if p["unit"] else ""
        lines.append(f"- ``{attr}``: {p['help']}{unit}; default {p['default']}; {p['allowed']}.")
    if row["kind"] == "local":
        lines += ["", f"A run of this rule gets the ``{row['boundary']}`` boundary unless one is given."]
    example = {"cis565": "max_speed=2.0", "reynolds": "alignment_scale=0.2", "vicsek": "noise=0.3, radius=1.0",
               "couzin": "zone_attraction=10.0", "gravity": "softening=0.02"}.get(rule_name, "")
    first = example.split(",")[0].split("=")[0]
    lines += ["", ">>> import murmuration as mm", f">>> rule = mm.rules.{class_name}({example})",
              f">>> rule.{first}", f"{_example_value(example)}"]
    cls = type(class_name, (Rule,), {"name": rule_name, "summary": row["summary"], "_fields": fields,
                                     "_section": section, "__doc__": "\n".join(lines), "__module__": __name__})
    return cls


def _example_value(example: str) -> str:
    value = example.split(",")[0].split("=")[1]
    return repr(float(value))


Cis565 = _make("cis565", "Cis565")
Reynolds = _make("reynolds", "Reynolds")
Vicsek = _make("vicsek", "Vicsek")
Couzin = _make("couzin", "Couzin")
Gravity = _make("gravity", "Gravity")

Boids = Cis565
"""The boids of the default world: another name of `Cis565`.

>>> import murmuration as mm
>>> mm.rules.Boids is mm.rules.Cis565
True
"""

_BY_NAME = {cls.name: cls for cls in (Cis565, Reynolds, Vicsek, Couzin, Gravity)}
if set(_BY_NAME) != set(_n.RULES):  # a rule added to the table needs its class here
    raise ImportError(f"murmuration.rules: the rule table has {sorted(_n.RULES)}, the package {sorted(_BY_NAME)}")


def by_name(name: str, **values: Any) -> Rule:
    """The rule of this name in the rule table, with these parameters.

    >>> import murmuration as mm
    >>> mm.rules.by_name("vicsek", noise=0.2)
    Vicsek(noise=0.2)
    """
    if not isinstance(name, str):
        raise TypeError(f"rule must be a rule object or a str, not {type(name).__name__}")
    if name not in _BY_NAME:
        raise ValueError(f"rule={name!r} is invalid: one of: {', '.join(_BY_NAME)}")
    return _BY_NAME[name](**values)


def _rule_of(sim_params: Dict[str, Any]) -> Optional[type]:
    force = sim_params["force"]
    if force == "gravity":
        return Gravity
    return _BY_NAME.get(sim_params["boids.rules"])


class _RulesModule(type(__import__("sys"))):  # type: ignore[misc]
    """This module, callable as the old ``murmuration.rules()`` table function was (deprecated)."""

    def __call__(self) -> List[Dict[str, Any]]:
        import warnings
        warnings.warn("murmuration.rules() is deprecated and goes in the next release; use murmuration.rules_table() "
                      "(murmuration.rules holds the rule classes)", DeprecationWarning, stacklevel=2)
        return list(_n.native.rules())


__import__("sys").modules[__name__].__class__ = _RulesModule
