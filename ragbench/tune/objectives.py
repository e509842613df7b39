"""Objectives: what a trial measures. A small registry maps a name to a factory ``(dataset, options) → Objective``;
an :class:`Objective` is a callable ``(cfg, units) → long table qid, measure, value`` over a subset of the dataset's
split units (queries, benchmark cases or conversation threads), so the sweep code never changes when a new kind of
objective is added::

    @register_objective("my-objective", kinds=("golden",))
    def _make(dataset: DatasetRef, options: Mapping[str, Any]) -> Objective: ...

Built in:

* ``retrieval`` (``golden[:DIR]``, ``beir:<DIR>:<split>``): any retrieval measure (``nDCG@10``, ``R@100``,
  ``RR@10``, ``P@5``, ``AP`` …), ``latency_ms`` (search time of the query) and ``context_tokens`` (tokens of the top
  ``retrieval.k`` chunks, what a RAG prompt would carry). Golden queries run as their asker (ACLs enforced).
* ``eerag`` (``eerag:<FILE>``): the EE-RAG benchmark per case (``ElectionF1``, ``ElectionPrecision``,
  ``ElectionRecall``, ``CandidateRecall``, ``RetrievalRate``, ``context_tokens``, ``model_calls``).
* ``dcs-threads`` (``dcs-threads:<FILE>``): DCS thread recovery; the split unit is a thread and each message of a
  real thread gets ``purity`` (1 when its DCN's majority thread is its own; the mean is the purity),
  ``context_share`` and ``context_size``.

Expensive per-configuration work (chunking, indexing, embedding through the persistent cache) is memoised by the
hash of the config sections it depends on, so evaluating a configuration query batch by query batch (for pruning)
costs one index build.
"""
from __future__ import annotations

import time
from abc import ABC, abstractmethod
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Hashable, Mapping, Sequence

import numpy as np
import pandas as pd

from ..config import RagbenchConfig, config_hash
from ..errors import ConfigError, DataError, SchemaError

COLUMNS = ["qid", "measure", "value"]


@dataclass(frozen=True)
class DatasetRef:
    """``kind`` golden | beir | eerag | dcs-threads, with its path and (BEIR) split."""

    kind: str
    path: Path | None = None
    split: str | None = None

    def __str__(self) -> str:
        if self.kind == "beir":
            return f"beir:{self.path}:{self.split}"
        return self.kind + (f":{self.path}" if self.path is not None else "")


def parse_dataset(text: str) -> DatasetRef:
    """``golden`` | ``golden:<DIR>`` | ``beir:<DIR>:<split>`` | ``eerag:<FILE>`` | ``dcs-threads:<FILE>``."""
    kind, _, rest = str(text).strip().partition(":")
    kind = kind.lower()
    if kind == "golden":
        return DatasetRef("golden", Path(rest).expanduser() if rest else None)
    if kind == "beir":
        folder, sep, split = rest.rpartition(":")
        if not sep or not folder or not split:
            raise ConfigError(f"dataset {text!r}: expected beir:<DIR>:<split>, e.g. beir:data/scifact:train.")
        return DatasetRef("beir", Path(folder).expanduser(), split)
    if kind in ("eerag", "dcs-threads"):
        if not rest:
            raise ConfigError(f"dataset {text!r}: expected {kind}:<FILE>.")
        return DatasetRef(kind, Path(rest).expanduser())
    raise ConfigError(f"unknown dataset {text!r}; expected golden[:DIR], beir:<DIR>:<split>, eerag:<FILE> or "
                      "dcs-threads:<FILE>.")


def split_units(units: Sequence[str], heldout: float, seed: int,
                limit: int | None = None) -> tuple[list[str], list[str]]:
    """Seeded (tuning, held-out) partition of ``units``: sort, permute with ``default_rng(seed)``, optionally keep
    the first ``limit``, and put ``round(n · heldout)`` (at least one) into the held-out part. Each part keeps the
    sorted order."""
    uniq = sorted(set(map(str, units)))
    perm = [uniq[i] for i in np.random.default_rng(seed).permutation(len(uniq))]
    if limit is not None:
        perm = perm[:limit]
    n_held = max(1, int(round(len(perm) * heldout)))
    if len(perm) - n_held < 1:
        raise DataError(f"cannot split {len(perm)} unit(s) into tuning and held-out parts (heldout={heldout}). "
                        "Fix: use a larger dataset or a smaller split.heldout.")
    held = sorted(perm[:n_held])
    return sorted(perm[n_held:]), held


class Objective(ABC):
    """A dataset bound to an evaluation: ``objective(cfg, units)`` → long table ``qid, measure, value``."""

    name: str = "objective"
    #: True when any subset of units can be evaluated on its own (then trials report per query and may prune).
    incremental: bool = True

    @abstractmethod
    def units(self) -> list[str]:
        """The split units (query ids, case ids, thread labels)."""

    @abstractmethod
    def check_measure(self, measure: str) -> str:
        """The canonical name of ``measure``; :class:`ConfigError` when this objective cannot produce it."""

    @abstractmethod
    def __call__(self, cfg: RagbenchConfig, units: Sequence[str], measures: Sequence[str]) -> pd.DataFrame:
        """Per-query values of ``measures`` for configuration ``cfg`` over ``units``."""

    data_hash: str = ""

    def model_sha256(self, cfg: RagbenchConfig) -> str | None:
        """SHA-256 of the model weights a configuration uses (None when it uses none)."""
        return None


class _Memo:
    """A tiny LRU cache: expensive per-configuration objects live while a sweep revisits similar configs."""

    def __init__(self, size: int = 4) -> None:
        self.size = size
        self.items: OrderedDict[Hashable, Any] = OrderedDict()

    def get(self, key: Hashable, make: Callable[[], Any]) -> Any:
        if key in self.items:
            self.items.move_to_end(key)
            return self.items[key]
        value = make()
        self.items[key] = value
        while len(self.items) > self.size:
            self.items.popitem(last=False)
        return value


_EMBEDDERS = _Memo(4)


def embedder_for(cfg: RagbenchConfig) -> Any:
    """One embedder per embedding section per process (the ONNX session loads once; the cache is persistent)."""
    from ..retrieval.embedding import make_embedder

    return _EMBEDDERS.get(config_hash(cfg.embedding), lambda: make_embedder(cfg.embedding))


# --------------------------------------------------------------------------------------------- retrieval


class RetrievalObjective(Objective):
    """Retrieval quality, latency and context size over a judged query set."""

    name = "retrieval"
    EXTRA = ("latency_ms", "context_tokens")

    def __init__(self, documents: Sequence[Any], queries: pd.DataFrame, qrels: pd.DataFrame,
                 principals: Mapping[str, Any] | None = None, data_hash: str = "") -> None:
        self.documents = list(documents)
        judged = set(qrels["qid"].astype(str))
        q = queries.assign(qid=queries["qid"].astype(str))
        self.queries = dict(zip(q["qid"], q["query"].astype(str)))
        self.qids = sorted(qid for qid in self.queries if qid in judged)
        if not self.qids:
            raise DataError("retrieval objective: no query has relevance judgements. Fix: check the qrels.")
        self.qrels = qrels.assign(qid=qrels["qid"].astype(str), docno=qrels["docno"].astype(str))
        self.principals = dict(principals or {})
        self.data_hash = data_hash
        self.acls = {d.doc_id: d.acl for d in self.documents}
        self.titles = {d.doc_id: d.title for d in self.documents}
        self._chunks, self._vectors, self._parts = _Memo(3), _Memo(3), _Memo(6)

    def units(self) -> list[str]:
        return list(self.qids)

    def check_measure(self, measure: str) -> str:
        if measure in self.EXTRA:
            return measure
        from ..eval.metrics import parse_measure

        try:
            return str(parse_measure(measure))
        except SchemaError as exc:
            raise ConfigError(f"metric {measure!r} cannot be produced by the retrieval objective: {exc} "
                              f"It also offers {', '.join(self.EXTRA)}.") from None

    def model_sha256(self, cfg: RagbenchConfig) -> str | None:
        from ..retrieval.retriever import needs_embedder

        return embedder_for(cfg).sha256 if needs_embedder(cfg.retrieval.mode) else None

    # -- building (memoised) -------------------------------------------------------------------------------
    def chunks(self, cfg: RagbenchConfig) -> list[Any]:
        from ..retrieval.chunking import make_chunker

        def make() -> list[Any]:
            chunker = make_chunker(cfg.chunking)
            return [c for d in self.documents for c in chunker.chunk(d)]

        return self._chunks.get(config_hash(cfg.chunking), make)

    def vectors(self, cfg: RagbenchConfig) -> np.ndarray:
        key = (config_hash(cfg.chunking), config_hash(cfg.embedding))
        return self._vectors.get(key, lambda: embedder_for(cfg).embed([c.text for c in self.chunks(cfg)]))

    def _keyword(self, cfg: RagbenchConfig) -> Any:
        from ..retrieval.bm25 import BM25Retriever

        def make() -> Any:
            b = BM25Retriever(k1=cfg.bm25.k1, b=cfg.bm25.b, stopwords=cfg.bm25.stopwords)
            return b.index(self.chunks(cfg), self.acls, self.titles)

        return self._parts.get(("bm25", config_hash(cfg.chunking), config_hash(cfg.bm25)), make)

    def _vector(self, cfg: RagbenchConfig, kind: str) -> Any:
        from ..retrieval.dense import DenseRetriever
        from ..retrieval.lsh import LshRetriever

        def make() -> Any:
            emb = embedder_for(cfg)
            r = DenseRetriever(emb) if kind == "dense" else LshRetriever(
                emb, tables=cfg.lsh.tables, bits=cfg.lsh.bits, multiprobe=cfg.lsh.multiprobe, seed=cfg.lsh.seed)
            return r.index(self.chunks(cfg), self.acls, self.titles, vectors=self.vectors(cfg))

        extra = config_hash(cfg.lsh) if kind == "lsh" else ""
        return self._parts.get((kind, config_hash(cfg.chunking), config_hash(cfg.embedding), extra), make)

    def system(self, cfg: RagbenchConfig) -> Any:
        """An indexed retriever for ``cfg`` (parts shared between configurations that agree on them)."""
        from ..retrieval.fusion import HybridRetriever
        from ..retrieval.retriever import normalize_mode

        mode = normalize_mode(cfg.retrieval.mode)
        if mode == "bm25":
            return self._keyword(cfg)
        if mode in ("dense", "lsh"):
            return self._vector(cfg, mode)
        part = cfg.fusion.dense_part.strip().lower()
        if part not in ("dense", "lsh"):
            raise ConfigError(f"fusion.dense_part must be dense or lsh, found {cfg.fusion.dense_part!r}.")
        f = cfg.fusion
        return HybridRetriever(self._keyword(cfg), self._vector(cfg, part), rrf_k=f.rrf_k, candidate_k=f.candidate_k,
                               rerank=f.rerank, rerank_weight=f.rerank_weight,
                               weights=(f.keyword_weight, f.dense_weight))

    # -- evaluating ----------------------------------------------------------------------------------------
    def __call__(self, cfg: RagbenchConfig, units: Sequence[str], measures: Sequence[str]) -> pd.DataFrame:
        from ..eval.metrics import evaluate, parse_measure
        from ..schema import hits_to_run
        from ..text import count_tokens

        ir = [m for m in measures if m not in self.EXTRA]
        depth = max([cfg.retrieval.k] + [parse_measure(m).cutoff or 100 for m in ir])
        system = self.system(cfg)
        rows: list[dict[str, Any]] = []
        extra: list[tuple[str, str, float]] = []
        for qid in units:
            if qid not in self.queries:
                raise DataError(f"retrieval objective: unknown query id {qid!r}.")
            t0 = time.perf_counter()
            hits = system.search(self.queries[qid], k=depth * 4, principal=self.principals.get(qid))
            ms = (time.perf_counter() - t0) * 1000.0
            rows.extend(hits_to_run(qid, hits)[:depth])
            if "latency_ms" in measures:
                extra.append((qid, "latency_ms", ms))
            if "context_tokens" in measures:
                extra.append((qid, "context_tokens", float(sum(count_tokens(h.text) for h in hits[:cfg.retrieval.k]))))
        parts = []
        if ir:
            run = pd.DataFrame(rows, columns=["qid", "docno", "score", "rank"])
            qrels = self.qrels[self.qrels["qid"].isin(set(units))]
            parts.append(evaluate(run, qrels, ir))
        if extra:
            parts.append(pd.DataFrame(extra, columns=COLUMNS))
        return pd.concat(parts, ignore_index=True) if parts else pd.DataFrame(columns=COLUMNS)


# ------------------------------------------------------------------------------------------------- EE-RAG


class EeragObjective(Objective):
    """The EE-RAG benchmark, case by case (election scores, context tokens, model calls)."""

    name = "eerag"
    MEASURES = ("CandidateRecall", "ElectionPrecision", "ElectionRecall", "ElectionF1", "RetrievalRate",
                "AnswerHintMatched", "context_tokens", "model_calls")

    def __init__(self, path: Path, mode: str = "dense", elector: str = "policy") -> None:
        from ..eval.datasets import load_eerag_bench
        from ..provenance import data_hash

        self.bench = load_eerag_bench(path)
        self.cases = {str(c.case_id): c for c in self.bench.cases}
        self.mode, self.elector = mode, elector
        self.data_hash = data_hash(path)
        self._stores = _Memo(2)

    def units(self) -> list[str]:
        return sorted(self.cases)

    def check_measure(self, measure: str) -> str:
        if measure not in self.MEASURES:
            raise ConfigError(f"metric {measure!r} cannot be produced by the eerag objective; expected one of "
                              f"{', '.join(self.MEASURES)}.")
        return measure

    def model_sha256(self, cfg: RagbenchConfig) -> str | None:
        return embedder_for(cfg).sha256

    def _store(self, cfg: RagbenchConfig) -> Any:
        from ..eval.eerag_bench import seed_store
        from ..store import KnowledgeStore

        def make() -> Any:
            store = KnowledgeStore.open(":memory:")
            seed_store(store, self.bench, embedder_for(cfg), cfg.eerag.summary_tokens)
            return store

        return self._stores.get((config_hash(cfg.embedding), cfg.eerag.summary_tokens), make)

    def __call__(self, cfg: RagbenchConfig, units: Sequence[str], measures: Sequence[str]) -> pd.DataFrame:
        from ..eerag.pipeline import EeragPipeline
        from ..eval.eerag_bench import make_elector
        from ..eval.metrics import evaluate_election
        from ..retrieval.retriever import retriever_from_store

        emb = embedder_for(cfg)
        store = self._store(cfg)
        retriever = retriever_from_store(store, self.mode, cfg, emb)
        model, prompt = make_elector(self.elector, cfg, emb)
        rows, extra = [], []
        for cid in units:
            case = self.cases[cid]
            res = EeragPipeline(store, retriever, model, cfg.eerag, embedder=emb, system_prompt=prompt,
                                audit=False).run(case.query, request_id=f"tune:{cid}")
            rows.append({"case_id": cid, "expected": list(case.expected_slugs), "surfaced": res.surfaced_docs,
                         "elected": res.elected_docs, "expect_retrieval": case.expect_retrieval,
                         "answer": res.final_response, "hint": case.expected_answer_hint})
            extra += [(cid, "context_tokens", float(res.context_tokens)), (cid, "model_calls", float(res.model_calls))]
        per = pd.concat([evaluate_election(rows), pd.DataFrame(extra, columns=COLUMNS)], ignore_index=True)
        return per[per["measure"].isin(set(measures))].reset_index(drop=True)


# ------------------------------------------------------------------------------------------- DCS threads


class DcsThreadsObjective(Objective):
    """DCS thread recovery on a labelled conversation; units are threads, rows are messages."""

    name = "dcs-threads"
    incremental = False  # a replay needs the whole (sub-)conversation at once
    MEASURES = ("purity", "context_share", "context_size")

    def __init__(self, path: Path) -> None:
        from ..eval.threads import is_real_thread, load_messages
        from ..provenance import data_hash

        self.messages = load_messages(path)
        self.real = is_real_thread
        self.threads = sorted({t for t in self.messages["thread"].astype(str) if is_real_thread(t)})
        if len(self.threads) < 2:
            raise DataError(f"{path}: fewer than two real threads; nothing to split.")
        self.data_hash = data_hash(path)

    def units(self) -> list[str]:
        return list(self.threads)

    def check_measure(self, measure: str) -> str:
        if measure not in self.MEASURES:
            raise ConfigError(f"metric {measure!r} cannot be produced by the dcs-threads objective; expected one of "
                              f"{', '.join(self.MEASURES)} (per message; ARI/NMI are not per-message scores).")
        return measure

    def __call__(self, cfg: RagbenchConfig, units: Sequence[str], measures: Sequence[str]) -> pd.DataFrame:
        from ..dcs.classifier import make_classifier
        from ..eval.threads import replay

        chosen = set(units)
        # Messages outside every real thread (noise, cross references) stay in as distractors.
        keep = self.messages["thread"].astype(str).map(lambda t: t in chosen or not self.real(t))
        routed, _, _ = replay(self.messages[keep].reset_index(drop=True), make_classifier(cfg.dcs.profile), cfg.dcs)
        thread_of = dict(zip(routed["id"], routed["thread"]))
        scored = routed[routed["thread"].isin(chosen)]
        majority = scored.groupby("dcn")["thread"].agg(lambda s: s.value_counts().sort_index().idxmax())
        rows: list[tuple[str, str, float]] = []
        for r in scored.itertuples(index=False):
            if "purity" in measures:
                rows.append((r.id, "purity", float(majority[r.dcn] == r.thread)))
            if r.context and "context_share" in measures:
                rows.append((r.id, "context_share", float(np.mean([thread_of[c] == r.thread for c in r.context]))))
            if "context_size" in measures:
                rows.append((r.id, "context_size", float(len(r.context))))
        return pd.DataFrame(rows, columns=COLUMNS)


# ------------------------------------------------------------------------------------------------ registry


@dataclass(frozen=True)
class _Entry:
    factory: Callable[[DatasetRef, Mapping[str, Any]], Objective]
    kinds: tuple[str, ...]


OBJECTIVES: dict[str, _Entry] = {}


def register_objective(name: str, kinds: Sequence[str]) -> Callable:
    """Decorator: register ``factory(dataset, options) → Objective`` for the dataset kinds it accepts."""
    def deco(factory: Callable[[DatasetRef, Mapping[str, Any]], Objective]) -> Callable:
        OBJECTIVES[name] = _Entry(factory, tuple(kinds))
        return factory
    return deco


def _require(path: Path | None, what: str) -> Path:
    if path is None or not path.exists():
        raise DataError(f"{what} {path} does not exist. Fix: check the dataset path in the experiment file.")
    return path


@register_objective("retrieval", kinds=("golden", "beir"))
def _retrieval(ds: DatasetRef, options: Mapping[str, Any]) -> Objective:
    if ds.kind == "golden":
        from ..eval.golden import DEFAULT_FOLDER, load_golden

        golden = load_golden(_require(ds.path, "golden folder") if ds.path is not None else DEFAULT_FOLDER)
        principals = {q.qid: golden.principals[q.asked_by] for q in golden.questions}
        return RetrievalObjective(golden.documents, golden.queries_df(), golden.qrels_df(), principals,
                                  golden.data_hash)
    from ..eval.beir import beir_documents
    from ..eval.datasets import load_beir
    from ..provenance import data_hash

    folder = _require(ds.path, "BEIR folder")
    bd = load_beir(folder, ds.split or "test")
    return RetrievalObjective(beir_documents(bd.corpus), bd.queries, bd.qrels, None, data_hash(folder))


@register_objective("eerag", kinds=("eerag",))
def _eerag(ds: DatasetRef, options: Mapping[str, Any]) -> Objective:
    return EeragObjective(_require(ds.path, "EE-RAG benchmark file"), mode=str(options.get("mode", "dense")),
                          elector=str(options.get("elector", "policy")))


@register_objective("dcs-threads", kinds=("dcs-threads",))
def _dcs(ds: DatasetRef, options: Mapping[str, Any]) -> Objective:
    return DcsThreadsObjective(_require(ds.path, "DCS message file"))


def make_objective(dataset: str, name: str | None = None, options: Mapping[str, Any] | None = None) -> Objective:
    """The objective ``name`` (default: the one registered for the dataset's kind) bound to ``dataset``."""
    ds = parse_dataset(dataset)
    if name is None:
        matches = [n for n, e in OBJECTIVES.items() if ds.kind in e.kinds]
        if not matches:
            raise ConfigError(f"no objective is registered for dataset kind {ds.kind!r}.")
        name = matches[0]
    if name not in OBJECTIVES:
        raise ConfigError(f"unknown objective {name!r}; registered: {', '.join(sorted(OBJECTIVES))}.")
    entry = OBJECTIVES[name]
    if ds.kind not in entry.kinds:
        raise ConfigError(f"objective {name!r} takes datasets of kind {', '.join(entry.kinds)}, not {ds.kind!r}.")
    return entry.factory(ds, dict(options or {}))
