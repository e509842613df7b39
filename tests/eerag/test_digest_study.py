"""The Layer-5 digestion study with a recording chat model."""
from __future__ import annotations

from ragbench.config import RagbenchConfig, with_overrides
from ragbench.eerag.prompts import BUILTIN
from ragbench.eval.eerag_digest import digest_study
from ragbench.llm.recording import RecordingChatModel

from .conftest import ScriptedModel
from .test_bench import _write_beir


def test_digest_study_counts_tokens_and_kept_evidence(tmp_path):
    _write_beir(tmp_path / "beir")
    model = RecordingChatModel(ScriptedModel(["git rebase replays commits onto another base."]))
    cfg = with_overrides(RagbenchConfig(), {"embedding.model": "hashing", "eerag.elect_threshold": 0.0,
                                            "eerag.max_expand": 1, "eerag.margin": 1.0})
    pq, s = digest_study(tmp_path / "beir", model, cfg, n=2, k=2, store_path=tmp_path / "s.db")
    # Seeded order: q3 (coroutines) then q2 (docker); each elects its relevant abstract.
    assert list(pq.qid) == ["q3", "q2"] and pq.relevant_elected.all() and len(model.calls) == 2
    assert model.calls[0][0].content == BUILTIN["eerag.digest@v1"].replace("{n}", "80")
    assert (s["full_abstract_kept"], s["truncate_abstract_kept"]) == (1.0, 1.0)
    # The scripted digest talks about git, so none of either relevant abstract's words survive.
    assert (s["llm_abstract_kept"], s["llm_claim_kept"]) == (0.0, 0.0)
    assert (s["full_tokens"], s["llm_tokens"]) == (39.0, 28.0) and s["prompt"] == "eerag.digest@v1"
