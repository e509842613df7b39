"""The grounded-generation prompt (seed §6) and an answer through any chat model.

Sources are grouped by tier (1, 2, then 3); each shows its URL without the scheme, its title and its key facts;
tier-3 facts are labelled "(lower confidence)". The instruction asks the model to use only those facts and to
prefix any claim it cannot ground with ``Uncertain: ``. Facts the prompt-injection quarantine flags are left out
(:func:`kept_facts`, shared with the research answers), and so is a source left without facts.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from ..errors import DataError
from ..llm.base import ChatModel, Completion
from ..llm.quarantine import PLACEHOLDER, redact_text
from ..schema import Message
from .research import ResearchResult, Source
from .tiers import SourceTier

INSTRUCTION = ('INSTRUCTION: Answer the user\'s question using ONLY the facts above.\n'
               'If a claim cannot be grounded in these sources, prefix with "Uncertain: "')
SYSTEM = "You are a careful research assistant. You answer only from the grounded context you are given."
UNCERTAIN = "Uncertain: "


def display_url(url: str) -> str:
    """``https://www.arxiv.org/abs/1`` → ``www.arxiv.org/abs/1``."""
    return url.split("://", 1)[-1].rstrip("/")


def source_block(source: Source, facts: Sequence[str]) -> str:
    label = "Key facts (lower confidence):" if source.tier == SourceTier.TIER_3 else "Key facts:"
    lines = [f"[Tier {int(source.tier)}] Source: {display_url(source.url)}", f'Title: "{source.page.title}"', label]
    return "\n".join(lines + [f"- {f}" for f in facts])


def kept_facts(facts: Sequence[str], max_facts: int = 5) -> list[str]:
    """The first ``max_facts`` facts left after the quarantine: flagged text removed, facts left empty dropped (a
    flagged fact does not take a clean one's place)."""
    kept = (f for f in (redact_text(f) for f in facts) if f.strip() and f != PLACEHOLDER)
    return [f for _, f in zip(range(max_facts), kept)]


def select_sources(result: ResearchResult, max_sources: int = 12) -> list[Source]:
    """Up to ``max_sources`` sources with facts, taken round-robin over the sub-topics (each turn the most
    credible unused source of that sub-topic, discovery order on ties) so every sub-topic is represented; then
    ordered by tier, discovery order within a tier."""
    facts = result.facts_by_source()
    order = {s.url: i for i, s in enumerate(result.sources)}
    by_url = {s.url: s for s in result.sources}
    queues = [sorted((u for u in st.source_urls if u in facts), key=lambda u: (int(by_url[u].tier), order[u]))
              for st in result.report.sub_topics]
    chosen: list[str] = []
    while len(chosen) < max_sources and any(queues):
        for q in queues:
            while q and q[0] in chosen:
                q.pop(0)
            if q and len(chosen) < max_sources:
                chosen.append(q.pop(0))
    return sorted((by_url[u] for u in chosen), key=lambda s: (int(s.tier), order[s.url]))


def grounded_prompt(result: ResearchResult, max_sources: int = 12, max_facts: int = 5) -> str:
    """The seed's prompt: TASK, GROUNDED CONTEXT grouped by tier, INSTRUCTION (sources from
    :func:`select_sources`)."""
    facts = result.facts_by_source()
    chosen = select_sources(result, max_sources)
    if not chosen:
        raise DataError(f"no source stated facts about {result.question!r}; nothing to ground an answer on. "
                        "Fix: research with more passes or another search backend.")
    blocks = [source_block(s, kept) for s in chosen if (kept := kept_facts(facts[s.url], max_facts))]
    if not blocks:
        raise DataError(f"every fact stated about {result.question!r} was quarantined as text addressed to an AI; "
                        "nothing to ground an answer on. Fix: research with more passes or other sources.")
    return (f"TASK: {result.question}\n\nGROUNDED CONTEXT (use ONLY these sources):\n\n" + "\n\n".join(blocks)
            + "\n\n" + INSTRUCTION)


@dataclass(frozen=True)
class GroundedAnswer:
    text: str
    uncertain: tuple[str, ...]
    completion: Completion
    prompt: str


def answer(result: ResearchResult, chat_model: ChatModel, prompt: str | None = None) -> GroundedAnswer:
    """Ask ``chat_model`` with the grounded prompt; lines starting with ``Uncertain: `` are collected."""
    prompt = prompt or grounded_prompt(result)
    completion = chat_model.complete([Message("system", SYSTEM), Message("user", prompt)])
    uncertain = tuple(line.strip() for line in completion.text.splitlines() if line.strip().startswith(UNCERTAIN))
    return GroundedAnswer(completion.text, uncertain, completion, prompt)
