import json

import pytest

from ragbench.cli import main
from ragbench.dal.session import site_rewrite
from ragbench.dal.testweb import GRAPHQL_QUESTION
from ragbench.errors import ConfigError


def test_research_command_json_and_outputs(web, tmp_path, capsys, mlflow_installed):
    out = tmp_path / "out"
    code = main(["research", GRAPHQL_QUESTION, "--search-url", web.search_url, "--url-rewrite", "--as-of", "2025-06-01",
                 "--embedder", "hashing", "--out", str(out), "--json", "--config", str(_fast_config(tmp_path))])
    assert code == 0
    captured = capsys.readouterr()
    assert len(captured.out.splitlines()) == 1  # --json: one line on stdout; the report went to stderr
    last = json.loads(captured.out)
    assert list(last) == ["passes_completed", "sources_used", "is_complete", "sub_topics", "gaps", "unresolvable",
                          "answer", "mlflow_run_id"]
    assert bool(last["mlflow_run_id"]) == mlflow_installed
    # The default extractive reader answers from the sources (it used to refuse always), citing them per sentence.
    answer = last["answer"]
    assert answer["refused"] is False and answer["sources"] and answer["sentences"]
    assert answer["decided_by"] == "check:coverage"  # the route the answer passed the answerability check by
    assert all(s["source_url"] in answer["sources"] and s["claims"] and s["sub_topics"] for s in answer["sentences"])
    assert last["passes_completed"] == 2 and last["is_complete"] is True and len(last["sub_topics"]) == 5
    assert all(list(s) == ["topic", "confidence", "sources"] for s in last["sub_topics"])
    assert f'\nquery: "{GRAPHQL_QUESTION}"\n' in captured.err
    assert sorted(p.name for p in out.iterdir()) == ["answer.json", "answer.txt", "entries.json", "prompt.txt",
                                                     "report.json", "report.txt", "report.yaml"]
    assert json.loads((out / "answer.json").read_text()) == answer
    assert json.loads((out / "report.json").read_text())["sources_used"] == last["sources_used"]
    assert len(json.loads((out / "entries.json").read_text())) == last["sources_used"]
    assert (out / "prompt.txt").read_text().startswith(f"TASK: {GRAPHQL_QUESTION}")


def _fast_config(tmp_path):
    p = tmp_path / "fast.yaml"
    p.write_text("dal:\n  request_delay: 0\n  retries: 1\n  backoff: 0.01\nembedding:\n  cache: false\n")
    return p


def test_dal_watch_once(tmp_path, capsys):
    folder = tmp_path / "docs"
    folder.mkdir()
    for i in range(3):
        (folder / f"{i}.md").write_text(f"Document {i} text.")
    args = ["dal", "watch", str(folder), "--store", str(tmp_path / "s.db"), "--once", "--embedder", "hashing",
            "--json"]
    assert main(args) == 0
    assert main(args) == 0
    first, second = (json.loads(x) for x in capsys.readouterr().out.strip().splitlines())
    assert (first["added"], first["reprocessed"]) == (3, 3)
    assert (second["unchanged"], second["reprocessed"]) == (3, 0)


def test_dal_watch_rejects_unknown_source(tmp_path, capsys):
    assert main(["dal", "watch", str(tmp_path / "missing"), "--store", str(tmp_path / "s.db"), "--once"]) == 2
    assert "neither a folder nor an http(s) URL" in capsys.readouterr().err


def test_site_rewrite_is_explicit():
    assert site_rewrite("http://127.0.0.1:8765/html/") == "http://127.0.0.1:8765/site/{host}{path}"
    assert site_rewrite("https://search.example.org/html/") == "https://search.example.org/site/{host}{path}"
    with pytest.raises(ConfigError, match="--url-rewrite without a template"):
        site_rewrite("not a url")


def test_dal_watch_failing_source_exits_1(tmp_path, capsys):
    """Fault 9 (issue 13): an unreachable feed was reported but the command exited 0."""
    import socket

    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    sock.close()  # nothing listens on this port any more
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "a.md").write_text("A note that is fine.")
    args = ["dal", "watch", str(folder), f"http://127.0.0.1:{port}/feed.xml", "--store", str(tmp_path / "s.db"),
            "--once", "--embedder", "hashing", "--config", str(_fast_config(tmp_path)), "--json"]
    assert main(args) == 1
    line = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert line["added"] == 1 and [(e["source"], e["stage"], e["kind"]) for e in line["errors"]] == [
        (f"http://127.0.0.1:{port}/feed.xml", "feed", "NetworkError")]
    assert main(args[:3] + args[4:]) == 0  # the folder alone: no failure
