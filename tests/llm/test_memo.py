"""The judge memo: a stored P(yes) is returned without a model call, across processes (files), and only for the
same model and the same messages."""
from __future__ import annotations

import sqlite3
import threading

import pytest

from ragbench.config import RagbenchConfig, with_overrides
from ragbench.errors import DataError, ModelError
from ragbench.llm.memo import MemoJudgeModel, VerdictMemo, model_fingerprint, prompt_key
from ragbench.schema import Message


class CountingJudge:
    def __init__(self, model_id: str = "llama.cpp:stub", p: float = 0.3125, fail: bool = False) -> None:
        self.model_id, self.p, self.fail, self.calls = model_id, p, fail, 0

    def yes_probability(self, messages) -> float:
        self.calls += 1
        if self.fail:
            raise ModelError("the judge model crashed")
        return self.p + len(messages[-1].content) / 1000

    def complete(self, messages):
        return "delegated"


def ask(text: str) -> list[Message]:
    return [Message("user", text)]


def test_a_stored_verdict_is_returned_without_a_model_call_and_survives_reopening(tmp_path):
    path = tmp_path / "memo" / "judge.sqlite"  # the folder is created
    model = CountingJudge()
    judge = MemoJudgeModel(model, VerdictMemo(path))
    assert judge.yes_probability(ask("abcd")) == 0.3165
    assert judge.yes_probability(ask("abcd")) == 0.3165
    assert judge.yes_probability(ask("abcde")) == 0.3175
    assert (model.calls, judge.hits, judge.misses, len(judge.memo)) == (2, 1, 2, 2)
    judge.memo.close()
    again = CountingJudge()
    reopened = MemoJudgeModel(again, VerdictMemo(path))
    assert [reopened.yes_probability(ask(t)) for t in ("abcd", "abcde")] == [0.3165, 0.3175]
    assert again.calls == 0 and reopened.hits == 2
    assert reopened.complete(ask("x")) == "delegated" and reopened.model_id == "llama.cpp:stub"


def test_another_model_or_another_role_misses(tmp_path):
    memo = VerdictMemo(tmp_path / "judge.sqlite")
    MemoJudgeModel(CountingJudge("llama.cpp:a"), memo).yes_probability(ask("q"))
    other = CountingJudge("llama.cpp:b")
    MemoJudgeModel(other, memo).yes_probability(ask("q"))
    assert other.calls == 1
    fp = "llama.cpp:a"
    assert prompt_key(fp, ask("q")) != prompt_key(fp, [Message("system", "q")])
    assert prompt_key(fp, ask("q")) == prompt_key(fp, ask("q")) and len(prompt_key(fp, ask("q"))) == 64


def test_the_fingerprint_names_the_model_file_size(tmp_path):
    gguf = tmp_path / "m.gguf"
    gguf.write_bytes(b"x" * 10)
    model = CountingJudge()
    assert model_fingerprint(model) == "llama.cpp:stub"
    model.model_path = gguf
    assert model_fingerprint(model) == "llama.cpp:stub|10"


def test_a_failing_model_stores_nothing(tmp_path):
    memo = VerdictMemo(tmp_path / "judge.sqlite")
    judge = MemoJudgeModel(CountingJudge(fail=True), memo)
    with pytest.raises(ModelError, match="crashed"):
        judge.yes_probability(ask("q"))
    assert len(memo) == 0 and judge.misses == 0


def test_bad_memo_files_and_models_are_named(tmp_path):
    bad = tmp_path / "judge.sqlite"
    bad.write_bytes(b"this is not a database, just some text long enough to be read as a header" * 20)
    with pytest.raises(DataError, match=r"judge\.sqlite is not a readable SQLite file .*Fix: delete it"):
        VerdictMemo(bad)
    with pytest.raises(DataError, match="is a folder. Fix: give a file path"):
        VerdictMemo(tmp_path)
    with pytest.raises(TypeError, match="gives no graded verdict"):
        MemoJudgeModel(object(), VerdictMemo(tmp_path / "ok.sqlite"))


def test_threads_share_one_memo(tmp_path):
    memo = VerdictMemo(tmp_path / "judge.sqlite")
    judge = MemoJudgeModel(CountingJudge(), memo)
    threads = [threading.Thread(target=lambda i=i: [judge.yes_probability(ask(f"q{i % 4}")) for _ in range(5)])
               for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(memo) == 4
    rows = sqlite3.connect(tmp_path / "judge.sqlite").execute("SELECT model, p FROM yes_probability").fetchall()
    assert sorted(rows) == [("llama.cpp:stub", 0.3145)] * 4


def test_make_judge_wraps_a_graded_judge_only_when_the_memo_is_set(tmp_path, monkeypatch):
    import ragbench.llm as llm
    from ragbench.eval.answers import make_judge

    monkeypatch.setattr(llm, "make_chat_model", lambda name, **kw: CountingJudge())
    plain = RagbenchConfig().answer
    assert make_judge(plain, None) is None
    on = with_overrides(RagbenchConfig(), {"answer.judge": "stub"}).answer
    assert isinstance(make_judge(on, None), CountingJudge)
    memo = with_overrides(RagbenchConfig(), {"answer.judge": "stub",
                                             "answer.judge_memo": str(tmp_path / "j.sqlite")}).answer
    wrapped = make_judge(memo, None)
    assert isinstance(wrapped, MemoJudgeModel) and wrapped.yes_probability(ask("ab")) == 0.3145
    monkeypatch.setattr(llm, "make_chat_model", lambda name, **kw: object())  # a greedy judge: nothing to keep
    assert type(make_judge(memo, None)) is object


def test_with_memo_leaves_no_judge_an_empty_path_and_a_greedy_judge_alone(tmp_path):
    from ragbench.llm.memo import with_memo

    judge, greedy = CountingJudge(), object()
    path = str(tmp_path / "j.sqlite")
    assert with_memo(None, path) is None and with_memo(judge, "") is judge and with_memo(greedy, path) is greedy
    assert isinstance(with_memo(judge, path), MemoJudgeModel)
