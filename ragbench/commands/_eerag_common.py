"""Helpers shared by the ``eerag`` sub-commands (``commands/eerag.py`` and ``commands/eerag_converse.py``): the
option grammar, the config from the options, the chat model of ``--model`` and MLflow logging."""
from __future__ import annotations

import argparse
from typing import Any

from ..config import RagbenchConfig
from ._common import (
    Output,
    add_config_options,
    add_k_option,
    add_model_option,
    add_output_options,
    add_retriever_option,
    load_cfg,
)

EXPERIMENT = "ragbench-eerag"

MODEL_HELP = "chat model: llama (best installed local GGUF), llama:<name> (e.g. llama:qwen2.5-coder-1.5b), openai"


def chat_model(name: str | None, cfg: RagbenchConfig | None = None) -> Any:
    """The chat model of ``--model`` or, without it, of ``llm.model`` (None when neither is set)."""
    if not name and not (cfg is not None and cfg.llm.model):
        return None
    from ..llm import chat_model_for

    return chat_model_for(cfg or RagbenchConfig(), name)


def config_from(args: argparse.Namespace) -> RagbenchConfig:
    """``--config`` + ``--set`` + the option shortcuts (``--retriever``, ``-k``, ``--elector``)."""
    return load_cfg(args, {"retrieval.mode": getattr(args, "retriever", None), "eerag.top_k": getattr(args, "k", None),
                           "eerag.elector": getattr(args, "elector", None)})


def add_grammar(p: argparse.ArgumentParser, k_help: str = "candidates shown in the header (eerag.top_k)") -> None:
    add_config_options(p)
    add_retriever_option(p, help="retrieval mode for candidates: bm25, dense, lsh, hybrid (retrieval.mode)")
    add_k_option(p, help=k_help)
    add_model_option(p, help=MODEL_HELP)
    add_output_options(p)


def track(args: argparse.Namespace, out: Output, cfg: RagbenchConfig, run_name: str, metrics: dict[str, Any],
           params: dict[str, Any], data: str, artifacts: list[Any],
           modes: tuple[str, ...] = ()) -> tuple[str | None, int]:
    """Log the run with the signatures of the stages it built from ``cfg`` (its embedder, a retriever per mode in
    ``modes``); returns (run id, exit status)."""
    from ..provenance import data_hash
    from ..retrieval.factory import stage_signatures
    from ..tracking import record_run

    rec = record_run(EXPERIMENT, run_name, cfg, metrics, params={"eval": params}, artifacts=artifacts,
                     data_hash=data_hash(data), enabled=not args.no_mlflow, tags={"dataset": run_name.split("-")[0]},
                     stages=stage_signatures(cfg, modes, embedder=True))
    out.text(f"mlflow run: {rec.run_id or rec.skipped or 'not logged'}")
    if rec.error:
        out.error(rec.error)
    return rec.run_id, 1 if rec.error else 0
