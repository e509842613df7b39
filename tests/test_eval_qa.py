"""The QA benchmark (ragbench eval qa): loading, grading priority, few-shot prompt, rates and the command."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from ragbench.cli import main
from ragbench.errors import DataError
from ragbench.eval.qa import EXAMPLES_HEADER, QaItem, examples, grade, load_qa, prompt, run_qa
from ragbench.stages import ChatModel, Completion

SAMPLE = str(Path(__file__).resolve().parents[1] / "data" / "qa" / "sample.jsonl")


class Scripted(ChatModel):
    """Replies from a question → answer table (the prompt's last question line)."""

    def __init__(self, replies: dict[str, str]) -> None:
        self.replies = replies
        self.prompts: list[str] = []

    @property
    def model_id(self) -> str:
        return "scripted"

    def complete(self, messages):
        text = messages[-1].content
        self.prompts.append(text)
        question = [ln for ln in text.splitlines() if ln.startswith("Question: ")][-1][len("Question: "):]
        reply = self.replies.get(question, "I do not know.")
        return Completion(reply, len(text.split()), len(reply.split()), self.model_id)


def _item(**kw) -> QaItem:
    base = dict(qid="x", question="q?", answer=("Paris",), correct=("Paris",), possibly=("France",),
                wrong=("Lyon",))
    base.update(kw)
    return QaItem(**base)


def test_grade_priority_is_correct_then_wrong_then_possibly():
    item = _item()
    assert grade("It is paris.", item) == "Correct"
    assert grade("Paris, not Lyon", item) == "Correct"      # correct wins over wrong
    assert grade("Lyon, in France", item) == "DefinitelyWrong"  # wrong wins over possibly
    assert grade("Somewhere in FRANCE", item) == "PossiblyCorrect"
    assert grade("No idea", item) == "Indeterminate"


def test_bundled_file_loads_and_bad_files_name_the_line(tmp_path):
    items = load_qa(SAMPLE)
    assert len(items) == 16 and items[0].qid == "qa-01" and items[0].correct == ("Au",)
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"question": "a?", "answer": ["b"]}\nnot json\n')
    with pytest.raises(DataError, match="bad.jsonl:2: not JSON"):
        load_qa(bad)
    bad.write_text('{"question": "a?"}\n')
    with pytest.raises(DataError, match="bad.jsonl:1: no correct answer"):
        load_qa(bad)
    bad.write_bytes('\ufeff{"question": "a?", "answer": ["b"]}\r\n'.encode())  # a BOM and CRLF are fine
    assert [(i.question, i.correct) for i in load_qa(bad)] == [("a?", ("b",))]
    bad.write_bytes(b'{"question": "a?", "answer": ["b"]}\n{"question": "caf\xe9?", "answer": ["b"]}\n')
    with pytest.raises(DataError, match=r"bad\.jsonl:2: not UTF-8 text \(byte 0xe9 at offset 53\)"):
        load_qa(bad)


def test_few_shot_examples_are_the_most_similar_other_items():
    import numpy as np

    items = [_item(qid=str(i), question=f"q{i}") for i in range(4)]
    vectors = np.array([[1, 0], [0.9, 0.1], [0, 1], [0.8, 0.2]], dtype=np.float32)
    assert examples(items, vectors, 2) == [[1, 3], [0, 3], [3, 1], [0, 1]]
    text = prompt(items[0], [items[1]])
    assert text == f"{EXAMPLES_HEADER}\nQ: q1\nA: Paris\n\nQuestion: q0\nAnswer:"
    assert prompt(items[0], []) == "Question: q0\nAnswer:"


def test_rates_and_verdict_with_a_scripted_model():
    from ragbench.retrieval.hashing_embedder import HashingEmbedder

    items = load_qa(SAMPLE)[:4]   # gold, spider legs, red planet, boiling point
    model = Scripted({items[0].question: "Au", items[1].question: "six", items[2].question: "Mars, probably"})
    res = run_qa(items, model, HashingEmbedder(32), few_shot=2)
    assert list(res.per_item["outcome"]) == ["Correct", "DefinitelyWrong", "Correct", "Indeterminate"]
    assert res.rates["Correct"] == 50.0 and res.rates["DefinitelyWrong"] == 25.0
    assert res.rates["QaScore"] == pytest.approx((1 - 2 + 1 + 0) / 4)
    assert res.verdict == {"Correct": True, "PossiblyCorrect": False, "DefinitelyWrong": False,
                           "Indeterminate": True} and not res.passed
    assert all(p.startswith(EXAMPLES_HEADER) and p.count("\nQ: ") == 2 for p in model.prompts)
    per = res.per_query()
    assert set(per["measure"]) == {"Correct", "PossiblyCorrect", "DefinitelyWrong", "Indeterminate", "QaScore"}


def test_cli_json_line_run_folder_and_mlflow(tmp_path, capsys, mlflow_installed):
    out = tmp_path / "run"
    code = main(["eval", "qa", SAMPLE, "--limit", "3", "--few-shot", "0", "--out", str(out), "--json"])
    captured = capsys.readouterr()
    assert code == 0 and len(captured.out.splitlines()) == 1
    rec = json.loads(captured.out)
    assert set(rec) >= {"Correct", "PossiblyCorrect", "DefinitelyWrong", "Indeterminate", "QaScore", "passed",
                        "questions", "model_id", "mlflow_run_id"}
    assert rec["questions"] == 3 and bool(rec["mlflow_run_id"]) == mlflow_installed
    assert sum(rec[o] for o in ("Correct", "PossiblyCorrect", "DefinitelyWrong", "Indeterminate")) == \
        pytest.approx(100.0)
    assert (out / "per_item.csv").is_file() and json.loads((out / "rates.json").read_text())["questions"] == 3
    assert "threshold" in captured.err
