"""``make_chat_model``: a chat model by name (``extractive`` | ``openai`` | ``llama`` | ``llama:<name>``) or from an
AnswerConfig."""
from __future__ import annotations

from dataclasses import replace
from typing import Any

from ..config import AnswerConfig, RagbenchConfig
from ..errors import ConfigError
from .base import ChatModel

CHAT_MODELS = ("extractive", "openai", "llama", "llama:<name>")


def make_chat_model(name_or_cfg: "str | AnswerConfig" = "extractive", embedder: Any = None, **kw: Any) -> ChatModel:
    """Build a chat model. With an :class:`AnswerConfig` the name is ``cfg.chat_model`` and the model's knobs
    come from the config (keyword arguments still win). ``embedder`` is used by the extractive model only
    (for semantic sentence scoring; with a config only when ``answer.extractive_semantic`` is on)."""
    if isinstance(name_or_cfg, AnswerConfig):
        cfg = name_or_cfg
        name = cfg.chat_model.strip().lower()
        defaults: dict[str, Any] = {
            "extractive": {"max_sentences": cfg.extractive_max_sentences,
                           "sentence_ratio": cfg.extractive_sentence_ratio,
                           "same_passage_sentences": cfg.extractive_same_passage_sentences,
                           "same_passage_ratio": cfg.extractive_same_passage_ratio,
                           "min_relevance": cfg.extractive_min_relevance,
                           "title_definitions": cfg.extractive_title_definitions,
                           "synonym_zipf": cfg.extractive_synonym_zipf, "kinship": cfg.kinship,
                           "join_wrapped": cfg.extractive_join_wrapped,
                           "embedder": embedder if cfg.extractive_semantic else None},
            "openai": {"base_url": cfg.llm_base_url, "model": cfg.llm_model, "timeout": cfg.llm_timeout,
                       "max_retries": cfg.llm_max_retries},
        }.get(name, {})
        kw = {**defaults, **kw}
    elif isinstance(name_or_cfg, str):
        name = name_or_cfg.strip().lower()
        if name == "extractive" and embedder is not None:
            kw = {"embedder": embedder, **kw}
    else:
        raise ConfigError(f"expected a chat model name or an AnswerConfig, found {type(name_or_cfg).__name__}.")
    if name.startswith("llama:"):
        spec = name_or_cfg.chat_model if isinstance(name_or_cfg, AnswerConfig) else name_or_cfg
        name, kw = "llama", {"spec": spec.strip(), **kw}
    try:
        if name == "extractive":
            from .extractive import ExtractiveChatModel

            return ExtractiveChatModel(**kw)
        if name == "openai":
            from .openai import OpenAIChatModel

            return OpenAIChatModel(**kw)
        if name == "llama":
            from .llama import LlamaCppChatModel
            from .local import resolve_local_model

            # "llama" = the best installed local model, "llama:<name>" one by name; a missing one fails here,
            # naming the command that installs it.
            spec = kw.pop("spec", "llama")
            if kw.get("model_path") is None:
                kw["model_path"] = resolve_local_model(spec)
            return LlamaCppChatModel(**kw)
    except TypeError as exc:  # an unknown keyword for that model
        raise ConfigError(f"bad arguments for chat model {name!r}: {exc}. Fix: check the parameter names.") from None
    raise _unknown(name)


def _unknown(name: str) -> ConfigError:
    return ConfigError(f"unknown chat model {name!r}; expected one of {list(CHAT_MODELS)}. "
                       "Fix: pick one of those (answer.chat_model / --model).")


def check_chat_model(name: str) -> None:
    """Raise what :func:`make_chat_model` would for ``name`` without building the model: an unknown name is a
    ``ConfigError`` and a local model that is not installed a ``ModelError`` naming the install command, so a long
    run can fail before its first step."""
    key = name.strip().lower()
    if key in ("extractive", "openai"):
        return
    if key == "llama" or key.startswith("llama:"):
        from .local import resolve_local_model

        resolve_local_model(name.strip())
        return
    raise _unknown(key)


def chat_model_for(cfg: RagbenchConfig, name: str | None = None, embedder: Any = None) -> ChatModel:
    """The chat model a whole config describes: ``name`` (a command's ``--model``), else ``llm.model``, else
    ``answer.chat_model``; ``llm.temperature`` and ``llm.max_tokens`` reach the openai and llama models (the
    extractive model is deterministic and has neither), and the config's ``seed`` seeds llama's sampling."""
    chosen = (name or cfg.llm.model or cfg.answer.chat_model).strip()
    kind = chosen.lower().partition(":")[0]
    sampling = {"temperature": cfg.llm.temperature, "max_tokens": cfg.llm.max_tokens}
    if kind in ("extractive", "openai"):
        return make_chat_model(replace(cfg.answer, chat_model=chosen), embedder=embedder,
                               **(sampling if kind == "openai" else {}))
    return make_chat_model(chosen, embedder=embedder, seed=cfg.seed, **sampling)  # llama: seeded sampling


def make_token_scorer(name: str) -> ChatModel | None:
    """The local model ``answer.rerank`` names, loaded to score tokens (the logits of every position kept, n_ctx
    1024: a passage and a question); ``""`` → ``None`` (off). Only llama.cpp models expose token scores."""
    name = (name or "").strip()
    if not name:
        return None
    if name.lower().partition(":")[0] != "llama":
        raise ConfigError(f"answer.rerank={name!r}: only a local llama model scores tokens. Fix: set it to 'llama' "
                          "(make install-llm) or to '' (off).")
    return make_chat_model(name, logits_all=True, n_ctx=1024)
