"""Server settings: the ``serve:`` section of a config file and ``--set serve.*`` overrides.

They live apart from :class:`~ragbench.config.RagbenchConfig` on purpose: host names, token keys and rate limits
are operations, not research knobs, so they must not enter config hashes or MLflow params. A config file may hold
both: :func:`load_settings` takes its ``serve:`` section here and hands the rest to ``load_config``.
"""
from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..config import FIELD_RANGES, RagbenchConfig, from_dict, read_yaml_mapping, to_dict, with_overrides
from ..errors import ConfigError
from ..eval.answers import answer_config

#: Environment variable holding the HS256 secret (never a config file or a command-line option).
SECRET_ENV = "RAGBENCH_JWT_SECRET"
#: Environment variable the command uses to hand the settings to each uvicorn worker.
SETTINGS_ENV = "RAGBENCH_SERVE_SETTINGS"


@dataclass(frozen=True)
class ServeConfig:
    """Knobs of ``ragbench serve`` (dotted names ``serve.<field>``)."""

    host: str = "127.0.0.1"
    port: int = 8000
    workers: int = 1
    retriever: str = "dense"
    rate_limit_per_minute: int = 60
    max_body_bytes: int = 65_536
    jwt_public_key: str | None = None  # PEM file for RS256 / ES256
    jwt_issuer: str | None = None
    jwt_audience: str | None = None
    jwt_leeway_seconds: int = 0
    api_keys: str | None = None  # YAML file: key (or sha256:<hex>) → principal claims
    otlp_endpoint: str | None = None  # e.g. http://127.0.0.1:4318/v1/traces; off when unset
    research_workers: int = 1
    research_max_passes: int = 4
    hub_refresh_seconds: float = 2.0
    research_lease_seconds: float = 60.0  # an open job not heartbeated for this long belongs to a dead worker
    max_k: int = 50
    budget: bool = False  # per-tenant daily budget of answer.* (the Enterprise BudgetGuard); off by default
    # ragbench_answers_total{decided_by,refused} on /metrics. Off by default: /metrics needs no credentials, and
    # the label tells a restricted-gap refusal from a weak retrieval; turn it on where only operators reach /metrics.
    decided_by_metrics: bool = False

    def check(self) -> ServeConfig:
        if self.rate_limit_per_minute < 0:
            raise ConfigError(f"serve.rate_limit_per_minute must be ≥ 0 (0 = off), found {self.rate_limit_per_minute}.")
        if self.max_body_bytes < 1024:
            raise ConfigError(f"serve.max_body_bytes must be ≥ 1024, found {self.max_body_bytes}.")
        if self.workers < 1 or self.research_workers < 1:
            raise ConfigError("serve.workers and serve.research_workers must be ≥ 1.")
        if not 1 <= self.research_max_passes <= 4:
            raise ConfigError(f"serve.research_max_passes must be 1–4, found {self.research_max_passes}.")
        if self.max_k < 1:
            raise ConfigError(f"serve.max_k must be ≥ 1, found {self.max_k}.")
        return self


#: Ranges of the serve knobs (checked when the settings are read, like every config range).
FIELD_RANGES.update({
    "serve.research_lease_seconds": "[1, 86400]", "serve.hub_refresh_seconds": "[0, inf)",
})


@dataclass(frozen=True)
class ServeSettings:
    """What every server process reads: the stores, the config file, the ``--set`` pairs and the serve options
    given on the command line (each worker rebuilds its configs from them)."""

    store: str
    hub: str | None = None
    config_path: str | None = None
    overrides: Mapping[str, Any] = field(default_factory=dict)  # --set pairs (serve.* and research names)
    options: Mapping[str, Any] = field(default_factory=dict)  # serve fields from explicit command-line options

    def serve_config(self) -> ServeConfig:
        return load_settings(self.config_path, self.overrides, self.options)[0]

    def research_config(self, mode: str | None = None) -> RagbenchConfig:
        """The research config for answering in ``mode``: the answer defaults of that mode (sentence chunks, the
        mode's refusal threshold, no embedding cache), then the file, then ``--set``."""
        base = with_overrides(answer_config(None, mode), SERVE_DEFAULTS)
        return load_settings(self.config_path, self.overrides, self.options, base=base)[1]

    def to_env(self) -> str:
        return json.dumps({"store": self.store, "hub": self.hub, "config_path": self.config_path,
                           "overrides": dict(self.overrides), "options": dict(self.options)})

    @classmethod
    def from_env(cls, text: str | None = None) -> ServeSettings:
        raw = text if text is not None else os.environ.get(SETTINGS_ENV)
        if not raw:
            raise ConfigError(f"{SETTINGS_ENV} is not set. Fix: start the server with `ragbench serve`.")
        data = json.loads(raw)
        return cls(store=data["store"], hub=data.get("hub"), config_path=data.get("config_path"),
                   overrides=data.get("overrides") or {}, options=data.get("options") or {})


#: Research defaults that differ when serving: query vectors are not worth a disk-cache write per request (the
#: store already holds every chunk vector).
SERVE_DEFAULTS: dict[str, Any] = {"embedding.cache": False}


def split_overrides(overrides: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """``--set`` pairs split into (serve fields without the prefix, research config fields)."""
    serve = {k.removeprefix("serve."): v for k, v in overrides.items() if k.startswith("serve.")}
    rest = {k: v for k, v in overrides.items() if not k.startswith("serve.")}
    return serve, rest


def load_settings(path: str | Path | None, overrides: Mapping[str, Any], options: Mapping[str, Any],
                  base: RagbenchConfig | None = None) -> tuple[ServeConfig, RagbenchConfig]:
    """(serve config, research config) from a YAML file, then ``--set`` overrides, then explicit options
    (``None`` options are skipped). ``base`` supplies the research defaults (the answer settings)."""
    data = read_yaml_mapping(path, "config") if path is not None else {}
    serve_data = data.pop("serve", None) or {}
    if not isinstance(serve_data, Mapping):
        raise ConfigError(f"config file {path}: serve must be a mapping of serve.* fields.")
    serve_set, rest_set = split_overrides(overrides)
    serve = from_dict(ServeConfig, {**serve_data, **serve_set, **{k: v for k, v in options.items() if v is not None}},
                      prefix="serve.")
    cfg = from_dict(RagbenchConfig, _merge(to_dict(base or RagbenchConfig()), data))
    return serve.check(), with_overrides(cfg, rest_set)


def _merge(into: dict[str, Any], data: Mapping[str, Any]) -> dict[str, Any]:
    """``data`` laid over ``into`` section by section (unknown names are left for ``from_dict`` to reject)."""
    for k, v in data.items():
        if isinstance(v, Mapping) and isinstance(into.get(k), dict):
            into[k] = _merge(into[k], v)
        else:
            into[k] = v
    return into
