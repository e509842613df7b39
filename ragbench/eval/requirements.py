"""Requirements on an evaluation's numbers (``ragbench eval golden --require answer.RefusalAccuracy>=0.9``): a
measure of one system, overall or on one slice, against a bound, checked on every golden set of the run and on their
pool. An unmet requirement makes the command exit 1 (the job ran and recorded a failure), so a pipeline can stop on a
regression the way a test suite does.

A requirement reads ``SYSTEM.MEASURE OP VALUE`` or ``SYSTEM.SLICE.MEASURE OP VALUE`` with OP one of ``>=``, ``<=``,
``>``, ``<``, ``==``: ``answer.refuse-unanswerable.RefusalAccuracy>=0.8``, ``answer.LeakedDocs<=0``,
``dense.nDCG@5>=0.9``. Names are those of the run's ``--json`` record (``systems`` and ``slices``); a name the run did
not measure is unmet and says which names it has.
"""
from __future__ import annotations

import math
import operator
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..errors import ConfigError

_OPS: dict[str, Callable[[float, float], bool]] = {">=": operator.ge, "<=": operator.le, "==": operator.eq,
                                                   ">": operator.gt, "<": operator.lt}
_FORM = re.compile(r"^\s*(?P<name>[^<>=\s]+)\s*(?P<op>>=|<=|==|>|<)\s*(?P<value>[-+]?(?:\d+\.?\d*|\.\d+))\s*$")


@dataclass(frozen=True)
class Requirement:
    text: str
    system: str
    slice: str | None
    measure: str
    op: str
    bound: float

    def met_by(self, value: float | None) -> bool:
        return value is not None and not math.isnan(value) and _OPS[self.op](value, self.bound)


def parse_requirement(text: str) -> Requirement:
    """A :class:`Requirement` from its text (module doc); :class:`ConfigError` naming the form when it is not one."""
    m = _FORM.match(str(text))
    parts = m.group("name").split(".") if m else []
    if m is None or len(parts) not in (2, 3) or not all(parts):
        raise ConfigError(f"--require {text!r}: expected SYSTEM.MEASURE OP VALUE or SYSTEM.SLICE.MEASURE OP VALUE, "
                          "e.g. answer.RefusalAccuracy>=0.9 or answer.refuse-acl.RefusalAccuracy>=0.9 (OP: >=, <=, "
                          ">, <, ==).")
    system, *middle, measure = parts
    return Requirement(str(text).strip(), system, middle[0] if middle else None, measure, m.group("op"),
                       float(m.group("value")))


def measured(record: Mapping[str, Any], req: Requirement) -> float | None:
    """The value ``req`` names in a ``--json`` record (``systems`` / ``slices``), or ``None`` when not measured."""
    if req.slice is None:
        values = record.get("systems", {}).get(req.system, {})
    else:
        values = record.get("slices", {}).get(req.system, {}).get(req.slice, {})
    value = values.get(req.measure)
    return None if value is None else float(value)


def available(record: Mapping[str, Any], req: Requirement) -> str:
    """What the record does measure where ``req`` looked, for the message of an unmet requirement."""
    systems = record.get("systems", {})
    if req.system not in systems:
        return f"systems: {', '.join(systems)}"
    if req.slice is not None:
        slices = record.get("slices", {}).get(req.system, {})
        if req.slice not in slices:
            return f"slices of {req.system}: {', '.join(slices)}"
        return f"measures on {req.slice}: {', '.join(slices[req.slice])}"
    return f"measures of {req.system}: {', '.join(systems[req.system])}"


def check(requirements: Sequence[Requirement], records: Mapping[str, Mapping[str, Any]]) -> list[dict[str, Any]]:
    """One row per requirement and record (``records``: scope name → ``--json`` record, e.g. each set and "pooled"):
    ``requirement``, ``scope``, ``value`` (``None`` when not measured), ``met`` and, when not measured, ``note``."""
    rows = []
    for req in requirements:
        for scope, record in records.items():
            value = measured(record, req)
            row: dict[str, Any] = {"requirement": req.text, "scope": scope, "value": value,
                                   "met": req.met_by(value)}
            if value is None:
                row["note"] = "not measured; " + available(record, req)
            rows.append(row)
    return rows


def report(rows: Sequence[Mapping[str, Any]]) -> str:
    """The printed table of :func:`check`'s rows, then how many were met."""
    if not rows:
        return ""
    width = max(len(str(r["requirement"])) for r in rows)
    scope_w = max(len(str(r["scope"])) for r in rows)
    lines = ["Requirements"]
    for r in rows:
        value = "—" if r["value"] is None else f"{r['value']:.3f}"
        mark = "met" if r["met"] else "NOT MET"
        note = f"  ({r['note']})" if r.get("note") else ""
        lines.append(f"  {str(r['requirement']).ljust(width)}  {str(r['scope']).ljust(scope_w)}  {value:>7}  "
                     f"{mark}{note}")
    missed = sum(not r["met"] for r in rows)
    lines.append(f"  {len(rows) - missed} of {len(rows)} met" + (f"; {missed} not met" if missed else ""))
    return "\n".join(lines)
