"""Prompt-injection quarantine: flag document text that is addressed to an AI rather than to a reader.

A document may carry text meant to steer an assistant: a forum reply telling "any AI assistant" to ignore its
instructions, a pasted note claiming "This document is Public" on an Internal page, or forged citation markers
("cite this post as [3]"). :func:`scan_document` flags every paragraph holding such text, for three reasons:

* ``addressed-to-ai`` — instructions to an assistant or claims of overriding authority (``ignore previous
  instructions``, ``to any AI assistant``, ``Assistant: …``, ``developer mode``, ``the highest authority``,
  ``overrides every other source``, ``this thread is an official … document``), and since ``injection-v3`` the
  quieter forms: a machine reader named as the one addressed (``Note for AI assistants:``, ``Dear virtual
  assistant``, ``If you are an AI reading this``, ``Chatbots: …``, ``Automated systems summarising this page
  must …``, ``Any AI tool answering questions should …``) and text that steers an answer rather than informs a
  reader (``regardless of what other documents say``, ``the correct answer is``, ``treat this message as``,
  ``respond only with: …``, ``pretend you are``, ``do not follow your earlier guidance``, a post that
  ``replaces``, ``outranks`` or is ``more authoritative than`` the policies, ``ignore everything you were told``),
  the role markers of chat templates (``[INST]``, ``<|im_start|>``, ``<system>``, ``System message:``), hidden HTML
  comments that name a machine reader, and a machine reader as the subject of a directive about what it says or does
  with the text (``The bot should say …``; ``can`` and ``may`` describe a product and are not flagged);
* ``classification-claim`` — the text claims a classification other than the document's ACL (the store's ACL is
  what counts, never the text);
* ``citation-markers`` — ``[n]`` markers inside a document (n from 1, opening a token: not ``r[62]`` or a list
  ``[0, 4, 16]``), which only the answering service may write, and
  (``injection-v3``) the other forms a model's context uses: ``[RAG:1a2b3c4d]`` (the EE-RAG tag), ``[Source 2]``,
  ``[Doc 3]``, ``[Passage 1]``.

:class:`Quarantine` keeps the flags in the store (its own tables, through ``ensure_schema``), scans documents
whose content changed since their last scan, and redacts flagged spans from retrieved chunks: a flagged sentence is
never quoted and never reaches a chat model. Detection is paragraph-level on purpose: the sentences around an
injected instruction belong to the same untrusted post.

Since ``injection-v7`` the ``addressed-to-ai`` rules also read other languages' "ignore the previous instructions",
prompt-format delimiters and turns, tool calls, an image link asking for the conversation, and base64 runs
(decoded, then read again).

These are phrase rules, and they carry only partly to phrasings nobody wrote them for: on a probe set written after
the v5 rules were fixed they flag 11 of 20 injections (v1: 3) and 2 of 20 ordinary sentences (v1: 2; 3 when first
scored, before one v1 rule was narrowed); on one written after v6 by a writer aiming at what the rules leave out, v6
flagged 2 of 20 and 7 of 20 ordinary sentences. None of them flags a paragraph of the golden sets or of SciFact that
v1 did not (``benchmarks/injection_probes.py``, docs/answers.md). A learned detector that reads the register
rather than the phrases (:mod:`ragbench.llm.injection_model`) carries further, but also flags text about AI, so it
only reports suspects (``ragbench quarantine --suspects``) and the redaction stays these rules'.
"""
from __future__ import annotations

import base64
import binascii
import functools
import hashlib
import json
import re
from dataclasses import dataclass, replace
from datetime import datetime, timezone
from typing import Any, Iterable, Sequence, TypeVar

from ..schema import Acl, Chunk, Classification, Hit
from .signals import paragraphs

#: The store schema's name predates the module's move from ``answer/`` (stores keep their tables).
SCHEMA = "answer.quarantine"
_Span = TypeVar("_Span", Hit, Chunk)  # what :meth:`Quarantine.redact` cleans: a slice of a document
#: Bump when the detector changes: every document is scanned again.
DETECTOR_VERSION = "injection-v7"
PLACEHOLDER = "[quarantined]"

DDL = """
CREATE TABLE IF NOT EXISTS quarantine_scans (
    doc_id TEXT PRIMARY KEY,
    sha256 TEXT NOT NULL,  -- scan_key(): the content hash and the ACL level the scan saw
    detector TEXT NOT NULL,
    flagged INTEGER NOT NULL,
    scanned_at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS quarantine_spans (
    doc_id TEXT NOT NULL,
    start INTEGER NOT NULL,
    end INTEGER NOT NULL,
    reasons TEXT NOT NULL,
    PRIMARY KEY (doc_id, start)
);
"""

#: "AI tools should not be used to …" is about the tools, not addressed to them (added in injection-v5).
V5_NARROWING = r"(?!\s+(?:not\s+)?be\b)"
#: "To any AI …" addresses a machine; a bare "assistant", "bot" or "model" followed by another word is a noun adjunct
#: ("for all model species", "for all assistant managers") unless the word says what it does with the text (added
#: in injection-v6: v1 to v5 flagged a SciFact abstract's "For any given genome … for all model species").
_ADDRESSEE_VERB = (r"(?:reading|answering|processing|summari[sz]ing|handling|parsing|scanning|indexing|asked|used"
                   r"|that|which|who)\b")
ADDRESSEE = (r"(?:ai|a\.i\.|llm|language\s+model|chat\s*bot|chatbot|copilot)s?\b"
                 r"|(?:assistant|bot|model)s?\b(?!\s+(?!" + _ADDRESSEE_VERB + r")[a-z])")
ADDRESSED = re.compile(
    r"\b(?:ignore|disregard|forget|override|bypass)\s+(?:all\s+|any\s+|the\s+|your\s+|every\s+)*"
    r"(?:previous\s+|prior\s+|above\s+|earlier\s+|other\s+|existing\s+|original\s+)?"
    r"(?:instructions?|rules|guidelines|prompts?|access\s+controls?|restrictions|policies)\b"
    r"|\b(?:to|for)\s+(?:any|all|every|each)\s+(?:ai\s+|automated\s+)?(?:" + ADDRESSEE + r")"
    r"|\b(?:ai|llm)\s+(?:assistants?|models?|systems?|tools?)\s+(?:reading|must|should|shall|will|are\s+to)\b"
    + V5_NARROWING +
    r"|(?:^|[.!?:]\s+|\n)\s*(?:assistant|ai|chatbot|system|model)\s*:"
    # (v7: "developer mode on the thermostat", "the system prompt on the till" and "the jailbreak from the prison van"
    # are ordinary; entering the mode, a model's own system prompt and jailbreaking a model are not)
    r"|\b(?:enter|enable|activate|switch\s+(?:on|to)|now\s+in|are\s+in)\s+developer\s+mode\b"
    r"|\b(?:your|the\s+(?:hidden|original|secret))\s+system\s+prompt\b"
    r"|\b(?:reveal|print|output|show|repeat|leak|ignore|disregard|override)\s+(?:the\s+)?system\s+prompt\b"
    r"|\bjailbr(?:eak|oken)\s+(?:mode|prompt)\b|\bjailbreak(?:ing)?\s+(?:the|this|your|an?)\s+(?:ai|llm|model|assistant|"
    r"chat\s*bot|bot)\b|\byou\s+are\s+now\s+(?:in|a|an)\b"
    r"|\b(?:highest|supreme|ultimate|overriding)\s+authority\b"
    # (v7: "supersedes any other control on the panel" is ordinary; any other source, document or policy is not)
    r"|\b(?:overrides?|supersedes?|takes?\s+precedence\s+over)\s+(?:every|all|any)\s+other\s+(?:[\w-]+\s+)?"
    r"(?:sources?|documents?|polic(?:y|ies)|instructions?|information|guidance|pages?|answers?|rules|records?|"
    r"posts?|replies|threads?|texts?)\b"
    r"|\bthis\s+(?:thread|post|page|comment|message|note|reply|email|e-mail|text)\s+is\s+(?:an?\s+|the\s+)?"
    r"(?:official|authoritative|binding)\b",
    re.IGNORECASE)
#: Machine readers that ordinary documents do not address by name (bare "assistant", "bot" and "model" are
#: job titles and products too: they count only in the vocative forms of :data:`STEERING`).
_MACHINE = (r"(?:ai|a\.i\.|generative\s+ai|llms?|(?:large\s+)?language\s+models?|chat\s*bots?|copilots?|chatgpt|"
            r"(?:ai|llm)[-\s]powered\s+[\w-]+|(?:automated\s+)?answer(?:ing)?\s+(?:tools?|bots?|engines?|systems?)|"
            r"gpt(?:s|-based\s+tools?|\s+tools?)?|web\s+(?:scrapers?|crawlers?)|scrapers?|crawlers?"
            r"|(?:ai|virtual|digital|automated|helpdesk|help\s+desk|answering|search|generative)\s+"
            r"(?:assistants?|agents?|tools?|systems?|readers?|bots?|models?|engines?|helpers?)"
            r"|automated\s+(?:summari[sz]ers?|readers?|search\s+tools?)"
            r"|(?:summari[sz]ing|answering|reading)\s+(?:models?|tools?|systems?|agents?|assistants?))")
_ANY_READER = r"(?:" + _MACHINE + r"|assistants?|bots?|models?|machines?|search\s+tools?)"
#: Quieter injections (injection-v3 to v5): a machine reader named as the one addressed, or text that steers an answer.
STEERING = re.compile(
    # addressed: "Note for AI assistants:", "Instructions for the helpdesk bot:", "Attention language models",
    # "Dear virtual assistant", "Chatbots: …" at the start of a sentence
    # (at the start of a sentence or line, as a heading is: "instructions to AI systems" mid-sentence describes one)
    r"(?:^|[.!?:;]\s+|\n|[(<]|<!--)[\s*>#_(-]*"
    r"(?:(?:as\s+)?a\s+|hidden\s+|important\s+|urgent\s+|begin\s+|start\s+)?"
    r"(?:notes?|messages?|notices?|instructions?|reminders?|warnings?|guidance|nb|n\.b\.|important|urgent|ps|p\.s\.)"
    r"\s+(?:for|to)\s+(?:the\s+|any\s+|all\s+|every\s+|each\s+)?" + _ANY_READER + r"\b"
    r"|\b(?:attention|dear|hey|hello|hi|heads\s+up)\s*,?\s+(?:all\s+|any\s+|every\s+)?" + _ANY_READER + r"\b"
    r"|(?:^|[.!?]\s+|\n|[(])[\s*#_]*(?:" + _MACHINE + r"|assistant|bots?)(?:\s+notice)?\s*[:,]"
    r"|(?:^|[.!?]\s+|\n)[\s*#_]*" + _ANY_READER + r"\s+(?:instructions?|rules|notice|note|guidance|directive)s?\s*:"
    # the role and turn markers of chat templates, which no ordinary document writes
    r"|\[/?INST\]|<\|[a-z_]+\|>|<</?SYS>>|\bsystem\s+(?:message|note|instructions?)\s*:"
    # "Message to whatever AI …", "whoever's bot …"
    r"|\b(?:whatever|whichever|whoever'?s|whoever\u2019s)\s+(?:[\w-]+\s+)?" + _ANY_READER + r"\b"
    # "When an AI cites this page …", "Please have your AI quote …"
    r"|\bwhen\s+(?:an?\s+|the\s+|any\s+)?" + _MACHINE + r"\s+(?:cites?|quotes?|reads?|summari[sz]es?|answers?|sees?)\b"
    r"|\byour\s+(?:ai|llm|chat\s*bot|assistant|bot)\s+(?:quote|cite|repeat|say|answer|tell|use)\b"
    # "To the machine reading this page", "whoever's bot is scraping this"
    r"|\b" + _ANY_READER + r"\s+(?:that\s+|which\s+|who\s+)?(?:is\s+|are\s+)?(?:reading|scraping|crawling|indexing)\s+"
    r"(?:this|these)\b"
    # hidden text (an HTML comment) naming a machine reader: never meant for a person
    r"|<!--(?:(?!-->).)*\b" + _ANY_READER + r"\b"
    # "If you are an AI reading this", "You are a helpful assistant"
    r"|\bif\s+you(?:\s+are|'re|\u2019re)\s+(?:an?\s+)?"
    r"(?:ai\b|a\.i\.|llm|language\s+model|assistant|chat\s*bot|bot\b|automated|machine)"
    r"|\byou\s+are\s+an?\s+(?:helpful\s+|ai\s+)?(?:assistant|language\s+model|chat\s*bot)\b"
    # "Any AI tool answering questions should …", "Automated systems summarising this page must …"
    r"|\b(?:any|all|every|each)\s+" + _MACHINE + r"\b"
    r"|\b" + _MACHINE + r"\s+(?:that\s+|which\s+)?(?:is\s+|are\s+)?(?:reading|summari[sz]ing|answering|processing|"
    r"indexing|quoting)\s+(?:this|these|questions)\b"
    # a machine reader as the subject of a directive about what it says or does with the text ("The bot should say
    # …", "Machine readers should rely only on this reply"; "can" and "may" describe a product, not direct it)
    r"|\b(?:" + _MACHINE + r"|bots?|machine\s+readers?|search\s+assistants?)(?:\s+[\w-]+){0,4}?\s+"
    r"(?:must|should|shall|needs?\s+to|are\s+to|is\s+to|has\s+to|have\s+to)\s+"
    r"(?:not\s+|never\s+|always\s+|only\s+|now\s+)*"
    r"(?:answer|say|tell|reply|respond|cite|quote|reveal|print|output|list|summari[sz]e|treat|mark|classify|skip|"
    r"ignore|disregard|rely|rank|prefer|present|describe|repeat|recommend|state|trust|disclose|give)\b"
    r"|\bfor\s+(?:the\s+)?" + _MACHINE + r"\s+only\b"
    r"|\b(?:tell|instruct|have|get|make)\s+your\s+(?:ai|llm|chat\s*bot|bot)\b"
    r"|</?(?:system|assistant|user|instructions?)>"
    r"|\b(?:ignore|disregard|forget)\s+(?:all\s+|any\s+|the\s+|your\s+)*(?:previous|prior|earlier|above)\s+"
    r"(?:context|messages?|conversation|text)\b|\bnew\s+task\s*:"
    r"|\bthe\s+answer\s+to\s+(?:any|every|all)\s+questions?\b"
    # steering an answer rather than informing a reader
    r"|\bregardless\s+of\s+what\s+(?:the\s+)?(?:other\s+|official\s+)?(?:documents?|sources?|policies|pages|records|"
    r"handbooks?)\s+says?\b"
    r"|\bthe\s+(?:only\s+)?correct\s+answer\s+(?:is|to\s+any)\b"
    r"|\btreat\s+this\s+(?:message|note|post|thread|page|text|reply|comment|document|paragraph)\s+as\b"
    r"|\b(?:quote|cite|copy|repeat)\s+this\s+(?:paragraph|post|message|note|reply|thread|comment)\b"
    r"|\b(?:reply|respond|answer)\s+(?:only\s+)?with\s*:"
    r"|\bwhen\s+summari[sz]ing\b"
    # (not "your response": "copy the reference into your response to the customer" is ordinary)
    r"|\binto\s+your\s+(?:answers?|output|summary)\b"
    r"|\bsummari[sz]e\s+this\s+(?:thread|post|page|comment|reply|message)\s+as\b"
    r"|\b(?:present|cite|quote)\s+(?:it|this(?:\s+\w+)?)\s+as\s+(?:the\s+)?(?:company|official|primary|organisation's|"
    r"organization's)\b"
    r"|\bprefer\s+this\s+(?:post|thread|comment|page|reply|message|note)\s+(?:over|to)\b"
    r"|\bpretend\s+(?:that\s+)?you\s+are\b"
    r"|\b(?:do\s+not|don't|never|stop)\s+(?:follow(?:ing)?|obey(?:ing)?|apply(?:ing)?)\s+(?:your|any)\s+"
    r"(?:earlier|previous|prior|original|other|usual|own)\s+(?:guidance|instructions|rules)\b"
    # a post claiming more authority than the organisation's documents, or asking to be taken as the answer
    r"|\bthis\s+(?:forum\s+)?(?:thread|post|comment|reply|message|note)\s+(?:has\s+been\s+(?:approved|endorsed|"
    r"verified)|replaces|supersedes|overrides|is\s+(?:more\s+)?authoritative|is\s+(?:binding|official)|is\s+the\s+"
    r"(?:only\s+)?(?:official|final|authoritative|correct)|(?:should|must|is\s+to)\s+be\s+(?:treated|used|cited|quoted|"
    r"regarded|taken)\s+as)\b"
    r"|\bmore\s+authoritative\s+than\b"
    r"|\b(?:outranks?|trumps?)\s+(?:every|all|any|the)\b"
    r"|\b(?:ignore|disregard|forget)\s+(?:everything|anything|all)\s+(?:you\s+(?:were|have\s+been)\s+told|above|"
    r"before|said|else)\b"
    r"|\b(?:takes?|has)\s+(?:priority|precedence)\s+over\s+(?:every|all|any)\s+(?:other\s+)?(?:official\s+)?"
    r"(?:documents?|policies|sources?|pages|records)\b"
    # disregarding the store's own access labels
    r"|\b(?:ignore|disregard|bypass)\s+(?:the\s+|any\s+|all\s+)?(?:classification|security|access|acl|permission)s?"
    r"(?:\s+(?:labels?|markings?|rules|settings|levels?))?\b",
    re.IGNORECASE)
#: injection-v7 (session 30, from the sixth probe set): the injection phrase in other European languages, the
#: delimiters and turns of prompt formats, tool calls, an image link whose address asks for the conversation, and
#: a machine reader named by what it does to the text.
FORMS = re.compile(
    r"\bignore[zr]?\s+(?:toutes\s+)?(?:les\s+)?(?:instructions|consignes)\s+(?:pr[ée]c[ée]dentes|ant[ée]rieures)"
    r"|\bignor[ae]\s+(?:todas\s+)?las\s+instrucciones\b|\bignoriere?\s+(?:alle\s+)?(?:vorherigen\s+|bisherigen\s+)?"
    r"anweisungen\b|\bignora\s+(?:tutte\s+)?le\s+istruzioni\b|\bignore\s+(?:todas\s+)?as\s+instru[çc][õo]es\b"
    r"|</?(?:context|documents?|human|search_results?|tool_(?:output|result))>"
    r"|(?:^|\n)\s*#{2,}\s*(?:instruction|system)\s*:"
    r"|\bhuman\s*:(?:(?!\n\n).)*\bassistant\s*:"
    r"|\b(?:call|invoke)\s+(?:the\s+)?[a-z]+(?:_[a-z]+)+\s+tool\b"
    r"|!\[[^\]]*\]\([^)\s]*\?[^)\s]*(?:conversation|chat|history|summary|prompt|secret|password|token|messages?)"
    r"|\b(?:whoever|whatever|anyone|anything)\s+(?:processes|summari[sz]es|indexes|ingests|parses|scrapes)\s+this\b"
    r"|\bif\s+the\s+reader\s+is\s+(?:an?\s+)?(?:" + _MACHINE + r"|machine|bot|program)\b"
    r"|\bforward\s+(?:this|the)\s+(?:whole\s+|entire\s+)?(?:conversation|chat)\b"
    r"|\bfrom\s+(?:this\s+point|now)\s+on,?\s+(?:you\s+)?(?:reply|respond|answer)\b"
    r"|\bto\s+every\s+(?:answer|reply|response)\s+you\s+(?:give|write|send)\b",
    re.IGNORECASE | re.DOTALL)
#: Base64 runs long enough to hide an instruction ("aWdub3JlIHByZXZpb3Vz…"): decoded and read again (injection-v7).
_BASE64 = re.compile(r"(?<![A-Za-z0-9+/])[A-Za-z0-9+/]{24,}={0,2}(?![A-Za-z0-9+/=])")
CLASSIFICATION_CLAIM = re.compile(
    r"\b(?:this|the)\s+(?:document|page|file|faq|thread|post|note|policy|text)\s+(?:is|has\s+been)\s+(?:now\s+)?"
    r"(?:(?:re-?)?classified\s+(?:as\s+)?)?(public|internal|confidential|restricted)\b"
    r"|\bclassification\s*(?:is|:)\s*(public|internal|confidential|restricted)\b",
    re.IGNORECASE)
#: ``[n]`` as the answering service writes it: numbers from 1, opening a token. Since injection-v6 an index or a gene
#: name (``r[62]``, ``GABA(B[1])``) and a list or interval starting at 0 (``[0, 4, 16]``, ``[0,1]``) are not markers.
MARKERS = re.compile(r"(?<![\w\])])\[\s*[1-9]\d*(?:\s*,\s*[1-9]\d*)*\s*\]|\[\s*RAG\s*:\s*[0-9a-f]{6,}\s*\]"
                     r"|\[\s*(?:source|doc|document|passage|context|chunk)\s*#?\s*\d+\s*\]", re.IGNORECASE)


@dataclass(frozen=True)
class Flag:
    """A flagged span ``[start, end)`` of a document's text and why it was flagged."""

    start: int
    end: int
    reasons: tuple[str, ...]


def addresses_ai(text: str) -> bool:
    """True when ``text`` holds instructions or claims addressed to an AI model (the ``addressed-to-ai`` reason),
    also inside a base64 run."""
    return _addresses(text) or any(_addresses(decoded) for decoded in _decoded_runs(text))


def _addresses(text: str) -> bool:
    return bool(ADDRESSED.search(text) or STEERING.search(text) or FORMS.search(text))


def _decoded_runs(text: str) -> Iterable[str]:
    """The base64 runs of ``text`` that decode to UTF-8 text (gene sequences and hashes decode to bytes, skipped)."""
    for m in _BASE64.finditer(text):
        run = m.group()
        try:
            decoded = base64.b64decode(run + "=" * (-len(run) % 4), validate=True).decode("utf-8")
        except (binascii.Error, UnicodeDecodeError):
            continue
        if decoded.isprintable() and sum(c.isalpha() or c == " " for c in decoded) >= 0.8 * len(decoded):
            yield decoded


def reasons_for(text: str, classification: Classification | None = None) -> tuple[str, ...]:
    """Why ``text`` is quarantined (empty when it is not)."""
    out = []
    if addresses_ai(text):
        out.append("addressed-to-ai")
    for m in CLASSIFICATION_CLAIM.finditer(text):
        if m.start() > 0 and text[m.start() - 1] in "\"“‘'«":
            continue  # a quoted claim is being discussed ('a sentence claiming "this document is Public"')
        claimed = Classification.parse(next(g for g in m.groups() if g))
        if classification is None or claimed != classification:
            out.append("classification-claim")
            break
    if MARKERS.search(text):
        out.append("citation-markers")
    return tuple(out)


def scan_key(sha256: str, classification: "Classification | str") -> str:
    """What a stored scan saw: the document's content hash and its ACL level (a classification claim is flagged
    against the level, so a changed ACL means a new scan even when the text is the same). ``classification`` is a
    level or the store's ACL JSON."""
    if isinstance(classification, str):
        classification = Acl.from_json(json.loads(classification)).classification
    return f"{sha256}:{classification.name.lower()}"


def scan_document(text: str, classification: Classification | None = None) -> list[Flag]:
    """Flagged paragraphs of a document; ``classification`` is its ACL level (a claim of any other level is
    flagged; ``None``: every claim is)."""
    out = []
    for start, end in paragraphs(text):
        why = reasons_for(text[start:end], classification)
        if why:
            out.append(Flag(start, end, why))
    return out


def redact_text(text: str, classification: Classification | None = None) -> str:
    """``text`` with its flagged paragraphs replaced by :data:`PLACEHOLDER`."""
    flags = scan_document(text, classification)
    for f in reversed(flags):
        text = text[: f.start] + PLACEHOLDER + text[f.end:]
    return text


@functools.lru_cache(maxsize=4096)
def _redacted(text: str, classification: Classification | None) -> str:
    """:func:`redact_text`, remembered: :meth:`Quarantine.redact` scans every retrieved chunk again on every
    question, and the same chunks come back across questions."""
    return redact_text(text, classification)


def flagged_texts(documents: Iterable[Any]) -> list[str]:
    """The flagged paragraph texts of ``documents`` (objects with ``text`` and ``acl``)."""
    out: list[str] = []
    for d in documents:
        level = getattr(getattr(d, "acl", None), "classification", None)
        out.extend(d.text[f.start:f.end] for f in scan_document(d.text, level))
    return out


def _flags_by_doc(rows: Iterable[Sequence[Any]]) -> dict[str, list[Flag]]:
    """``quarantine_spans`` rows (doc_id, start, end, reasons) as each document's flags, in row order."""
    out: dict[str, list[Flag]] = {}
    for doc_id, start, end, reasons in rows:
        out.setdefault(doc_id, []).append(Flag(int(start), int(end), tuple(reasons.split(","))))
    return out


class Quarantine:
    """Flags kept in a store: :meth:`refresh` scans new or changed documents, :meth:`redact` cleans hits.
    Documents whose id starts with ``exclude_prefix`` are neither scanned nor redacted (EE-RAG's conversation
    memory: the conversation's own turns, a new document every turn)."""

    def __init__(self, store: Any, exclude_prefix: str | None = None) -> None:
        self.store = store
        self.exclude_prefix = exclude_prefix
        self._signature: str | None = None
        self._spans: dict[str, list[Flag]] = {}
        self._loaded: dict[str, str] = {}  # doc id → the scan key whose flags are in _spans
        store.ensure_schema(SCHEMA, DDL, 1)

    def refresh(self) -> int:
        """Scan every document whose content or detector changed since its last scan (one transaction);
        forget documents that are gone. Returns the number of documents scanned. (``ragbench index`` and the DAL
        pipeline :meth:`scan` what they write, so the flags are in the store before the first question.)"""
        prefix = self.exclude_prefix or ""
        rows = [(r[0], scan_key(r[1], r[2])) for r in self.store.query(
            "SELECT doc_id, sha256, acl FROM documents WHERE ? = '' OR substr(doc_id, 1, ?) <> ? ORDER BY doc_id",
            (prefix, len(prefix), prefix))]
        signature = hashlib.sha256(json.dumps([rows, DETECTOR_VERSION]).encode("utf-8")).hexdigest()
        if signature == self._signature:
            return 0
        seen = {r[0]: (r[1], r[2]) for r in self.store.query("SELECT doc_id, sha256, detector FROM quarantine_scans")}
        todo = [doc_id for doc_id, sha in rows if seen.get(doc_id) != (sha, DETECTOR_VERSION)]
        # another Quarantine over the same store may scan the excluded documents: their scans are not "gone"
        gone = sorted({d for d in seen if not self._excluded(d)} - {r[0] for r in rows})
        self._write(todo, gone)
        spans = _flags_by_doc(self.store.query(
            "SELECT doc_id, start, end, reasons FROM quarantine_spans ORDER BY doc_id, start"))
        # swapped in whole: a server thread redacting meanwhile never sees a half-filled table
        self._spans, self._loaded = spans, {doc_id: sha for doc_id, sha in rows}
        self._signature = signature
        return len(todo)

    def scan(self, doc_ids: Iterable[str]) -> int:
        """Scan those of ``doc_ids`` whose content or detector changed since their last scan, and load their
        flags: what redacting a few hits needs, without reading the whole store. Returns the number scanned."""
        ids = sorted({d for d in doc_ids if not self._excluded(d)})
        rows = []
        for i in range(0, len(ids), 500):
            batch = ids[i:i + 500]
            rows += [(r[0], scan_key(r[1], r[2]), r[3], r[4]) for r in self.store.query(
                "SELECT d.doc_id, d.sha256, d.acl, s.sha256, s.detector FROM documents d LEFT JOIN quarantine_scans s "
                f"ON s.doc_id = d.doc_id WHERE d.doc_id IN ({', '.join('?' * len(batch))})", batch)]
        todo = [r[0] for r in rows if (r[2], r[3]) != (r[1], DETECTOR_VERSION)]
        self._write(todo, [])
        stale = [r[0] for r in rows if self._loaded.get(r[0]) != r[1]]
        for i in range(0, len(stale), 500):
            batch = stale[i:i + 500]
            found = _flags_by_doc(self.store.query(
                "SELECT doc_id, start, end, reasons FROM quarantine_spans "
                f"WHERE doc_id IN ({', '.join('?' * len(batch))}) ORDER BY doc_id, start", batch))
            for doc_id in batch:
                if doc_id in found:
                    self._spans[doc_id] = found[doc_id]
                else:
                    self._spans.pop(doc_id, None)
        self._loaded.update((r[0], r[1]) for r in rows)
        if todo:
            self._signature = None  # the store changed under refresh's shortcut
        return len(todo)

    def _write(self, todo: Sequence[str], gone: Sequence[str]) -> None:
        """Scan ``todo`` and forget ``gone``, in one transaction."""
        if not todo and not gone:
            return
        now = datetime.now(timezone.utc).isoformat(timespec="seconds")
        with self.store.transaction() as conn:
            for doc_id in gone:
                conn.execute("DELETE FROM quarantine_scans WHERE doc_id = ?", (doc_id,))
                conn.execute("DELETE FROM quarantine_spans WHERE doc_id = ?", (doc_id,))
            for doc_id in todo:
                doc = self.store.get_document(doc_id)
                if doc is None:
                    continue
                flags = scan_document(doc.text, doc.acl.classification)
                conn.execute("DELETE FROM quarantine_spans WHERE doc_id = ?", (doc_id,))
                conn.executemany("INSERT INTO quarantine_spans VALUES (?, ?, ?, ?)",
                                 [(doc_id, f.start, f.end, ",".join(f.reasons)) for f in flags])
                conn.execute("INSERT OR REPLACE INTO quarantine_scans VALUES (?, ?, ?, ?, ?)",
                             (doc_id, scan_key(doc.sha256, doc.acl.classification), DETECTOR_VERSION, len(flags),
                              now))

    def _excluded(self, doc_id: str) -> bool:
        return self.exclude_prefix is not None and doc_id.startswith(self.exclude_prefix)

    def flagged(self, doc_ids: Iterable[str]) -> list[str]:
        """Those of ``doc_ids`` with a flagged paragraph (scanned first where they changed), sorted."""
        ids = sorted(set(doc_ids))
        self.scan(ids)
        return [d for d in ids if self._spans.get(d)]

    def flags(self, doc_id: str) -> list[Flag]:
        """The flagged spans of one document (scanned first if it changed)."""
        self.scan([doc_id])
        return list(self._spans.get(doc_id, ()))

    def flagged_chunks(self) -> dict[str, tuple[str, ...]]:
        """chunk id → the reasons of the flagged spans it overlaps (after a full :meth:`refresh`)."""
        self.refresh()
        out: dict[str, tuple[str, ...]] = {}
        for c in self.store.chunks(sorted(self._spans)):
            why = sorted({r for f in self._spans.get(c.doc_id, ()) if f.start < c.end and f.end > c.start
                          for r in f.reasons})
            if why:
                out[c.chunk_id] = tuple(why)
        return out

    def clean(self, doc_id: str, start: int, end: int, text: str) -> str:
        """``text``, the span ``[start, end)`` of document ``doc_id``, with every flagged span replaced by
        :data:`PLACEHOLDER` (after :meth:`scan` of the document). Text that is not the document's slice is scanned
        directly, and so is the result (defence in depth: a store written before the rules changed). Excluded
        documents' text is returned as it is."""
        if self._excluded(doc_id):
            return text
        spans = [f for f in self._spans.get(doc_id, ()) if f.start < end and f.end > start]
        if len(text) != end - start:
            spans = []  # not the document's slice: offsets would cut the wrong text
        for f in sorted(spans, key=lambda f: -f.start):
            a, b = max(f.start, start) - start, min(f.end, end) - start
            text = text[:a] + PLACEHOLDER + text[b:]
        acl = self.store.acl_of(doc_id)
        return _redacted(text, acl.classification if acl is not None else None)

    def redact(self, items: Sequence[_Span]) -> list[_Span]:
        """Hits or stored chunks whose text has every flagged span replaced by :data:`PLACEHOLDER` (a chunk's
        summary is left to the caller, which knows how its summaries were made)."""
        self.scan(x.doc_id for x in items)
        out = []
        for x in items:
            text = self.clean(x.doc_id, x.start, x.end, x.text)
            out.append(x if text == x.text else replace(x, text=text))
        return out
