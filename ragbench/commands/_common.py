"""The one command-line grammar, as helpers every sub-command uses (tests/test_cli_grammar.py checks it).

* ``--config FILE`` and repeatable ``--set dotted.name=value`` on every command that reads a config
  (:func:`add_config_options`, :func:`load_cfg`); ``--set`` is applied after the file, options such as
  ``--retriever`` after both.
* ``--retriever`` (retrieval mode), ``-k`` (cutoff), ``--model`` (chat model): :func:`add_retriever_option`,
  :func:`add_k_option`, :func:`add_model_option`.
* ``--json`` and ``--quiet`` (:func:`add_output_options`): progress is always on stderr and only ``--quiet``
  silences it; with ``--json`` stdout is exactly one JSON line (:class:`Output` sends the human-readable report
  to stderr instead).
* ``--no-mlflow`` (:func:`add_tracking_option`) marks an evaluating command: it logs one MLflow run.
"""
from __future__ import annotations

import argparse
import json
import math
import sys
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ..config import RagbenchConfig, load_config
from ..errors import ConfigError

#: Retrieval modes every ``--retriever`` accepts (``keyword`` is an alias of ``bm25``).
RETRIEVERS = ("bm25", "dense", "lsh", "ann", "hybrid")


def split_names(value: str) -> list[str]:
    """``"a, b,,c"`` → ``["a", "b", "c"]``: a comma-separated list of roles or departments from the command line."""
    return [v for v in (x.strip() for x in value.split(",")) if v]


def add_principal_options(p: argparse.ArgumentParser, verb: str) -> None:
    """``--user`` with ``--roles/--departments/--classification``: act as that principal (``verb``: "search" …)."""
    p.add_argument("--user", default=None,
                   help=f"{verb} as this user: documents are shown only as their ACLs allow (default: unrestricted)")
    p.add_argument("--roles", default="", help="comma-separated roles of --user")
    p.add_argument("--departments", default="", help="comma-separated departments of --user")
    p.add_argument("--classification", default="Public", help="the --user's maximum classification")


def principal_from(args: argparse.Namespace) -> Any:
    """The :class:`~ragbench.schema.Principal` of :func:`add_principal_options`' flags, or ``None`` without --user."""
    if not getattr(args, "user", None):
        return None
    from ..schema import Principal

    return Principal.make(args.user, split_names(args.roles), split_names(args.departments), args.classification)


def add_config_options(p: argparse.ArgumentParser) -> None:
    """``--config FILE`` and repeatable ``--set KEY=VALUE``."""
    p.add_argument("--config", metavar="FILE", default=None,
                   help="YAML config; missing sections and fields take their defaults")
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", dest="set",
                   help="override one config field by its dotted name, e.g. --set bm25.k1=1.2 (repeatable; "
                        "applied after --config)")


def add_retriever_option(p: argparse.ArgumentParser, default: str | list[str] | None = None, multiple: bool = False,
                         choices: Sequence[str] = RETRIEVERS, help: str | None = None) -> None:
    """``--retriever MODE`` (or a comma-separated list when ``multiple``)."""
    names = ", ".join(choices)
    if multiple:
        p.add_argument("--retriever", type=_list_of(choices), default=default, metavar="MODE[,MODE…]",
                       help=help or f"comma-separated retrieval modes from {names} (default: {default})")
    else:
        p.add_argument("--retriever", choices=tuple(choices) + ("keyword",), default=default, metavar="MODE",
                       help=help or f"retrieval mode: {names} (default: {default or 'retrieval.mode of the config'})")


def add_k_option(p: argparse.ArgumentParser, default: int | list[int] | None = None, help: str | None = None,
                 multiple: bool = False) -> None:
    """``-k N``: the retrieval cutoff (``multiple``: comma-separated cutoffs such as ``5,10,25``)."""
    if multiple:
        p.add_argument("-k", type=_int_list, default=default, metavar="K[,K…]",
                       help=help or f"comma-separated cutoffs (default: {default})")
    else:
        p.add_argument("-k", type=int, default=default, metavar="N",
                       help=help or f"results per query / metric cutoff (default: {default or 'retrieval.k'})")


def add_model_option(p: argparse.ArgumentParser, default: str | None = None, help: str | None = None) -> None:
    """``--model NAME``: the chat model (extractive | openai | llama), overriding ``llm``/``answer`` config."""
    p.add_argument("--model", default=default, metavar="NAME",
                   help=help or "chat model: extractive | openai | llama (default: the config's)")


def add_output_options(p: argparse.ArgumentParser, json_help: str | None = None) -> None:
    """``--json`` (stdout: exactly one JSON line) and ``--quiet`` (no progress on stderr)."""
    p.add_argument("--json", action="store_true",
                   help=json_help or "print exactly one JSON line on stdout (the report goes to stderr)")
    p.add_argument("--quiet", action="store_true", help="no progress bars or report on stderr")


def add_tracking_option(p: argparse.ArgumentParser) -> None:
    """``--no-mlflow``; marks the parser as an evaluating command (``evaluating=True`` in its defaults)."""
    p.add_argument("--no-mlflow", action="store_true",
                   help="do not log an MLflow run (results are still saved locally)")
    p.set_defaults(evaluating=True)


def add_common_options(p: argparse.ArgumentParser, tracked: bool = True, json_help: str | None = None) -> None:
    """The options every evaluating command has: config, output and (``tracked``) tracking."""
    add_config_options(p)
    add_output_options(p, json_help)
    if tracked:
        add_tracking_option(p)


def _list_of(choices: Sequence[str]) -> Callable[[str], list[str]]:
    allowed = set(choices) | {"keyword"}

    def parse(text: str) -> list[str]:
        items = [x.strip() for x in text.split(",") if x.strip()]
        bad = [x for x in items if x not in allowed]
        if not items or bad:
            raise argparse.ArgumentTypeError(f"expected comma-separated modes from {', '.join(choices)}, "
                                             f"found {text!r}")
        return ["bm25" if x == "keyword" else x for x in items]

    return parse


def _int_list(text: str) -> list[int]:
    try:
        ks = [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected comma-separated integers like 5,10,25, found {text!r}") from None
    if not ks or min(ks) < 1:
        raise argparse.ArgumentTypeError(f"expected positive integers, found {text!r}")
    return ks


def parse_sets(pairs: Sequence[str] | None) -> dict[str, Any]:
    """``["bm25.k1=1.2", "answer.llm_model=null"]`` → ``{"bm25.k1": "1.2", "answer.llm_model": None}``; the
    config converts each string to its field's type."""
    out: dict[str, Any] = {}
    for pair in pairs or ():
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise ConfigError(f"--set expects key=value, found {pair!r}. Fix: e.g. --set bm25.k1=1.2")
        v = value.strip()
        out[key.strip()] = None if v.lower() in ("null", "none", "~") else v
    return out


def load_cfg(args: argparse.Namespace, overrides: Mapping[str, Any] | None = None,
             base: Callable[[str | None], RagbenchConfig] | None = None) -> RagbenchConfig:
    """The config the options describe: ``--config`` (read by ``base`` when given, e.g. a command's own default
    chunking), then ``--set``, then ``overrides`` from specific options (``None`` values are skipped)."""
    from ..config import with_overrides

    path = getattr(args, "config", None)
    cfg = base(path) if base is not None else load_config(path)
    cfg = with_overrides(cfg, parse_sets(getattr(args, "set", None)))
    extra = {k: v for k, v in (overrides or {}).items() if v is not None}
    return with_overrides(cfg, extra) if extra else cfg


def show_progress(args: argparse.Namespace) -> bool:
    """Progress bars (on stderr) unless ``--quiet``; ``--json`` does not silence them."""
    return not getattr(args, "quiet", False)


def _clean(value: Any) -> Any:
    """JSON-safe: NaN / ±inf → null, tuples → lists, numpy scalars → Python numbers."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, Mapping):
        return {str(k): _clean(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_clean(v) for v in value]
    if hasattr(value, "item") and callable(value.item) and getattr(value, "ndim", 1) == 0:
        return _clean(value.item())
    return value


def json_line(record: Mapping[str, Any]) -> str:
    """One line of strict JSON (no NaN)."""
    return json.dumps(_clean(record), ensure_ascii=False, default=str, allow_nan=False)


class Output:
    """Where a command prints: the report on stdout, or on stderr with ``--json`` (stdout then carries only the
    JSON line); nothing on stderr with ``--quiet`` but errors."""

    def __init__(self, args: argparse.Namespace) -> None:
        self.as_json = bool(getattr(args, "json", False))
        self.quiet = bool(getattr(args, "quiet", False))

    def text(self, *lines: Any) -> None:
        """Human-readable report lines."""
        if self.as_json:
            if not self.quiet:
                print(*lines, sep="\n", file=sys.stderr, flush=True)
        else:
            print(*lines, sep="\n", flush=True)

    def json(self, record: Mapping[str, Any]) -> None:
        """The one JSON line (only with ``--json``)."""
        if self.as_json:
            print(json_line(record), flush=True)

    @staticmethod
    def error(message: str) -> None:
        print(f"error: {message}", file=sys.stderr, flush=True)
