"""Break a research question into 3–5 sub-topics.

Each :class:`SubTopic` has a title and the words a sentence must contain to count as evidence for it: at least one
``subject`` word (when there are any) and a share ≥ ``topic_match`` of its ``terms``.

* **Deterministic** (default): a comparison ("X compare to Y", "X vs Y") gets the seed's five aspects
  (fundamentals of each side, performance, developer experience, adoption); any other question the source
  module's four (core concepts, implementation details, alternatives and comparisons, recent developments).
* **LLM**: any :class:`~ragbench.llm.base.ChatModel` lists sub-topics; the parser accepts numbered or bulleted
  lines and JSON arrays, and falls back to the deterministic split when it finds fewer than three.
"""
from __future__ import annotations

import json
import logging
import re
from dataclasses import dataclass, field

from ..errors import ModelError, NetworkError
from ..llm.base import ChatModel
from ..schema import Message
from ..text import STOP_WORDS, tokenize

log = logging.getLogger("ragbench.dal.decompose")

#: Words that carry no subject in a research question.
FILLER = frozenset("""best practices practice does do can should use using used work works good better vs versus
compare compared comparison against like about between over into most more much many way ways why""".split())
_COMPARE = re.compile(r"^(?:how\s+(?:does|do|did|is|are)\s+)?(?P<x>.+?)\s+(?:compare[sd]?\s+(?:to|with|against)|"
                      r"vs\.?|versus)\s+(?P<y>.+?)(?:\s+(?:for|in|on)\s+(?P<ctx>.+?))?\s*\??$", re.I)
_LIST_ITEM = re.compile(r"^\s*(?:[-*•]|\(?\d+[.):]|[a-e][.)])\s*")


@dataclass(frozen=True)
class SubTopic:
    title: str
    terms: tuple[str, ...]
    subject: tuple[str, ...] = ()

    def all_terms(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(self.subject + self.terms))


@dataclass(frozen=True)
class Decomposition:
    sub_topics: tuple[SubTopic, ...]
    method: str  # deterministic | llm | llm-fallback
    notes: tuple[str, ...] = field(default=())


def content_words(text: str) -> list[str]:
    return [t for t in dict.fromkeys(tokenize(text, stopwords=True))
            if t not in FILLER and not t.isdigit() and len(t) > 1]


def _phrase(text: str) -> str:
    words = [w for w in re.findall(r"[\w.+#-]+", text) if w.lower() not in STOP_WORDS | FILLER]
    return " ".join(words[:3])


def deterministic(question: str) -> Decomposition:
    q = question.strip()
    m = _COMPARE.match(q)
    if m and content_words(m.group("x")) and content_words(m.group("y")):
        x_name, y_name = _phrase(m.group("x")), _phrase(m.group("y"))
        x, y = tuple(content_words(x_name)[:2]), tuple(content_words(y_name)[:2])
        ctx_words = content_words(m.group("ctx") or "")
        ctx = ctx_words[0] if ctx_words else "key"
        topics: tuple[SubTopic, ...] = (
            SubTopic(f"{x_name} fundamentals and {ctx}-specific features", ("fundamentals", "features"), x),
            SubTopic(f"{y_name} fundamentals and {ctx} optimization patterns", ("fundamentals", "optimization"), y),
            SubTopic("Performance comparison (latency, bandwidth, caching)",
                     ("latency", "bandwidth", "caching", "performance"), x + y),
            SubTopic("Developer experience and tooling comparison", ("developer", "tooling"), x + y),
            SubTopic("Real-world adoption and case studies", ("adoption", "production"), x + y),
        )
        return Decomposition(topics, "deterministic", (f"comparison of {x_name!r} and {y_name!r}",))
    subject = tuple(content_words(q)[:3])
    name = " ".join(subject) or q
    topics = (
        SubTopic(f"{name} — core concepts", ("concepts", "definition"), subject),
        SubTopic(f"{name} — implementation details", ("implementation", "practice"), subject),
        SubTopic(f"{name} — alternatives and comparisons", ("alternatives", "compared"), subject),
        SubTopic(f"{name} — recent developments", ("recent", "latest"), subject),
    )
    return Decomposition(topics, "deterministic", (f"general question; subject words {list(subject)}",))


def parse_topic_list(text: str) -> list[str]:
    """Sub-topic titles from a model reply: a JSON array (possibly inside prose or a code fence) or one item per
    line with optional numbering/bullets. Headings ending in ':' and duplicates are dropped."""
    match = re.search(r"\[.*\]", text, re.S)
    if match:
        try:
            data = json.loads(match.group(0))
            items = [str(x.get("topic", x.get("title", "")) if isinstance(x, dict) else x) for x in data]
            cleaned = [i.strip() for i in items if isinstance(i, str) and i.strip()]
            if cleaned:
                return list(dict.fromkeys(cleaned))
        except ValueError:
            pass
    out: list[str] = []
    for line in text.splitlines():
        line = line.strip().strip("`")
        if not line or line.endswith(":") or not _LIST_ITEM.match(line):
            continue
        item = _LIST_ITEM.sub("", line).strip().strip('"*').strip()
        if 3 <= len(item) <= 200 and item not in out:
            out.append(item)
    return out


PROMPT = ("Break the research question below into 3 to 5 distinct sub-topics that together cover it. "
          "Answer with a numbered list, one short sub-topic per line, nothing else.\n\nQuestion: {question}")


def decompose(question: str, chat_model: ChatModel | None = None) -> Decomposition:
    """Sub-topics of ``question``; with a chat model, its list (3–5 items) or the deterministic fallback."""
    base = deterministic(question)
    if chat_model is None:
        return base
    try:
        reply = chat_model.complete([Message("user", PROMPT.format(question=question))]).text
    except (ModelError, NetworkError) as exc:
        log.warning("decomposition model failed (%s); using the deterministic split", exc)
        return Decomposition(base.sub_topics, "llm-fallback", (f"model failed: {exc}",) + base.notes)
    titles = parse_topic_list(reply)
    if len(titles) < 3:
        return Decomposition(base.sub_topics, "llm-fallback",
                             (f"model listed {len(titles)} sub-topic(s), expected 3–5",) + base.notes)
    q_subject = content_words(question)[:3]
    topics = []
    for title in titles[:5]:
        words = content_words(title)
        subject = tuple(w for w in q_subject if w in words) or tuple(q_subject)
        terms = tuple(w for w in words if w not in subject)[:4] or tuple(words[:2])
        topics.append(SubTopic(title, terms, subject))
    notes = (f"model {getattr(chat_model, 'model_id', '?')} listed {len(titles)} sub-topic(s)",)
    return Decomposition(tuple(topics), "llm", notes)
