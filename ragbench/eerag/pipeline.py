"""The five-layer Elective Ephemeral RAG pipeline.

1. summary-first: the top-k candidates are shown as ``[ID:<n>] <summary>`` lines (the header);
2. model-elected expansion: the reply's ``RETRIEVE <ids>`` is parsed and only shown ids are kept;
3. transient injection: elected chunks are sent once as background to a second call;
4. conversation isolation: history keeps only the clean (question, answer) pair;
5. silent digestion (optional): chunks are digested before injection.

Every elected chunk is tagged ``[RAG:xxxxxxxx]`` (first 8 hex of the SHA-256 of its embedding's float32 LE bytes).
The tags are appended to the returned answer (what the user sees, as in the source) and stored in the assistant
message's metadata (``meta["rag_tags"]``) rather than its content: the audit trail stays on the persistent turn, as
the paper intends, while later prompts never carry hash tokens the model could imitate.
"""
from __future__ import annotations

import time
import uuid
from dataclasses import dataclass, field, replace
from typing import Any, Sequence

import numpy as np

from ..config import EeragConfig
from ..errors import ConfigError, ModelError
from ..llm.base import ChatModel, Completion
from ..llm.quarantine import Quarantine
from ..logs import log_decision
from ..retrieval.base import Embedder, Retriever
from ..retrieval.embedding import embedding_hash
from ..schema import Chunk, Hit, Principal
from ..text import count_tokens
from .audit import AuditLog
from .digest import full_context, llm_digest, truncation_digest
from .election import HEADERS, build_header, election_failure, filter_elected, make_candidates, parse_retrieve_ids
from .hooks import ContextSelector
from .memory import MEMORY_PREFIX
from .session import TransientSession
from .summarize import ExtractiveSummarizer


@dataclass(frozen=True)
class EeragResult:
    request_id: str
    final_response: str
    first_response: str
    candidate_header: str
    surfaced: list[str]          # chunk ids in header order
    surfaced_docs: list[str]
    elected: list[str]           # chunk ids elected (after the security filter)
    elected_docs: list[str]
    elected_hashes: list[str]
    rejected_ids: list[int]
    context_tokens: int          # header + transient context tokens
    prompt_tokens: int
    completion_tokens: int
    model_calls: int
    meta: dict[str, Any] = field(default_factory=dict)
    #: "elected" (≥ 1 shown id kept), "declined" (the model answered without asking) or "failed" (empty reply,
    #: only unshown ids, RETRIEVE without ids, or a model error: no expansion, the conversation goes on).
    election_status: str = "declined"
    failure: str = ""
    transient_context: str = ""  # the injected Retrieved/Background block ("" without retrieval)

    @property
    def retrieval_occurred(self) -> bool:
        return bool(self.elected)


#: What the user sees when the election failed (the reply was empty, garbage or named unshown ids).
FAILED_REPLY = "(The model's reply could not be used; no context was retrieved. Please ask again or rephrase.)"
DIGESTS = ("truncate", "llm")


def check_digest(cfg: EeragConfig, digester: ChatModel | None) -> None:
    """``eerag.digest`` must name a digester that exists: never a silent fallback to truncation."""
    if cfg.header not in HEADERS:
        raise ConfigError(f"eerag.header must be one of {list(HEADERS)}, found {cfg.header!r}.")
    if cfg.digest not in DIGESTS:
        raise ConfigError(f"eerag.digest must be one of {list(DIGESTS)}, found {cfg.digest!r}.")
    if cfg.silent and cfg.digest == "llm" and digester is None:
        raise ConfigError("eerag.digest=llm needs a chat model to digest with, and none was given. Fix: pass "
                          "--model (e.g. llama) or set eerag.digest=truncate.")


class EeragPipeline:
    """Runs turns of one conversation. ``session`` holds the persistent history."""

    def __init__(self, store: Any, retriever: Retriever, model: ChatModel, cfg: EeragConfig = EeragConfig(),  # noqa: B008 - frozen, shared safely
                 embedder: Embedder | None = None, selector: ContextSelector | None = None,
                 digester: ChatModel | None = None, principal: Principal | None = None,
                 system_prompt: str | None = None, audit: bool = True, digest_prompt: str | None = None) -> None:
        self.store = store
        self.retriever = retriever
        self.model = model
        self.cfg = cfg
        self.embedder = embedder
        self.selector = selector
        self.digester = digester
        self.principal = principal
        self.digest_prompt = digest_prompt
        self.session = TransientSession(model, system_prompt,
                                        history_filter=selector.select if selector is not None else None)
        self.audit = AuditLog(store) if audit and store is not None else None
        self.quarantine = (Quarantine(store, exclude_prefix=MEMORY_PREFIX) if cfg.quarantine and store is not None
                           else None)
        check_digest(cfg, digester)

    # -- helpers -------------------------------------------------------------------------------------------
    def _summaries(self, hits: Sequence[Hit], redacted: set[str]) -> dict[str, str]:
        """Stored summaries; a quarantined chunk's is made again from its redacted text, whatever made the stored
        one (an LLM summariser may have read, and followed, the injected text)."""
        out = {}
        for h in hits:
            if h.chunk_id in redacted:
                out[h.chunk_id] = self._summary_of(h.text)
                continue
            c = self.store.get_chunk(h.chunk_id) if self.store is not None else None
            out[h.chunk_id] = c.summary if c is not None else ""
        return out

    def _redact(self, hits: Sequence[Hit]) -> tuple[list[Hit], set[str]]:
        """Hits with the quarantine's flagged paragraphs replaced, and the ids of those that changed. Memory turns
        are the conversation's own messages and pass as they are."""
        if self.quarantine is None:
            return list(hits), set()
        out = self.quarantine.redact(hits)
        return out, {h.chunk_id for h, o in zip(hits, out) if o.text != h.text}

    def _fetch(self, hits: Sequence[Hit]) -> list[Chunk]:
        """Elected chunks, fetched fresh from the store (missing rows dropped, as in the source), with the
        quarantine's flagged paragraphs replaced."""
        chunks = []
        for h in hits:
            c = self.store.get_chunk(h.chunk_id) if self.store is not None else None
            if c is None and self.store is None:
                c = Chunk(h.chunk_id, h.doc_id, 0, h.start, h.end, h.text)
            if c is not None:
                chunks.append(c)
        if self.quarantine is None:
            return chunks
        # a redacted chunk's stored summary goes too (silent digestion shows it): made again from what is left
        return [c if r.text == c.text else replace(r, summary=self._summary_of(r.text))
                for c, r in zip(chunks, self.quarantine.redact(chunks), strict=True)]

    def _summary_of(self, text: str) -> str:
        return ExtractiveSummarizer(self.cfg.summary_tokens).summarize_text(text)

    def _hashes(self, chunks: Sequence[Chunk]) -> list[str]:
        vectors: dict[str, np.ndarray] = {}
        if self.store is not None and self.embedder is not None:
            ids, mat = self.store.embeddings(self.embedder.model_id, [c.chunk_id for c in chunks])
            vectors = dict(zip(ids, mat))
        missing = [c for c in chunks if c.chunk_id not in vectors]
        if missing and self.embedder is not None:
            vectors.update(zip([c.chunk_id for c in missing], self.embedder.embed([c.text for c in missing])))
        return [embedding_hash(vectors[c.chunk_id]) for c in chunks if c.chunk_id in vectors]

    # -- the turn ------------------------------------------------------------------------------------------
    def run(self, user_message: str, request_id: str | None = None, answer: bool = True) -> EeragResult:
        """One turn. ``answer=False`` (benchmarks of the election only) builds the transient context of the elected
        chunks and counts its tokens but skips the second call."""
        request_id = request_id or f"eerag:{uuid.uuid4().hex}"
        cfg = self.cfg
        # With a selector the pool is larger (eerag.candidate_k), so that its boost can change what is shown.
        pool = max(cfg.top_k, cfg.candidate_k) if self.selector is not None else cfg.top_k
        hits = self.retriever.search(user_message, k=pool, principal=self.principal)
        if self.selector is not None:
            hits = self.selector.rerank(user_message, hits)[: cfg.top_k]
        hits, redacted = self._redact(hits)
        if redacted:
            log_decision("Pipeline", f"Quarantine redacted flagged text from {len(redacted)} of {len(hits)} candidates",
                         request_id=request_id, chunks=sorted(redacted))
        candidates = make_candidates(hits, self._summaries(hits, redacted))
        header = build_header(candidates, cfg.header) if candidates else ""
        log_decision("Pipeline", f"Surfaced {len(candidates)} candidates for request {request_id}",
                     request_id=request_id, candidates=[c.hit.chunk_id for c in candidates])
        if self.audit is not None:
            self.audit.surfaced(request_id, [(c.number, c.hit.chunk_id, c.hit.doc_id) for c in candidates])

        started = time.perf_counter()
        try:
            first = self.session.send(user_message, background=header or None)
        except ModelError as exc:  # recorded as a failed election; the conversation goes on
            first = Completion("", 0, 0, getattr(self.model, "model_id", "model"), f"error: {exc}")
        election_seconds = time.perf_counter() - started
        calls, prompt_tokens, completion_tokens = 1, first.prompt_tokens, first.completion_tokens
        context_tokens = count_tokens(header) if header else 0
        requested = parse_retrieve_ids(first.text)
        kept, rejected = filter_elected(requested, [c.number for c in candidates], cfg.max_expand)
        failure = election_failure(first.text, requested, kept)
        if first.finish_reason.startswith("error: "):
            failure = "model error: " + first.finish_reason[len("error: "):]
        if failure:
            self.session.trim_last_turn()  # a garbage reply must not become history a later prompt imitates
        by_number = {c.number: c for c in candidates}
        elected_hits = [by_number[n].hit for n in kept]

        final, hashes, elected_chunks, context = first.text, [], [], ""
        if elected_hits:
            self.session.trim_last_turn()
            elected_chunks = self._fetch(elected_hits)
            hashes = self._hashes(elected_chunks)
            numbered = [(n, c) for n, c in zip(kept, elected_chunks)]
            if not cfg.silent:
                context = full_context(numbered)
            elif cfg.digest == "llm" and self.digester is not None:
                context = llm_digest(numbered, user_message, self.digester, prompt=self.digest_prompt)
                calls += 1
            else:
                context = truncation_digest(numbered)
            context_tokens += count_tokens(context)
            if answer:
                second = self.session.send(user_message, background=context, meta={"rag_tags": hashes,
                                                                                   "request_id": request_id})
                calls += 1
                prompt_tokens += second.prompt_tokens
                completion_tokens += second.completion_tokens
                final = second.text + "".join(f" [RAG:{h}]" for h in hashes)
            else:
                final = "".join(f"[RAG:{h}]" for h in hashes)
        elif failure:
            final = FAILED_REPLY
            context = ""
        else:
            self.session.annotate_last(request_id=request_id, rag_tags=[])
            context = ""
        if self.audit is not None:
            self.audit.elected(request_id, [(n, c.chunk_id, h) for n, c, h in zip(kept, elected_chunks, hashes)],
                               rejected)
        log_decision("Pipeline", f"Candidates surfaced: {len(candidates)}, Elected: {len(elected_hits)}, "
                     f"Retrieval: {'yes' if elected_hits else 'no'}", request_id=request_id,
                     elected=[h.chunk_id for h in elected_hits], rejected=rejected[:20])
        return EeragResult(
            request_id=request_id, final_response=final, first_response=first.text, candidate_header=header,
            surfaced=[c.hit.chunk_id for c in candidates], surfaced_docs=[c.hit.doc_id for c in candidates],
            elected=[c.chunk_id for c in elected_chunks], elected_docs=[c.doc_id for c in elected_chunks],
            elected_hashes=hashes, rejected_ids=rejected, context_tokens=context_tokens,
            prompt_tokens=prompt_tokens, completion_tokens=completion_tokens, model_calls=calls,
            meta={"election_seconds": election_seconds, "quarantined": sorted(redacted)},
            election_status="failed" if failure else ("elected" if elected_hits else "declined"), failure=failure,
            transient_context=context)
