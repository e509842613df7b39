"""One tunable parameter of a search space: its distribution text (``int[4, 32]``, ``float[0, 0.5, step=0.1]``,
``choice[a, b]``), checked against the config field it names, and its Optuna distribution.

:func:`parse_param` reads and validates one ``space:`` entry of an experiment file (:mod:`ragbench.tune.space`);
:func:`param_text` writes a :class:`Param` back in the same form.
"""
from __future__ import annotations

import difflib
import math
import re
from decimal import Decimal
import typing
from dataclasses import dataclass
from typing import Any

import yaml

from ..config import FIELD_RANGES, RagbenchConfig, field_names, in_range, with_overrides
from ..errors import ConfigError, require_extra

KINDS = ("int", "float", "choice")
_DIST = re.compile(r"^\s*([A-Za-z]+)\s*\[(.*)\]\s*$", re.S)


@dataclass(frozen=True)
class Param:
    """One tunable field: ``kind`` int | float | choice; ``choices`` for choice, else ``low``/``high``."""

    name: str
    kind: str
    low: float | int | None = None
    high: float | int | None = None
    log: bool = False
    step: float | int | None = None
    choices: tuple[Any, ...] = ()

    def distribution(self) -> Any:
        """The matching Optuna distribution."""
        d = require_extra("optuna.distributions", "tune", "tuning")

        if self.kind == "choice":
            return d.CategoricalDistribution(list(self.choices))
        low, high = self.bounds()
        if self.kind == "int":
            return d.IntDistribution(int(low), int(high), log=self.log, step=int(self.step or 1))
        return d.FloatDistribution(float(low), float(high), log=self.log, step=self.step)

    def suggest(self, trial: Any) -> Any:
        """A value from ``trial`` (an Optuna trial)."""
        if self.kind == "choice":
            return trial.suggest_categorical(self.name, list(self.choices))
        low, high = self.bounds()
        if self.kind == "int":
            return trial.suggest_int(self.name, int(low), int(high), log=self.log, step=int(self.step or 1))
        return self.tidy(trial.suggest_float(self.name, float(low), float(high), log=self.log, step=self.step))

    def tidy(self, value: Any) -> Any:
        """A stepped float as written in the space (Optuna's ``low + k·step`` gives 0.6000000000000001 for 0.6):
        rounded to the decimals of ``low`` and ``step``. Other values are returned as they are."""
        if self.kind != "float" or not self.step or not isinstance(value, float):
            return value
        places = max(_decimals(self.step), _decimals(self.low if self.low is not None else 0.0))
        return round(value, places)

    def bounds(self) -> tuple[float, float]:
        """``(low, high)`` of an int or float parameter."""
        if self.low is None or self.high is None:
            raise ConfigError(f"{self.name}: a {self.kind} parameter needs low and high bounds.")
        return self.low, self.high


def _decimals(x: float | int) -> int:
    """Decimal places of a number as written (0.05 → 2, 1e-3 → 3, 2 → 0)."""
    exponent = Decimal(repr(float(x))).normalize().as_tuple().exponent
    return max(0, -int(exponent)) if isinstance(exponent, int) else 0


def _number(text: str, what: str) -> float:
    try:
        v = float(text)
    except ValueError:
        raise ConfigError(f"{what}: expected a number, found {text!r}.") from None
    if not math.isfinite(v):
        raise ConfigError(f"{what}: expected a finite number, found {text!r}.")
    return v


def _hint(name: str) -> Any:
    """Type annotation of the dotted config field ``name``."""
    cls: Any = RagbenchConfig
    parts = name.split(".")
    for p in parts[:-1]:
        cls = typing.get_type_hints(cls)[p]
    return typing.get_type_hints(cls)[parts[-1]]


def _check_field(name: str) -> None:
    valid = field_names()
    if name not in valid:
        close = difflib.get_close_matches(name, valid, n=1)
        hint = f" Did you mean {close[0]!r}?" if close else ""
        raise ConfigError(f"space: unknown config field {name!r}.{hint} Valid fields: {', '.join(valid)}.")


def parse_param(name: str, text: Any) -> Param:
    """``int[4, 32]``, ``int[10, 100, log]``, ``int[0, 100, step=10]``, ``float[0, 0.5]``, ``float[1e-3, 1, log]``,
    ``choice[a, b]`` (items read as YAML scalars), or a YAML list (= choice)."""
    _check_field(name)
    if isinstance(text, (list, tuple)):
        items = list(text)
        kind, args = "choice", None
    else:
        m = _DIST.match(str(text))
        if m is None or m.group(1).lower() not in KINDS:
            raise ConfigError(f"space.{name}: cannot read {text!r}; expected int[LOW, HIGH], float[LOW, HIGH] "
                              "(optionally ', log' or ', step=S') or choice[A, B, …].")
        kind, args = m.group(1).lower(), [a.strip() for a in m.group(2).split(",") if a.strip()]
        items = [yaml.safe_load(a) for a in args] if kind == "choice" else []
    hint = _hint(name)
    if kind == "choice":
        if not items:
            raise ConfigError(f"space.{name}: choice[] is empty. Fix: list at least one value.")
        if len({repr(i) for i in items}) != len(items):
            raise ConfigError(f"space.{name}: choice{items} repeats a value. Fix: list each value once.")
        for v in items:
            if v is not None and not isinstance(v, (bool, int, float, str)):
                raise ConfigError(f"space.{name}: choice values must be scalars, found {v!r}.")
        p = Param(name, "choice", choices=tuple(items))
    else:
        assert args is not None
        if len(args) < 2:
            raise ConfigError(f"space.{name}: {kind}[…] needs LOW and HIGH, found {text!r}.")
        low, high = _number(args[0], f"space.{name} low"), _number(args[1], f"space.{name} high")
        log, step = False, None
        for extra in args[2:]:
            if extra.lower() == "log":
                log = True
            elif extra.lower().startswith("step="):
                step = _number(extra[5:], f"space.{name} step")
                if step <= 0:
                    raise ConfigError(f"space.{name}: step must be > 0, found {step}.")
            else:
                raise ConfigError(f"space.{name}: unknown option {extra!r}; expected 'log' or 'step=S'.")
        if low > high:
            raise ConfigError(f"space.{name}: the range [{args[0]}, {args[1]}] is empty (low > high). "
                              "Fix: swap the bounds.")
        if log and low <= 0:
            raise ConfigError(f"space.{name}: a log range needs low > 0, found {args[0]}.")
        if log and step is not None:
            raise ConfigError(f"space.{name}: 'log' and 'step' cannot be combined (Optuna's rule).")
        if kind == "int":
            if hint not in (int, float):
                raise ConfigError(f"space.{name}: int[…] given for a field of type {getattr(hint, '__name__', hint)}."
                                  " Fix: use choice[…].")
            if low != int(low) or high != int(high) or (step is not None and step != int(step)):
                raise ConfigError(f"space.{name}: int[…] bounds and step must be integers, found {text!r}.")
            low, high = int(low), int(high)
            step = int(step) if step is not None else None
            if step is not None and (high - low) < step and high != low:
                raise ConfigError(f"space.{name}: step {step} is larger than the range [{low}, {high}].")
        elif hint is not float:
            raise ConfigError(f"space.{name}: float[…] given for a field of type {getattr(hint, '__name__', hint)}. "
                              "Fix: use int[…] for integer fields or choice[…].")
        p = Param(name, kind, low, high, log, step)
    # Every value the sampler may produce must lie in the field's own range and be accepted by the config.
    probes = list(p.choices) if p.kind == "choice" else [p.low, p.high]
    spec = FIELD_RANGES.get(name)
    outside = [v for v in probes if spec and isinstance(v, (int, float)) and not isinstance(v, bool)
               and not in_range(v, spec)]
    if outside:
        raise ConfigError(f"space.{name}: {text!r} reaches outside the field's range {spec} ({outside[0]!r} is not "
                          f"in it). Fix: keep every value of the space inside {spec}.")
    for v in probes:
        with_overrides(RagbenchConfig(), {name: v})
    return p


def param_text(p: Param) -> str:
    """``p`` in the distribution form :func:`parse_param` reads (as written into a study's ``spec.yaml``)."""
    if p.kind == "choice":
        return "choice[" + ", ".join(yaml.safe_dump(c, default_flow_style=True).strip().removesuffix("\n...")
                                     for c in p.choices) + "]"
    extra = ", log" if p.log else (f", step={p.step}" if p.step is not None else "")
    return f"{p.kind}[{p.low}, {p.high}{extra}]"
