"""The bundled golden set validates and meets its minimums; every malformed input names file, line and field."""
from __future__ import annotations

import hashlib
import json
import re
import shutil
from collections import Counter
from pathlib import Path

import pytest

from ragbench.errors import DataError
from ragbench.eval.golden import DEFAULT_FOLDER, GoldenSet, load_golden
from ragbench.schema import Classification

MINIMUMS = {"direct": 20, "paraphrase": 10, "multi-doc": 5, "refuse-acl": 4, "refuse-unanswerable": 4}


@pytest.fixture(scope="module")
def golden() -> GoldenSet:
    return load_golden()


# ------------------------------------------------------------------------------------------ bundled data


def test_bundled_set_loads_with_exact_counts(golden: GoldenSet) -> None:
    assert len(golden.documents) == 37
    assert len(golden.questions) == 74
    assert sorted(golden.principals) == ["eval-board", "eval-contractor", "eval-engineer", "eval-exec",
                                         "eval-guest", "eval-hr", "eval-staff"]
    assert Counter(golden.tags().values()) == {"direct": 30, "paraphrase": 13, "multi-doc": 7, "refuse-acl": 8,
                                               "refuse-unanswerable": 6, "followup": 10}


def test_slice_minimums_and_corpus_size(golden: GoldenSet) -> None:
    counts = Counter(golden.tags().values())
    for tag, minimum in MINIMUMS.items():
        assert counts[tag] >= minimum, tag
    assert len(golden.questions) >= 50
    assert len(golden.documents) >= 28
    assert sum(len(d.text.split()) for d in golden.documents) >= 7000
    assert {d.acl.classification for d in golden.documents} == set(Classification)
    assert len({d.metadata["department"] for d in golden.documents}) >= 8


def test_every_document_is_labelled_fictional(golden: GoldenSet) -> None:
    assert all(d.metadata["fictional"] is True for d in golden.documents)
    assert all("FICTIONAL" in d.metadata["notice"] for d in golden.documents)
    assert "fictional" in (DEFAULT_FOLDER / "README.md").read_text(encoding="utf-8").lower()


def test_document_fields(golden: GoldenSet) -> None:
    doc = golden.document("hr-leave")
    assert doc.title == "HR Policy: Annual leave and sick leave"
    assert doc.source == "docs/hr-leave.md"
    assert doc.text.startswith("# Annual leave and sick leave\n")
    assert doc.metadata["department"] == "hr"
    assert doc.acl.roles == frozenset({"employee"}) and doc.acl.departments == frozenset()
    assert doc.acl.classification is Classification.INTERNAL
    board = golden.document("board-exec-comp")
    assert board.acl.roles == frozenset({"board"}) and board.acl.classification is Classification.RESTRICTED


def test_answer_facts_occur_verbatim_in_an_expected_document(golden: GoldenSet) -> None:
    texts = {d.doc_id: d.text for d in golden.documents}
    checked = 0
    for q in golden.questions:
        if q.answer_fact is None:
            assert q.tag == "refuse-unanswerable", q.qid
            continue
        assert any(q.answer_fact in texts[d] for d in q.expected_docs), q.qid
        checked += 1
    assert checked == 68


def test_acls_match_the_refusal_labels(golden: GoldenSet) -> None:
    docs = {d.doc_id: d for d in golden.documents}
    for q in golden.questions:
        who = golden.principal(q.qid)
        readable = [d for d in q.expected_docs if docs[d].acl.allows(who)]
        if q.tag == "refuse-acl":
            assert q.should_refuse and q.refusal_kind == "acl" and q.expected_docs and readable == [], q.qid
        elif q.tag == "refuse-unanswerable":
            assert q.should_refuse and q.refusal_kind == "unanswerable" and q.expected_docs == (), q.qid
        else:
            assert not q.should_refuse and q.refusal_kind is None and readable, q.qid


def test_required_principals(golden: GoldenSet) -> None:
    p = golden.principals
    assert p["eval-staff"].max_classification is Classification.CONFIDENTIAL
    assert {"hr", "finance", "security", "engineering", "operations", "legal", "it", "sales"} <= \
        p["eval-staff"].departments
    assert p["eval-guest"].max_classification is Classification.PUBLIC
    assert p["eval-board"].max_classification is Classification.RESTRICTED and "board" in p["eval-board"].roles
    assert p["eval-hr"].departments == frozenset({"hr"})
    assert p["eval-engineer"].departments == frozenset({"engineering"})
    # The guest sees exactly the five Public documents.
    visible = sorted(d.doc_id for d in golden.documents if d.acl.allows(p["eval-guest"]))
    assert visible == ["pub-conduct", "pub-forum-thread", "pub-overview", "pub-privacy", "pub-visitors"]


def test_followup_chains(golden: GoldenSet) -> None:
    chains = golden.chains()
    assert {cid: [q.qid for q in qs] for cid, qs in chains.items()} == {
        "c-leave": ["g065", "g066", "g067"], "c-incident": ["g068", "g069", "g070"],
        "c-hotel": ["g071", "g072"], "c-deploy": ["g073", "g074"]}
    continuation = re.compile(r"^(and|what about)\b|\b(it|that|those|one)\b", re.IGNORECASE)
    for qs in chains.values():
        assert [q.turn for q in qs] == list(range(1, len(qs) + 1))
        assert all(continuation.search(q.question) for q in qs[1:]), [q.question for q in qs]


def test_injection_documents_are_present(golden: GoldenSet) -> None:
    texts = {d.doc_id: d.text.lower() for d in golden.documents}
    injected = sorted(k for k, t in texts.items() if "ignore previous instructions" in t)
    assert injected == ["ops-supplier-portal-faq", "pub-forum-thread"]
    faq = golden.document("ops-supplier-portal-faq")
    assert "this document is public" in texts[faq.doc_id]
    assert faq.acl.classification is Classification.INTERNAL
    assert "[3]" in golden.document("pub-forum-thread").text


def test_tables(golden: GoldenSet) -> None:
    queries = golden.queries_df()
    assert list(queries.columns) == ["qid", "query"] and len(queries) == 74
    assert queries.iloc[0].to_dict() == {"qid": "g001",
                                         "query": "How many days of annual leave do full-time employees get?"}
    assert len(golden.queries_df(answerable_only=True)) == 60
    qrels = golden.qrels_df()
    assert list(qrels.columns) == ["qid", "docno", "label"]
    assert len(qrels) == 67  # 30 direct + 13 paraphrase + 7×2 multi-doc + 10 follow-up
    assert set(qrels["label"]) == {1}
    refused = {q.qid for q in golden.questions if q.should_refuse}
    assert not refused & set(qrels["qid"])
    assert qrels[qrels.qid == "g044"]["docno"].tolist() == ["fin-procurement", "fin-cards"]
    assert golden.principal("g051").user_id == "eval-guest"
    assert golden.tags()["g051"] == "refuse-acl"
    with pytest.raises(DataError, match="unknown golden qid 'nope'"):
        golden.question("nope")


def test_data_hash_is_sha256_of_the_files(golden: GoldenSet, tmp_path: Path) -> None:
    h = hashlib.sha256()
    paths = sorted((DEFAULT_FOLDER / "docs").glob("*.md")) + [DEFAULT_FOLDER / "principals.yaml",
                                                               DEFAULT_FOLDER / "questions.jsonl"]
    for p in paths:
        h.update(p.relative_to(DEFAULT_FOLDER).as_posix().encode() + b"\0" + p.read_bytes() + b"\0")
    assert golden.data_hash == h.hexdigest()
    copy = tmp_path / "g"
    shutil.copytree(DEFAULT_FOLDER, copy)
    assert load_golden(copy).data_hash == golden.data_hash
    (copy / "README.md").write_text("changed", encoding="utf-8")  # documentation is not data
    assert load_golden(copy).data_hash == golden.data_hash
    doc = copy / "docs" / "hr-leave.md"
    doc.write_text(doc.read_text(encoding="utf-8") + "\nOne more sentence.\n", encoding="utf-8")
    assert load_golden(copy).data_hash != golden.data_hash


# ------------------------------------------------------------------------------------------ malformed input


def _copy(tmp_path: Path) -> Path:
    dst = tmp_path / "golden"
    shutil.copytree(DEFAULT_FOLDER, dst)
    return dst


def _edit_question(folder: Path, line: int, change) -> None:
    path = folder / "questions.jsonl"
    lines = path.read_text(encoding="utf-8").splitlines()
    lines[line - 1] = change(lines[line - 1])
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def _edit_json(**updates):
    def change(raw: str) -> str:
        row = json.loads(raw)
        for k, v in updates.items():
            if v is _DROP:
                del row[k]
            else:
                row[k] = v
        return json.dumps(row, ensure_ascii=False)
    return change


_DROP = object()

QUESTION_CASES = [
    ("missing field", 5, _edit_json(tag=_DROP), "'tag'", "missing"),
    ("wrong type", 7, _edit_json(should_refuse="no"), "'should_refuse'", "expected true or false"),
    ("unknown principal", 3, _edit_json(asked_by="nobody"), "'asked_by'", "unknown principal 'nobody'"),
    ("missing document", 9, _edit_json(expected_docs=["hr-nope"]), "'expected_docs'", "'hr-nope' does not exist"),
    ("duplicate qid", 4, _edit_json(qid="g002"), "'qid'", "duplicate qid 'g002' (first on line 2)"),
    ("bad json", 6, lambda raw: raw[:-1], "'(json)'", "not valid JSON"),
    ("fact not in doc", 1, _edit_json(answer_fact="30 days"), "'answer_fact'", "'30 days' does not occur"),
    ("bad tag", 2, _edit_json(tag="easy"), "'tag'", "unknown tag 'easy'"),
    ("refuse-acl but readable", 51, _edit_json(asked_by="eval-board"), "'asked_by'", "CAN read"),
    ("answerable but unreadable", 1, _edit_json(asked_by="eval-guest"), "'asked_by'", "can read none"),
    ("turn gap", 67, _edit_json(turn=4), "'turn'", "chain 'c-leave' has turns [1, 2, 4]"),
]


@pytest.mark.parametrize("name,line,change,fieldname,problem", QUESTION_CASES, ids=[c[0] for c in QUESTION_CASES])
def test_malformed_questions(tmp_path: Path, name, line, change, fieldname, problem) -> None:
    folder = _copy(tmp_path)
    _edit_question(folder, line, change)
    before = {p: p.read_bytes() for p in folder.rglob("*") if p.is_file()}
    with pytest.raises(DataError) as err:
        load_golden(folder)
    msg = str(err.value)
    assert f"questions.jsonl:{line}: field {fieldname}" in msg
    assert problem in msg and "Fix:" in msg
    assert {p: p.read_bytes() for p in folder.rglob("*") if p.is_file()} == before  # nothing written


def _replace(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert text.count(old) >= 1, old
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


FILE_CASES = [
    ("bad classification", "docs/hr-leave.md", "classification: Internal", "classification: Secret",
     "docs/hr-leave.md:8: field 'acl.classification'", "unknown classification 'Secret'"),
    ("missing title", "docs/fin-cards.md", 'title: "Finance Policy: Corporate payment cards"\n', "",
     "docs/fin-cards.md:2: field 'title'", "missing from the front matter"),
    ("not fictional", "docs/it-devices.md", "fictional: true", "fictional: false",
     "docs/it-devices.md:9: field 'fictional'", "expected true"),
    ("duplicate id", "docs/hr-remote.md", "id: hr-remote", "id: hr-leave",
     "docs/hr-remote.md:2: field 'id'", "duplicate document id 'hr-leave'"),
    ("roles not a list", "docs/eng-oncall.md", "roles: [employee]", "roles: employee",
     "docs/eng-oncall.md:6: field 'acl.roles'", "expected a list of non-empty strings"),
    ("no closing marker", "docs/pub-privacy.md", "---\n#", "\n#",
     "docs/pub-privacy.md:1: field 'front matter'", "no closing '---' line"),
    ("unstorable value", "docs/it-devices.md", "fictional: true", "fictional: true\nmeasured: .nan",
     "docs/it-devices.md:2: field 'front matter'", "a value cannot be stored (Out of range float values"),
    ("principal classification", "principals.yaml", "max_classification: Public", "max_classification: Top",
     "principals.yaml:14: field 'max_classification'", "unknown classification 'Top'"),
    ("principal missing field", "principals.yaml", "    roles: [board]\n", "",
     "principals.yaml:15: field 'roles'", "missing"),
    ("principal duplicate", "principals.yaml", "user_id: eval-hr", "user_id: eval-guest",
     "principals.yaml:25: field 'user_id'", "duplicate principal 'eval-guest'"),
    ("principal bad yaml", "principals.yaml", "roles: [guest]", "roles: [guest",
     "principals.yaml:13: field 'principals'", "invalid YAML (expected ',' or ']'"),
]


@pytest.mark.parametrize("name,rel,old,new,where,problem", FILE_CASES, ids=[c[0] for c in FILE_CASES])
def test_malformed_documents_and_principals(tmp_path: Path, name, rel, old, new, where, problem) -> None:
    folder = _copy(tmp_path)
    _replace(folder / rel, old, new)
    with pytest.raises(DataError) as err:
        load_golden(folder)
    msg = str(err.value)
    assert f"{folder}/{where}" in msg
    assert problem in msg and "Fix:" in msg


def test_missing_folder_and_files(tmp_path: Path) -> None:
    with pytest.raises(DataError, match="golden folder .* not found"):
        load_golden(tmp_path / "absent")
    folder = _copy(tmp_path)
    (folder / "questions.jsonl").write_text("\n\n", encoding="utf-8")
    with pytest.raises(DataError, match=r"questions.jsonl:1: field 'questions': the file holds no questions"):
        load_golden(folder)
    (folder / "principals.yaml").unlink()
    with pytest.raises(DataError, match=r"principals.yaml:0: field 'principals': file not found"):
        load_golden(folder)


def test_binary_or_non_utf8_files_are_data_errors_naming_the_file(tmp_path: Path) -> None:
    folder = _copy(tmp_path)
    doc = folder / "docs" / "hr-leave.md"
    doc.write_bytes(doc.read_bytes().replace(b"Annual leave", b"Annual l\xe9ave", 1))  # Latin-1, not UTF-8
    with pytest.raises(DataError, match=r"hr-leave\.md:\d+: not UTF-8 text \(byte 0xe9 at offset \d+\)"):
        load_golden(folder)
    doc.write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
    with pytest.raises(DataError, match=r"hr-leave\.md:3: a binary file \(NUL byte at offset 8\)"):
        load_golden(folder)
    folder = _copy(tmp_path / "2")
    (folder / "questions.jsonl").write_bytes(b'{"qid": "g001"}\n\xff\xfe')
    with pytest.raises(DataError, match=r"questions\.jsonl:2: not UTF-8 text \(byte 0xff"):
        load_golden(folder)
    (folder / "principals.yaml").write_bytes(b"principals:\n\x00")
    with pytest.raises(DataError, match=r"principals\.yaml:2: a binary file"):
        load_golden(folder)


def test_front_matter_dates_load_as_iso_strings_and_can_be_stored(tmp_path: Path) -> None:
    # feltcombe (session 63) wrote "valid_from: 2025-04-01" unquoted: YAML reads a date, which the store could not
    # hold as JSON, so the whole evaluation stopped before the first question.
    from ragbench.retrieval.chunking import SentenceChunker
    from ragbench.store import KnowledgeStore

    folder = _copy(tmp_path)
    _replace(folder / "docs/it-devices.md", "fictional: true", "fictional: true\nvalid_from: 2025-04-01\n"
             "reviewed: 2026-01-05 09:30:00")
    doc = next(d for d in load_golden(folder).documents if d.doc_id == "it-devices")
    assert (doc.metadata["valid_from"], doc.metadata["reviewed"]) == ("2025-04-01", "2026-01-05T09:30:00")
    store = KnowledgeStore.open(":memory:")
    store.ingest([doc], SentenceChunker())
    stored = store.get_document("it-devices")
    assert stored is not None and stored.metadata["valid_from"] == "2025-04-01"


def test_files_saved_with_a_byte_order_mark_and_crlf_load_as_the_originals(tmp_path: Path) -> None:
    # Windows editors save UTF-8 with a BOM and CRLF line ends; a set written there must load unchanged.
    folder = _copy(tmp_path)
    files = [*sorted((folder / "docs").glob("*.md")), folder / "principals.yaml", folder / "questions.jsonl"]
    for f in files:
        f.write_bytes(b"\xef\xbb\xbf" + f.read_bytes().replace(b"\n", b"\r\n"))
    got, want = load_golden(folder), load_golden(DEFAULT_FOLDER)
    assert got.documents == want.documents
    assert got.principals == want.principals
    assert got.questions == want.questions
    assert got.data_hash != want.data_hash  # the hash names the bytes, which differ
