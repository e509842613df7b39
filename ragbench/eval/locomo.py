"""LoCoMo context selection: which turns of a long conversation does each strategy pick for a question?

For every question of every conversation (the questions come after the whole conversation), each strategy
ranks the conversation's turns; we score the first k with the LoCoMo paper's evidence recall (share of the gold
evidence dia_ids present, ids normalised, 1.0 with no evidence; :func:`ragbench.eval.metrics.evidence_recall_at_k`)
and count the tokens of the selected turns. Strategies:

* ``recency`` — the last k turns;
* ``bm25`` — Okapi BM25 over turns;
* ``dense`` — MiniLM cosine over turns;
* ``dcs`` — DCS alone: turns registered in order (clock = session date), question classified and matched to a DCN,
  ranking = the assembled context (at most ``max(ks)`` turns; a shorter context selects fewer turns);
* ``dcs_dense`` — dense cosine + ``dcs_weight`` × the DCS score of turns in the DCS context (``mode="add"``),
  or the source pipeline's boost: DCS-selected turns first, each group by cosine (``mode="first"``).

A turn's text for retrieval is ``"<speaker>: <text>"`` (``speaker=True``), plus ``" [shares <image caption>]"``
when the turn shared a photo (``captions=True``), preceded by the ``before`` previous turns of the same session, with
``"(<session date>) "`` in front (``date=True``). Defaults (all on, ``before=1``) were chosen on conv-26 and conv-30
of the development split: recall@10 of dense 0.28 (plain text) → 0.44 (speaker, captions) → 0.56 (+ date, one
previous turn); BM25 with all of it 0.71.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

import numpy as np
import pandas as pd
from tqdm.auto import tqdm

from ..config import DcsConfig
from ..errors import ConfigError
from ..retrieval.turns import TurnMemory, TurnText, turn_documents
from ..schema import Chunk
from .datasets import LOCOMO_CATEGORIES, LocomoConversation, load_locomo, read_json
from .metrics import evidence_recall_at_k

log = logging.getLogger(__name__)

DEFAULT_TURN_TEXT = TurnText()
STRATEGIES = ("recency", "bm25", "dense", "dcs", "dcs_dense", "memory")
#: What :func:`evaluate_locomo` runs unless told otherwise (``ragbench dcs locomo`` runs all of STRATEGIES).
DEFAULT_STRATEGIES = ("recency", "bm25", "dense", "dcs", "dcs_dense")

#: The ``memory`` strategy's TurnMemory settings (chosen by leave-one-conversation-out on the dev split:
#: docs/dcs.md, "Conversation memory").
MEMORY_DEFAULTS: dict[str, Any] = {"how": TurnText(before=2, after=1), "dense_how": TurnText(before=0),
                                   "stemmer": "english", "dense_weight": 0.5, "session_weight": 2.0, "rrf_k": 60}


@dataclass
class LocomoResult:
    """``per_question``: one row per (strategy, question) with ``recall@k``/``tokens@k`` columns."""

    per_question: pd.DataFrame
    ks: tuple[int, ...]
    settings: dict = field(default_factory=dict)

    def summary(self) -> dict:
        """``{"strategies": {name: {"recall@5": …, "tokens@10": …}}, "questions": n}``."""
        out: dict = {}
        for name, g in self.per_question.groupby("strategy", sort=False):
            out[name] = {c: float(g[c].mean()) for c in g.columns if c.startswith(("recall@", "tokens@"))}
        n = int(self.per_question[["conversation", "qid"]].drop_duplicates().shape[0])
        return {"strategies": out, "questions": n}

    def by_category(self, k: int = 10) -> pd.DataFrame:
        t = self.per_question.pivot_table(index="strategy", columns="category", values=f"recall@{k}",
                                          aggfunc="mean", sort=False)
        t.columns = [LOCOMO_CATEGORIES.get(c, str(c)) for c in t.columns]
        return t

    def significance(self, k: int = 10, baseline: str = "dense", seed: int = 0) -> pd.DataFrame:
        """Paired tests of each strategy's recall@k against ``baseline`` (same questions)."""
        from .stats import compare

        col = f"recall@{k}"
        wide = self.per_question.pivot_table(index=["conversation", "qid"], columns="strategy", values=col)
        rows = []
        for name in wide.columns:
            if name == baseline:
                continue
            c = compare(wide[name].to_numpy(), wide[baseline].to_numpy(), seed=seed, n_resamples=2000)
            rows.append({"strategy": name, "baseline": baseline, "mean": c.mean_a, "baseline_mean": c.mean_b,
                         "diff": c.mean_diff, "ci_low": c.ci_low, "ci_high": c.ci_high, "t_p": c.t_p,
                         "wilcoxon_p": c.wilcoxon_p, "permutation_p": c.permutation_p,
                         "wins": c.wins, "ties": c.ties, "losses": c.losses})
        return pd.DataFrame(rows)


def parse_session_date(text: str) -> datetime | None:
    """``"1:56 pm on 8 May, 2023"`` → an aware UTC datetime; None when the format differs."""
    try:
        return datetime.strptime(text.strip(), "%I:%M %p on %d %B, %Y").replace(tzinfo=timezone.utc)
    except ValueError:
        return None


def load_captions(path: str | Path) -> dict[tuple[str, str], str]:
    """``(sample_id, dia_id) → blip caption`` of the turns that shared an image (the loader keeps no captions)."""
    data = read_json(Path(path))
    out: dict[tuple[str, str], str] = {}
    for sample in data:
        for key, turns in sample.get("conversation", {}).items():
            if key.startswith("session_") and isinstance(turns, list):
                for t in turns:
                    if isinstance(t, dict) and t.get("blip_caption"):
                        out[(str(sample["sample_id"]), str(t["dia_id"]).strip())] = str(t["blip_caption"])
    return out


def turn_texts(conv: LocomoConversation, how: TurnText, captions: dict[tuple[str, str], str]) -> list[str]:
    """The retrieval text of every turn (:func:`ragbench.retrieval.turns.turn_documents`); ``how.before`` earlier
    and ``how.after`` later turns of the same session are included, so a short answer ("He is three.") carries the
    question it answers."""
    mine = {d: c for (sid, d), c in captions.items() if sid == conv.sample_id}
    return turn_documents(conv.turns, how, mine)


def _turn_times(conv: LocomoConversation) -> list[datetime]:
    """Session date + one second per turn; a session whose date is missing or not after the previous turn
    starts one minute after it (timestamps must not run backwards for the DCS clock)."""
    times: list[datetime] = []
    last: datetime | None = None
    session, start, j = None, None, 0
    for t in conv.turns:
        if t.session != session:
            session, j = t.session, 0
            start = parse_session_date(t.date)
            if start is None or (last is not None and start <= last):
                start = (last or datetime(2000, 1, 1, tzinfo=timezone.utc)) + timedelta(minutes=1)
        assert start is not None  # set just above
        last = start + timedelta(seconds=j)
        times.append(last)
        j += 1
    return times


def dcs_rankings(conv: LocomoConversation, texts: Sequence[str], questions: Sequence[str],
                 config: DcsConfig, classifier=None, limit: int = 50) -> list[list[tuple[int, float]]]:
    """For each question, the DCS context as ``(turn index, score)`` best first."""
    from ..dcs.assembler import DcsContextAssembler
    from ..dcs.classifier import PatternClassifier

    clf = classifier or PatternClassifier(config.profile)
    clock = {"now": datetime(2000, 1, 1, tzinfo=timezone.utc)}
    asm = DcsContextAssembler(config, clock=lambda: clock["now"], escalation=clf.is_escalation)
    position = {}
    for i, (turn, ts) in enumerate(zip(conv.turns, _turn_times(conv))):
        clock["now"] = ts
        asm.observe(turn.dia_id, clf.classify(texts[i]), texts[i], ts)
        position[turn.dia_id] = i
    asm.merge_similar_dcns()
    out = []
    for q in questions:
        key = clf.classify(q)
        node = asm.match_dcn(key)
        if node is not None:
            key = key.with_dcns((node.dcn_id,))
        out.append([(position[s.message.message_id], s.score) for s in asm.assemble(key, limit)])
    return out


def evaluate_locomo(path: str | Path, ks: Sequence[int] = (5, 10, 25, 50), embedder=None,
                    config: DcsConfig | None = None, how: TurnText = DEFAULT_TURN_TEXT, dcs_weight: float = 0.1,
                    mode: str = "add", conversations: Sequence[str] | None = None,
                    max_questions: int | None = None, token_counter: Callable[[str], int] | None = None,
                    memory: Mapping[str, Any] | None = None, strategies: Sequence[str] = DEFAULT_STRATEGIES,
                    show_progress: bool = False) -> LocomoResult:
    """Run the ``strategies`` on every question (optionally a subset of conversations / the first questions).

    ``memory``: keyword arguments of :class:`~ragbench.retrieval.turns.TurnMemory` for the ``memory`` strategy
    (default :data:`MEMORY_DEFAULTS`; ``how`` may be a mapping of :class:`TurnText` fields)."""
    from ..retrieval.bm25 import BM25Retriever
    from ..retrieval.dense import DenseRetriever
    from ..text import count_tokens

    ks = tuple(sorted(set(int(k) for k in ks)))
    if not ks or ks[0] < 1:
        raise ConfigError(f"locomo: expected positive k values, found {ks}.")
    if mode not in ("add", "first"):
        raise ConfigError(f"locomo: dcs_dense mode must be 'add' or 'first', found {mode!r}.")
    if embedder is None:
        from ..config import EmbeddingConfig
        from ..retrieval.embedding import make_embedder

        embedder = make_embedder(EmbeddingConfig())
    cfg = config or DcsConfig()
    counter = token_counter or (lambda s: count_tokens(s))
    convs = load_locomo(path)
    if conversations:
        missing = sorted(set(conversations) - {c.sample_id for c in convs})
        if missing:
            raise ConfigError(f"locomo: conversation(s) {missing} are not in {path}; it holds "
                              f"{[c.sample_id for c in convs]}. Fix: pick from that list.")
        convs = [c for c in convs if c.sample_id in set(conversations)]
    unresolved = [f"{c.sample_id} qa {i}: {e}" for c in convs for i, q in enumerate(c.qa) for e in q.unresolved]
    if unresolved:
        # Kept (the public file has such ids) but never silent: those questions cannot reach full recall.
        log.warning("%s: %d evidence id(s) name no dialog turn and count as never retrieved: %s", path,
                    len(unresolved), "; ".join(unresolved[:10]) + (" …" if len(unresolved) > 10 else ""))
    captions = load_captions(path) if how.captions else {}
    unknown = sorted(set(strategies) - set(STRATEGIES))
    if unknown:
        raise ConfigError(f"locomo: unknown strategies {unknown}; expected some of {', '.join(STRATEGIES)}.")
    mem_args = dict(MEMORY_DEFAULTS, **(memory or {}))
    if isinstance(mem_args.get("how"), Mapping):
        mem_args["how"] = TurnText(**mem_args["how"])
    mem_captions = captions or (load_captions(path) if mem_args["how"].captions else {})
    kmax = ks[-1]
    rows = []
    for conv in tqdm(convs, disable=not show_progress, desc="locomo"):
        qas = list(conv.qa)[: max_questions] if max_questions else list(conv.qa)
        texts = turn_texts(conv, how, captions)
        raw = turn_texts(conv, TurnText(speaker=True, captions=True, date=False, before=0), captions)
        tokens = np.array([counter(t) for t in raw])
        chunks = [Chunk(t.dia_id, t.dia_id, i, 0, len(texts[i]), texts[i]) for i, t in enumerate(conv.turns)]
        ids = [t.dia_id for t in conv.turns]
        position = {d: i for i, d in enumerate(ids)}
        bm25 = BM25Retriever().index(chunks)
        dense = DenseRetriever(embedder).index(chunks)
        qvecs = dense.embedder.embed([q.question for q in qas])
        if "memory" in strategies:
            mine = {d: c for (sid, d), c in mem_captions.items() if sid == conv.sample_id}
            mem = TurnMemory(embedder, **mem_args).index(conv.turns, mine)
        dcs = dcs_rankings(conv, raw, [q.question for q in qas], cfg, limit=kmax)
        n = len(ids)
        for qi, qa in enumerate(qas):
            _, cos = dense.score_rows(np.asarray(qvecs[qi], dtype=np.float32))
            bm = [position[h.chunk_id] for h in bm25.search(qa.question, kmax)] if qa.question.strip() else []
            dcs_score = np.zeros(n)
            for i, s in dcs[qi]:
                dcs_score[i] = s
            in_dcs = np.zeros(n, dtype=bool)
            in_dcs[[i for i, _ in dcs[qi]]] = True
            order_dense = np.argsort(-cos, kind="stable")
            if mode == "add":
                combo = np.argsort(-(cos + dcs_weight * dcs_score), kind="stable")
            else:
                combo = np.lexsort((-cos, ~in_dcs))
            if "memory" in strategies:
                mem_order = mem.rank(qa.question, qvec=qvecs[qi])
            rankings = {
                "recency": np.arange(n)[::-1],
                "bm25": np.array(bm, dtype=int),
                "dense": order_dense,
                "dcs": np.array([i for i, _ in dcs[qi]], dtype=int),
                "dcs_dense": combo,
            }
            if "memory" in strategies:
                rankings["memory"] = mem_order
            for name, order in rankings.items():
                if name not in strategies:
                    continue
                picked = [ids[i] for i in order[:kmax]]
                row = {"strategy": name, "conversation": conv.sample_id, "qid": qi, "category": qa.category}
                for k in ks:
                    row[f"recall@{k}"] = evidence_recall_at_k(qa.evidence, picked, k)
                    row[f"tokens@{k}"] = int(tokens[order[:k]].sum()) if len(order) else 0
                rows.append(row)
    df = pd.DataFrame(rows)
    memory_settings = {k: (v.__dict__ if isinstance(v, TurnText) else v) for k, v in mem_args.items()}
    settings = {"ks": ks, "turn_text": how.__dict__, "memory": memory_settings, "dcs_weight": dcs_weight, "mode": mode,
                "dcs": {"faithful": cfg.faithful, "profile": cfg.profile}, "embedder": embedder.model_id,
                "unresolved_evidence": unresolved}
    return LocomoResult(df, ks, settings)
