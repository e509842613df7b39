"""EE-RAG with DCS as one conversational system (the DCS-EE-RAG source's chat agent).

A :class:`Conversation` lives in a knowledge store. Each user message goes

* L1: candidates from the store's documents *and* this conversation's memory (every earlier turn, stored with a
  summary), re-ranked by DCS when ``eerag.dcs`` is on (boost, or pre-filter with ``eerag.dcs_drop``), shown as the
  ``[ID:n] <summary>`` header;
* L2: the configured elector (``eerag.elector``: ``policy`` or ``llm``) answers ``RETRIEVE <ids>``; only shown ids
  are kept; an empty, garbage or unshown-id reply is a recorded failed election (no expansion, the conversation
  goes on);
* L3/L4: elected chunks injected once as a system message; history keeps clean (user, assistant) pairs only, the
  last ``eerag.history_messages`` of them, or those DCS selects;
* L5: ``eerag.silent`` digests the elected chunks (``eerag.digest``: ``truncate`` or ``llm``; ``llm`` without a chat
  model is a :class:`ConfigError`, never a silent fallback);

and the reply carries ``[RAG:xxxxxxxx]`` tags. Both turns are stored as memory, DCS observes them and its state is
saved, and the two-phase audit goes to the store: re-opening the conversation in a new process restores memory,
history and DCS state.

This module is the one place where EE-RAG and DCS meet; ``ragbench.dcs`` is imported only when ``eerag.dcs`` is on.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from typing import Any

from ..config import EeragConfig, RagbenchConfig, to_dict
from ..errors import ConfigError
from ..llm.base import ChatModel, Completion
from ..retrieval.base import Embedder
from ..schema import Chunk, Message, Principal
from .audit import AuditLog
from .election import HEADER_OPEN
from .electors import PolicyElector, _mode
from .memory import ConversationMemory, MemoryRetriever, Turn
from .pipeline import EeragPipeline, EeragResult
from .prompts import resolve_prompt
from .summarize import ExtractiveSummarizer, LlmSummarizer

ELECTORS = ("policy", "llm")


@dataclass(frozen=True)
class TurnResult:
    """What one :meth:`Conversation.send` produced (``to_dict()`` is JSON-ready)."""

    conversation_id: str
    request_id: str
    reply: str                    # shown to the user: the answer + " [RAG:xxxxxxxx]" per elected chunk
    answer: str                   # the answer alone (the stored assistant turn)
    elected_ids: list[str]        # chunk ids injected (memory chunks are "memory:<conversation>:<seq>")
    tags: list[str]               # the 8-hex audit tags, in elected order
    surfaced_ids: list[str]       # chunk ids shown in the header, in order
    election_status: str          # elected | declined | failed
    failure: str                  # why the election failed ("" otherwise)
    context_tokens: int           # header + injected context
    model_calls: int
    model_id: str
    prompts: dict[str, str] = field(default_factory=dict)
    elected_docs: list[str] = field(default_factory=list)  # document ids of elected_ids (memory: "memory:…")

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


class _PolicyThenModel(ChatModel):
    """The policy elector decides (header calls); the chat model writes every answer, including a direct one when
    the policy elects nothing — so a real model answers while the election stays deterministic."""

    def __init__(self, policy: PolicyElector, model: ChatModel) -> None:
        self.policy = policy
        self.model = model
        self.model_id = f"{policy.model_id}+{model.model_id}"

    def complete(self, messages: Sequence[Message]) -> Completion:
        mode, _ = _mode(messages)
        if mode == "elect":
            vote = self.policy.complete(messages)
            if vote.text.startswith("RETRIEVE"):
                return vote
            messages = [m for m in messages if not (m.role == "system" and m.content.startswith(HEADER_OPEN))]
        return self.model.complete(messages)


def turn_model(e: EeragConfig, chat_model: ChatModel | None, embedder: Embedder | None) -> ChatModel:
    """The model a turn talks to: the chat model (``llm`` elector), the policy elector alone (offline), or the
    policy electing and the chat model answering."""
    if e.elector == "llm":
        if chat_model is None:
            raise ConfigError("eerag.elector=llm needs a chat model and none was given. Fix: pass --model llama "
                              "(or openai), or use --elector policy.")
        return chat_model
    policy = PolicyElector(embedder, e.elect_threshold, e.margin, e.max_expand, e.rank_weight)
    return _PolicyThenModel(policy, chat_model) if chat_model is not None else policy


def _summarizer(cfg: RagbenchConfig, chat_model: ChatModel | None, store: Any) -> tuple[Callable[[str], str], str]:
    e = cfg.eerag
    if e.summarizer == "extractive":
        return ExtractiveSummarizer(e.summary_tokens).summarize_text, "extractive"
    if e.summarizer == "llm":
        if chat_model is None:
            raise ConfigError("eerag.summarizer=llm needs a chat model and none was given. Fix: pass --model "
                              "(e.g. llama) or set eerag.summarizer=extractive.")
        prompt = resolve_prompt(store, "eerag.summary@v1")
        llm = LlmSummarizer(chat_model, e.summary_tokens)
        return (lambda text: llm(Chunk("turn", "turn", 0, 0, len(text), text))), prompt.id
    raise ConfigError(f"eerag.summarizer must be extractive or llm, found {e.summarizer!r}.")


class Conversation:
    """One persisted EE-RAG + DCS conversation. Build with :meth:`open`."""

    def __init__(self, store: Any, conversation_id: str, config: RagbenchConfig, chat_model: ChatModel | None,
                 embedder: Embedder | None, digester: ChatModel | None = None, principal: Principal | None = None,
                 clock: Callable[[], datetime] | None = None, retrieval_mode: str | None = None,
                 persist_dcs: bool = True) -> None:
        e = config.eerag
        if e.elector not in ELECTORS:
            raise ConfigError(f"eerag.elector must be one of {list(ELECTORS)}, found {e.elector!r}.")
        if e.elector == "llm" and chat_model is None:
            raise ConfigError("eerag.elector=llm needs a chat model and none was given. Fix: pass --model llama "
                              "(or openai), or use --elector policy.")
        self.store = store
        self.conversation_id = conversation_id
        self.config = config
        self.chat_model = chat_model
        self.embedder = embedder
        self.clock = clock or (lambda: datetime.now(UTC))
        self.persist_dcs = persist_dcs
        summarize, summary_id = _summarizer(config, chat_model, store)
        self.memory = ConversationMemory(store, conversation_id, embedder, summarize)
        self.memory.create(to_dict(config))
        self.prompts = {"summary": summary_id}
        system_prompt = None
        model = turn_model(e, chat_model, embedder)
        if e.elector == "llm":
            elect = resolve_prompt(store, e.elect_prompt)
            self.prompts["elect"] = elect.id
            system_prompt = elect.body
        else:
            self.prompts["elect"] = model.model_id
        digest_prompt = None
        if e.silent and e.digest == "llm":
            digester = digester or chat_model
            if digester is not None:
                d = resolve_prompt(store, e.digest_prompt)
                self.prompts["digest"] = d.id
                digest_prompt = d.body
        self.model = model
        self.selector = self._dcs() if e.dcs else None
        self.retriever = MemoryRetriever(store, self.memory if e.memory else None,
                                         retrieval_mode or config.retrieval.mode, config, embedder)
        self.pipeline = EeragPipeline(store, self.retriever, model, e, embedder=embedder, selector=self.selector,
                                      digester=digester, principal=principal, system_prompt=system_prompt,
                                      digest_prompt=digest_prompt)
        self.pipeline.session.history_filter = self._history_filter
        self._sync_history()

    @classmethod
    def open(cls, store: Any, conversation_id: str, config: RagbenchConfig | None = None,
             chat_model: ChatModel | None = None, embedder: Embedder | None = None, **kw: Any) -> Conversation:
        """Open (or start) ``conversation_id`` in ``store``: stored turns, history and DCS state are restored.
        ``embedder`` defaults to the configured one; ``chat_model`` None means the offline policy elector answers
        extractively."""
        config = config or RagbenchConfig()
        if embedder is None:
            from ..retrieval.embedding import make_embedder

            embedder = make_embedder(config.embedding)
        return cls(store, conversation_id, config, chat_model, embedder, **kw)

    # -- DCS -----------------------------------------------------------------------------------------------
    def _dcs(self) -> Any:
        from ..dcs import DcsContextSelector, load_conversation, make_classifier
        from ..dcs.assembler import DcsContextAssembler
        from ..dcs.persistence import conversation_ids

        cfg = self.config.dcs
        classifier = make_classifier(cfg.profile)
        if self.conversation_id in conversation_ids(self.store):
            assembler = load_conversation(self.store, self.conversation_id, clock=self.clock, config=cfg)
        else:
            assembler = DcsContextAssembler(cfg, clock=self.clock, escalation=classifier.is_escalation)
        assembler.escalation = classifier.is_escalation
        return DcsContextSelector(assembler, classifier, drop_irrelevant=self.config.eerag.dcs_drop)

    def save_dcs(self) -> None:
        if self.selector is not None:
            from ..dcs import save_conversation

            save_conversation(self.store, self.selector.assembler, self.conversation_id)

    # -- history -------------------------------------------------------------------------------------------
    def history(self) -> list[Message]:
        """The clean persistent history: user and assistant turns (memory ids and times in ``meta``)."""
        return [Message(t.role, t.content, {"id": t.doc_id, "timestamp": t.created_at, **t.meta})
                for t in self.memory.turns() if t.role in ("user", "assistant")]

    def _sync_history(self) -> None:
        self.pipeline.session.history = self.history()

    def _history_filter(self, message: str, history: Sequence[Message]) -> list[Message]:
        n = self.config.eerag.history_messages
        if n <= 0:
            return []
        chosen = self.selector.select(message, history) if self.selector is not None else list(history)
        return list(chosen)[-n:]

    # -- turns ---------------------------------------------------------------------------------------------
    def remember(self, role: str, content: str, speaker: str | None = None, timestamp: datetime | None = None,
                 retrieval_text: str | None = None, summary: str | None = None,
                 meta: dict[str, Any] | None = None, save: bool = True) -> Turn:
        """Store a turn without a model call (replays, imported history); DCS observes it."""
        ts = timestamp or self.clock()
        turn = self.memory.add(role, content, speaker, meta, retrieval_text=retrieval_text, summary=summary,
                               timestamp=ts)
        if self.selector is not None:
            self.selector.assembler.observe(turn.doc_id, self.selector.classifier.classify(content), content, ts)
            if save and self.persist_dcs:
                self.save_dcs()
        return turn

    def send(self, text: str, remember: bool = True) -> TurnResult:
        """One user message through L1–L5; both turns are stored (unless ``remember=False``, e.g. an evaluation
        question that must not become memory)."""
        seq = len(self.memory)
        request_id = f"{self.conversation_id}:{seq}"
        res: EeragResult = self.pipeline.run(text, request_id=request_id)
        answer = res.final_response
        for h in res.elected_hashes:
            answer = answer.replace(f" [RAG:{h}]", "")
        result = TurnResult(self.conversation_id, request_id, res.final_response, answer, list(res.elected),
                            list(res.elected_hashes), list(res.surfaced), res.election_status, res.failure,
                            res.context_tokens, res.model_calls, self.model.model_id, dict(self.prompts),
                            list(res.elected_docs))
        self.last_result = res
        if remember:
            self.remember("user", text, meta={"request_id": request_id}, save=False)
            meta = {k: v for k, v in result.to_dict().items()
                    if k in ("request_id", "elected_ids", "elected_docs", "tags", "election_status", "failure",
                             "context_tokens", "model_calls", "model_id", "prompts")}
            self.remember("assistant", answer or "(no reply)", meta={"rag_tags": result.tags, **meta}, save=True)
        self._sync_history()
        return result

    # -- audit ---------------------------------------------------------------------------------------------
    def audit(self) -> list[dict[str, Any]]:
        """One row per answered user message: surfaced and elected entries (from the two-phase audit), status."""
        return conversation_audit(self.store, self.conversation_id)


def conversation_audit(store: Any, conversation_id: str) -> list[dict[str, Any]]:
    """The audit of a stored conversation (usable without opening it, e.g. by ``ragbench eerag audit``)."""
    log = AuditLog(store)
    memory = ConversationMemory(store, conversation_id, None, lambda s: s)
    if not memory.exists():
        from ..errors import DataError

        raise DataError(f"no EE-RAG conversation {conversation_id!r} in {store.path}; stored: "
                        f"{conversation_list(store)}. Fix: check --conversation.")
    rows = []
    turns = memory.turns()
    for i, t in enumerate(turns):
        if t.role != "assistant" or "request_id" not in t.meta:
            continue
        rid = t.meta["request_id"]
        a = log.get(rid) or {}
        question = turns[i - 1].content if i > 0 and turns[i - 1].role == "user" else ""
        rows.append({"request_id": rid, "question": question, "answer": t.content,
                     "election_status": t.meta.get("election_status", ""), "failure": t.meta.get("failure", ""),
                     "surfaced": a.get("surfaced") or [], "elected": a.get("elected") or [],
                     "rejected": a.get("rejected") or [], "tags": t.meta.get("rag_tags", []),
                     "model_id": t.meta.get("model_id", ""), "prompts": t.meta.get("prompts", {}),
                     "context_tokens": t.meta.get("context_tokens"), "model_calls": t.meta.get("model_calls"),
                     "surfaced_at": a.get("surfaced_at"), "elected_at": a.get("elected_at")})
    return rows


def conversation_list(store: Any) -> list[str]:
    from .memory import DDL

    store.ensure_schema("eerag.memory", DDL, 1)
    return [r[0] for r in store.query("SELECT conversation_id FROM eerag_conversations ORDER BY created_at")]


__all__ = ["Conversation", "TurnResult", "conversation_audit", "conversation_list"]
