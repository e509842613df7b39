"""Typed, frozen dataclass configurations: build one from a (YAML) mapping with type checks, apply dotted-name
overrides, flatten to dotted names, hash canonically, read and write YAML. The sections themselves are in
:mod:`ragbench.config`, which re-exports everything here.
"""
from __future__ import annotations

import dataclasses
import difflib
import hashlib
import json
import math
import types
import typing
from dataclasses import fields, is_dataclass
from pathlib import Path
from typing import Any, Mapping, TypeVar

import yaml

from .errors import ConfigError

T = TypeVar("T")
_TRUE = frozenset({"true", "1", "yes", "on"})
_FALSE = frozenset({"false", "0", "no", "off"})


#: Dotted field name → its range ("[0, 1]" closed, "(0, inf)" open); filled by :mod:`ragbench.config`, next to the
#: sections whose fields they bound.
FIELD_RANGES: dict[str, str] = {}


def in_range(value: float, spec: str) -> bool:
    """Whether ``value`` lies in the interval ``spec`` (``"[0, 1)"``, ``"(0, inf)"``)."""
    low, high = (float(x) for x in spec[1:-1].split(","))
    above = value > low if spec[0] == "(" else value >= low
    below = value < high if spec[-1] == ")" else value <= high
    return above and below


def check_range(name: str, value: Any) -> None:
    """Raise :class:`ConfigError` when the dotted field ``name`` has a range and ``value`` lies outside it."""
    spec = FIELD_RANGES.get(name)
    if spec is not None and isinstance(value, (int, float)) and not isinstance(value, bool) \
            and not in_range(value, spec):
        raise ConfigError(f"{name}: {value!r} is outside its range {spec}. Fix: give a value in {spec}.")


def _hints(cls: type) -> dict[str, Any]:
    return typing.get_type_hints(cls)


def _coerce(value: Any, hint: Any, name: str) -> Any:
    """``value`` checked against (and converted to) the field's type; strings from the CLI are parsed."""
    origin = typing.get_origin(hint)
    args = typing.get_args(hint)
    if origin in (typing.Union, types.UnionType):
        if value is None and type(None) in args:
            return None
        inner = [a for a in args if a is not type(None)]
        return _coerce(value, inner[0], name)
    if origin is typing.Literal:
        if value not in args:
            raise ConfigError(f"{name}: expected one of {list(args)}, found {value!r}.")
        return value
    if isinstance(hint, type) and is_dataclass(hint):
        if isinstance(value, hint):
            return value
        if value is None:  # an empty YAML section ("dcs:") means the defaults
            return hint()
        if not isinstance(value, Mapping):
            raise ConfigError(f"{name}: expected a mapping of fields, found {value!r}. Fix: give a YAML mapping.")
        return from_dict(hint, value, prefix=name + ".")
    if origin in (tuple, list):
        if isinstance(value, str):  # CLI form: "a,b,c"
            value = [v.strip() for v in value.split(",") if v.strip()]
        if not isinstance(value, (list, tuple)):
            raise ConfigError(f"{name}: expected a list, found {value!r}. Fix: give a YAML list or 'a,b,c'.")
        item = args[0] if args else Any
        items = [_coerce(v, item, f"{name}[{i}]") for i, v in enumerate(value)]
        return tuple(items) if origin is tuple else items
    if origin is dict:
        if not isinstance(value, Mapping):
            raise ConfigError(f"{name}: expected a mapping, found {value!r}.")
        vt = args[1] if len(args) == 2 else Any
        return {k: _coerce(v, vt, f"{name}.{k}") for k, v in value.items()}
    if hint is bool:
        if isinstance(value, bool):
            return value
        if isinstance(value, str) and value.strip().lower() in _TRUE | _FALSE:
            return value.strip().lower() in _TRUE
        raise ConfigError(f"{name}: expected true or false, found {value!r}.")
    if hint is int:
        if isinstance(value, bool) or not isinstance(value, (int, float, str)):
            raise ConfigError(f"{name}: expected an integer, found {value!r}.")
        if isinstance(value, int):
            return value
        try:
            f = float(value)
        except ValueError:
            raise ConfigError(f"{name}: expected an integer, found {value!r}.") from None
        if not math.isfinite(f) or f != int(f):
            raise ConfigError(f"{name}: expected an integer, found {value!r}.")
        return int(f)
    if hint is float:
        if isinstance(value, bool):
            raise ConfigError(f"{name}: expected a number, found {value!r}.")
        try:
            f = float(value)
        except (TypeError, ValueError):
            raise ConfigError(f"{name}: expected a number, found {value!r}.") from None
        if math.isnan(f):
            raise ConfigError(f"{name}: expected a number, found NaN.")
        return f
    if hint is str:
        if not isinstance(value, str):
            raise ConfigError(f"{name}: expected a string, found {value!r}. Fix: quote it in YAML.")
        return value
    return value


def from_dict(cls: type[T], data: Mapping[str, Any] | None, prefix: str = "") -> T:
    """Build ``cls`` from a (nested) mapping; unknown keys raise with the list of valid ones."""
    if data is not None and not isinstance(data, Mapping):
        raise ConfigError(f"{prefix.rstrip('.') or 'config'}: expected a mapping of fields, found "
                          f"{type(data).__name__}. Fix: give a YAML mapping.")
    data = dict(data or {})
    hints = _hints(cls)
    names = [f.name for f in fields(cls)]  # type: ignore[arg-type]  # T is any config dataclass
    unknown = sorted(set(data) - set(names))
    if unknown:
        valid = ", ".join(prefix + n for n in names)
        raise ConfigError(f"unknown config field(s) {', '.join(prefix + u for u in unknown)}. Valid fields: {valid}.")
    kwargs = {k: _coerce(v, hints[k], prefix + k) for k, v in data.items()}
    for k, v in kwargs.items():
        check_range(prefix + k, v)
    return cls(**kwargs)


def to_dict(cfg: Any) -> dict[str, Any]:
    """Nested plain-dict form (YAML/JSON-safe)."""
    return dataclasses.asdict(cfg)


def flatten(cfg: Any, prefix: str = "") -> dict[str, Any]:
    """``{"lsh.tables": 10, "dcs.weights.intent": 0.5, …}`` from a config dataclass or a nested mapping."""
    items = ((f.name, getattr(cfg, f.name)) for f in fields(cfg)) if is_dataclass(cfg) else dict(cfg or {}).items()
    out: dict[str, Any] = {}
    for name, v in items:
        if is_dataclass(v) or isinstance(v, Mapping):
            out.update(flatten(v, f"{prefix}{name}."))
        else:
            out[f"{prefix}{name}"] = v
    return out


def with_overrides(cfg: T, overrides: Mapping[str, Any]) -> T:
    """A copy of ``cfg`` with dotted-name overrides applied and type-checked."""
    nested = to_dict(cfg)
    valid = set(flatten(cfg))
    for key, value in overrides.items():
        if key not in valid:
            close = difflib.get_close_matches(str(key), sorted(valid), n=1)
            hint = f" Did you mean {close[0]!r}?" if close else ""
            raise ConfigError(f"unknown config field {key!r}.{hint} Valid fields: {', '.join(sorted(valid))}.")
        node = nested
        parts = key.split(".")
        for p in parts[:-1]:
            node = node[p]
        node[parts[-1]] = value
    return from_dict(type(cfg), nested)


def config_hash(cfg: Any) -> str:
    """Stable SHA-256 (first 16 hex) of the canonical JSON of a config; same in every process."""
    payload = json.dumps(to_dict(cfg) if is_dataclass(cfg) else cfg, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()[:16]


def read_yaml_mapping(path: str | Path, kind: str) -> dict[str, Any]:
    """The top-level mapping of a YAML file (empty file → ``{}``); ``kind`` names the file in errors
    ("config", "batch", "experiment")."""
    p = Path(path)
    if not p.is_file():
        raise ConfigError(f"{kind} file {p} does not exist. Fix: check the path.")
    try:
        data = yaml.safe_load(p.read_text(encoding="utf-8")) or {}
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{kind} file {p} is not UTF-8 text (byte offset {exc.start}); is it a binary file? "
                          "Fix: give a YAML text file, re-encoded as UTF-8 if needed.") from None
    except yaml.YAMLError as exc:
        where = " ".join(str(exc).split())  # one line: PyYAML's message spans several
        raise ConfigError(f"{kind} file {p} is not valid YAML: {where}. Fix: correct the YAML syntax.") from None
    if not isinstance(data, dict):
        raise ConfigError(f"{kind} file {p}: expected a mapping at the top level, found {type(data).__name__}. "
                          "Fix: write 'key: value' lines at the top level.")
    return data


def dump_config(cfg: Any, path: str | Path) -> None:
    """Write ``cfg`` as YAML (sections in declaration order); :func:`load_config` reads it back equal."""
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    Path(path).write_text(yaml.safe_dump(to_dict(cfg), sort_keys=False), encoding="utf-8")
