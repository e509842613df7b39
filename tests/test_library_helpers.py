"""Library helpers that used to live in command modules: ``store.files`` (``ragbench index``),
``dal.watchers.watchers_for`` (``ragbench dal watch``) and ``eval.assistant.open_service`` (``ask`` / ``chat``)."""
from __future__ import annotations

from pathlib import Path

import pytest

from ragbench.config import RagbenchConfig, with_overrides
from ragbench.dal.watchers import FeedWatcher, FolderWatcher, UrlWatcher, is_feed_url, watchers_for
from ragbench.errors import ConfigError, DataError, PermissionDenied
from ragbench.schema import PUBLIC_ACL, Acl
from ragbench.store.files import collect_files, documents_from_files, title_of


def test_documents_from_files_walks_folders_sorted_and_titles_from_headings(tmp_path: Path):
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / "z.md").write_text("# Zeta policy #\nbody", encoding="utf-8")
    (tmp_path / "b" / "a.txt").write_text("plain text", encoding="utf-8")
    (tmp_path / "b" / "skip.pdf").write_bytes(b"%PDF")
    one = tmp_path / "one.markdown"
    one.write_text("intro\n  ## not level one\n# Real title\n", encoding="utf-8")
    acl = Acl.make(["hr"], [], "Internal")
    docs = documents_from_files([str(one), str(tmp_path / "b"), str(one)], acl)
    assert [d.doc_id for d in docs] == [one.as_posix(), (tmp_path / "b" / "a.txt").as_posix(),
                                        (tmp_path / "b" / "z.md").as_posix()]
    assert [d.title for d in docs] == ["Real title", "a", "Zeta policy"]
    assert all(d.acl == acl for d in docs)
    assert documents_from_files([str(one)])[0].acl == PUBLIC_ACL
    assert title_of(Path("x/notes.md"), "no heading") == "notes"


def test_front_matter_is_metadata_and_its_acl_is_the_documents(tmp_path: Path):
    from ragbench.store.files import split_front_matter

    assert split_front_matter("---\ntitle: Leave\ndate: 2025-04-01\n---\n\n# Leave\nBody") == (
        {"title": "Leave", "date": "2025-04-01"}, "# Leave\nBody")
    for text in ("Intro\n---\nkey: v\n---\n", "---\nA horizontal rule over prose.\n---\nmore", "---\n: [\n---\nx",
                 "---\nno end", "---\n---\nbody"):
        assert split_front_matter(text) == ({}, text)
    golden = tmp_path / "pay.md"
    golden.write_text("---\nid: pay\ntitle: \"Pay bands\"\nacl:\n  roles: [employee]\n  departments: [hr]\n"
                      "  classification: Confidential\n---\n# Pay bands 2025\n\nBand 3 pays £40,000.\n",
                      encoding="utf-8")
    plain = tmp_path / "plain.md"
    plain.write_text("---\ntags: [x]\n---\nNo acl here.\n", encoding="utf-8")
    pay, other = documents_from_files([str(golden), str(plain)], acl=None)
    assert (pay.title, pay.text, pay.acl) == ("Pay bands", "# Pay bands 2025\n\nBand 3 pays £40,000.\n",
                                              Acl.make(["employee"], ["hr"], "Confidential"))
    assert pay.metadata["front_matter"]["id"] == "pay" and "Confidential" not in pay.text
    assert (other.title, other.acl, other.text) == ("plain", PUBLIC_ACL, "No acl here.\n")
    given = Acl.make([], [], "Internal")
    assert {d.acl for d in documents_from_files([str(golden), str(plain)], given)} == {given}
    (tmp_path / "flat.md").write_text("---\nclassification: Confidential\nroles: hr\n---\nText.\n", encoding="utf-8")
    assert documents_from_files([str(tmp_path / "flat.md")], None)[0].acl == Acl.make(["hr"], [], "Confidential")
    # an acl without a classification is Internal (Acl.make's default), never Public
    (tmp_path / "roles.md").write_text("---\nacl: {roles: [hr]}\n---\nText.\n", encoding="utf-8")
    assert documents_from_files([str(tmp_path / "roles.md")], None)[0].acl == Acl.make(["hr"], [], "Internal")
    bad = tmp_path / "bad.md"
    for front, message in (("acl: public", r"bad\.md: front matter 'acl' must be a mapping"),
                           ("acl: {classification: Secret}", r"bad\.md: front matter acl: unknown classification"),
                           ("acl: {roles: [1, 2]}", r"bad\.md: front matter acl\.roles must be a list of names")):
        bad.write_text(f"---\n{front}\n---\nText.\n", encoding="utf-8")
        with pytest.raises(DataError, match=message):
            documents_from_files([str(bad)], None)
    bad.write_text("---\ntitle: Empty\n---\n\n", encoding="utf-8")
    with pytest.raises(DataError, match=r"bad\.md: the file has front matter but no text after it"):
        documents_from_files([str(bad)], None)


def test_collect_files_names_the_bad_path(tmp_path: Path):
    pdf = tmp_path / "x.pdf"
    pdf.write_bytes(b"%PDF")
    with pytest.raises(DataError, match=r"x\.pdf: unsupported file type '\.pdf'"):
        collect_files([str(pdf)])
    with pytest.raises(DataError, match="missing.md does not exist"):
        collect_files([str(tmp_path / "missing.md")])
    with pytest.raises(DataError, match="no text or markdown files found"):
        collect_files([str(tmp_path)])


def test_watchers_for_sorts_sources_into_folder_feed_and_page_watchers(tmp_path: Path):
    urls = ["https://a.example/news/feed", "https://b.example/page.html", "https://c.example/x.rss",
            "https://d.example/about", "https://e.example/listing"]
    watchers = watchers_for([str(tmp_path), *urls[:4]], [urls[4]], RagbenchConfig())
    assert [type(w) for w in watchers] == [FolderWatcher, FeedWatcher, FeedWatcher, FeedWatcher, UrlWatcher]
    assert [w.url for w in watchers if isinstance(w, FeedWatcher)] == [urls[0], urls[2], urls[4]]
    pages = watchers[-1]
    assert isinstance(pages, UrlWatcher) and pages.urls == [urls[1], urls[3]]
    assert is_feed_url("https://x.example/about?feed=1") is False and is_feed_url("https://x.example/RSS") is True
    with pytest.raises(ConfigError, match="neither a folder nor an http"):
        watchers_for(["ftp://x.example/"], [], RagbenchConfig())


def test_open_service_indexes_the_golden_corpus_once_into_the_default_store(tmp_path: Path, monkeypatch):
    from ragbench.eval.assistant import default_store, open_service
    from ragbench.eval.golden import DEFAULT_FOLDER, load_golden

    monkeypatch.chdir(tmp_path)
    cfg = with_overrides(RagbenchConfig(), {"embedding.model": "hashing", "embedding.cache": False})
    with pytest.raises(PermissionDenied, match="mallory"):
        open_service(cfg, "mallory", mode="bm25")
    assert not (tmp_path / ".ragbench").exists()  # an unknown principal fails before any indexing
    service, who, used = open_service(cfg, "eval-staff", mode="bm25", tenant="t1")
    try:
        assert who.user_id == "eval-staff" and used.answer.chat_model == "extractive"
        golden = load_golden(DEFAULT_FOLDER)
        assert Path(service.store.path).resolve() == (tmp_path / default_store(golden.data_hash, used)).resolve()
        assert Path(service.store.path).name.startswith("golden-answers-")
        answer = service.answer("How many days of annual leave do full-time employees get?", who)
        assert answer.refused is False and "25 days" in answer.answer
    finally:
        service.store.close()


def test_open_service_keys_the_default_store_by_folder_and_settings_and_refuses_an_empty_store(tmp_path: Path,
                                                                                           monkeypatch):
    from ragbench.eval.assistant import default_store, open_service

    monkeypatch.chdir(tmp_path)
    cfg = with_overrides(RagbenchConfig(), {"embedding.model": "hashing", "embedding.cache": False})
    a = default_store("hash-a", cfg)
    assert a == default_store("hash-a", cfg) and a.parent == Path(".ragbench")
    assert a != default_store("hash-b", cfg)  # another golden folder
    assert a != default_store("hash-a", with_overrides(cfg, {"chunking.max_chars": 300}))  # another index setting
    assert a == default_store("hash-a", with_overrides(cfg, {"answer.top_k": 3}))  # answer settings do not matter
    with pytest.raises(DataError, match="does not exist"):
        open_service(cfg, "eval-staff", mode="bm25", store=str(tmp_path / "missing.db"))
    from ragbench.store import KnowledgeStore

    KnowledgeStore.open(tmp_path / "empty.db").close()
    with pytest.raises(DataError, match="holds no documents"):
        open_service(cfg, "eval-staff", mode="bm25", store=str(tmp_path / "empty.db"))
