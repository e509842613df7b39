"""EE-RAG's prompts as versioned templates in the store's prompt registry (:mod:`ragbench.llm.prompts`).

``eerag.elect`` is the elector's two-mode system prompt, ``eerag.digest`` the Layer-5 distillation instruction
(``{n}`` = word budget), ``eerag.summary`` the LLM summariser's instruction (``{n}`` = token budget). Config names
one version of each (``eerag.elect_prompt``, ``eerag.digest_prompt``); every turn records the ids it used, and a
changed text must get a new version (the registry refuses a second body under the same id).
"""
from __future__ import annotations

from typing import Any

from ..errors import ConfigError
from ..llm.prompts import PromptRegistry, PromptTemplate
from .digest import DISTIL_PROMPT
from .electors import ELECTOR_SYSTEM_PROMPT
from .summarize import SUMMARY_PROMPT

#: v2 spells the protocol out for small instruction models (Qwen2.5-1.5B): one line, ids only, and when not to ask.
ELECT_V2 = """You answer questions with the help of a knowledge base, in one of two modes.
Candidate evaluation: a system message starting with "--- Potentially Relevant Context ---" lists entries as \
[ID:<number>] <summary>. If an entry is about the topic of the user's question, reply with one line: RETRIEVE \
followed by the numbers of the entries that match (for example: RETRIEVE 2). Nothing else in that reply. If no \
entry is about the question (small talk, arithmetic, general knowledge), answer the question directly and briefly \
without mentioning the entries.
Answer generation: when a system message starts with "--- Retrieved Context" or "--- Background Knowledge", answer \
the user's question from it, briefly, without mentioning ids or the retrieval."""

BUILTIN: dict[str, str] = {
    "eerag.elect@v1": ELECTOR_SYSTEM_PROMPT,
    "eerag.elect@v2": ELECT_V2,
    "eerag.digest@v1": DISTIL_PROMPT,
    "eerag.summary@v1": SUMMARY_PROMPT,
}


def builtin_prompt(prompt_id: str) -> PromptTemplate:
    """A built-in prompt by id, without a store (its hash is that of the text)."""
    from ..llm.prompts import prompt_hash

    if prompt_id not in BUILTIN:
        raise ConfigError(f"unknown EE-RAG prompt {prompt_id!r}; built in: {sorted(BUILTIN)}. Fix: pick one, or "
                          "register your own version in the store and name it.")
    name, version = prompt_id.split("@", 1)
    return PromptTemplate(name, version, BUILTIN[prompt_id], prompt_hash(BUILTIN[prompt_id]))


def resolve_prompt(store: Any, prompt_id: str) -> PromptTemplate:
    """``name@version`` from the store's registry; built-in versions are registered there first (idempotent), so
    the store always holds the exact text a turn sent. Without a store, the built-in text."""
    if "@" not in prompt_id:
        raise ConfigError(f"expected a prompt id name@version, found {prompt_id!r}. Fix: e.g. eerag.elect@v1.")
    if store is None:
        return builtin_prompt(prompt_id)
    registry = PromptRegistry(store)
    name, version = prompt_id.split("@", 1)
    if prompt_id in BUILTIN:
        return registry.ensure(name, version, BUILTIN[prompt_id], slots=())
    found = registry.get(name, version)
    if found is None:
        raise ConfigError(f"prompt {prompt_id} is neither built in ({sorted(BUILTIN)}) nor registered in the store "
                          f"(versions of {name}: {registry.versions(name)}). Fix: register it or pick another.")
    return found
