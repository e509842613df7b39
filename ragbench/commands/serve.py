"""``ragbench serve``: the assistant, the research hub and EE-RAG chat behind an authenticated HTTP API.

``--data DIR`` indexes a golden-format folder (documents with ACLs; default: the bundled ``data/golden``) into
``.ragbench/serve-<folder>-<hash>.db`` and serves it; ``--store S`` serves an existing store. ``--hub H`` is a store
holding a research hub (``ragbench research … --store H``); without it the hub lives in the served store. Tokens:
HS256 with ``RAGBENCH_JWT_SECRET``, or RS256/ES256 with ``--jwt-public-key``; ``--api-keys`` maps static keys to
principals. Every ``serve.*`` knob (docs/serve.md) can also be given with ``--set serve.NAME=VALUE`` or in the
config file's ``serve:`` section. The store is indexed (and embedded) here, once, before the workers start.
"""
from __future__ import annotations

import argparse
import hashlib
import os
import re
import socket
import sys
import tempfile
from pathlib import Path
from typing import Any

from ..errors import ConfigError, require_extra
from ..retrieval.retriever import MODES
from ._common import add_config_options, add_retriever_option, parse_sets


def _rate(text: str) -> int:
    m = re.fullmatch(r"\s*(\d+)\s*(?:/\s*(?:min|minute|m))?\s*", text)
    if not m:
        raise argparse.ArgumentTypeError(f"expected N/minute (e.g. 60/minute) or N, found {text!r}")
    return int(m.group(1))


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("serve", help="serve answers, chat, search, the research hub and EE-RAG over HTTP",
                       description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    src = p.add_mutually_exclusive_group()
    src.add_argument("--data", metavar="DIR", default=None,
                     help="golden-format folder to index and serve (default: the bundled data/golden)")
    src.add_argument("--store", metavar="S", default=None, help="serve this existing knowledge store")
    p.add_argument("--hub", metavar="H", default=None,
                   help="store holding the research hub (default: the served store)")
    p.add_argument("--host", default=None, help="address to listen on (default: serve.host = 127.0.0.1)")
    p.add_argument("--port", type=int, default=None, help="port (default: serve.port = 8000)")
    p.add_argument("--workers", type=int, default=None, help="uvicorn worker processes (default: serve.workers = 1)")
    p.add_argument("--rate-limit", type=_rate, default=None, metavar="N/minute",
                   help="requests per minute per principal, shared by all worker processes; 0 = off "
                        "(default: serve.rate_limit_per_minute = 60)")
    add_retriever_option(p, help=f"default retrieval mode of the API: {', '.join(MODES)} "
                                 "(default: serve.retriever = dense)")
    p.add_argument("--jwt-public-key", default=None, metavar="PEM",
                   help="public key for RS256/ES256 tokens (HS256 uses $RAGBENCH_JWT_SECRET)")
    p.add_argument("--issuer", default=None, help="required token issuer (iss), if any")
    p.add_argument("--audience", default=None, help="required token audience (aud), if any")
    p.add_argument("--api-keys", default=None, metavar="YAML", help="static API keys mapped to principals")
    p.add_argument("--otlp-endpoint", default=None, metavar="URL",
                   help="send OpenTelemetry spans here, e.g. http://127.0.0.1:4318/v1/traces (default: off)")
    p.add_argument("--testweb", action="store_true",
                   help="start the local test web and research it (loopback only; for demos and tests)")
    p.add_argument("--judge", default=None, metavar="MODEL",
                   help="the judge profile on /v1/ask: this local model (llama) decides whether an answer answers "
                        "the question (docs/answers.md)")
    p.add_argument("--rescue", default=None, metavar="MODEL",
                   help="the rescue profile on /v1/ask: the text check decides, and this local model (llama) reads "
                        "only the answers it refused on coverage and similarity (docs/answers.md)")
    add_config_options(p)  # the file's serve: section and --set serve.* names hold the serve knobs
    p.add_argument("--quiet", action="store_true", help="no progress bars while indexing")
    p.set_defaults(func=run)


def config_overrides(args: argparse.Namespace) -> dict[str, Any]:
    """The ``--set`` overrides, on top of the judge profile's settings when ``--judge`` is given, or the rescue
    profile's with ``--rescue`` (``--set`` wins)."""
    overrides = parse_sets(args.set)
    from ..answer.judge import profile_overrides

    profile = profile_overrides(args.judge, args.rescue)
    return {**{k: str(v) for k, v in profile.items()}, **overrides}


def _options(args: argparse.Namespace) -> dict[str, Any]:
    retriever = "bm25" if args.retriever == "keyword" else args.retriever
    opts = {"host": args.host, "port": args.port, "workers": args.workers, "rate_limit_per_minute": args.rate_limit,
            "retriever": retriever, "jwt_public_key": args.jwt_public_key, "jwt_issuer": args.issuer,
            "jwt_audience": args.audience, "api_keys": args.api_keys, "otlp_endpoint": args.otlp_endpoint}
    return {k: v for k, v in opts.items() if v is not None}


def data_store(folder: str | None, settings: Any, show_progress: bool) -> str:
    """Index a golden-format folder into ``.ragbench/serve-<name>-<hash>.db`` (re-ingesting is a no-op for
    unchanged documents) with the default mode's vectors stored; returns the store path."""
    from ..eval.golden import DEFAULT_FOLDER, load_golden
    from ..retrieval.factory import make_chunker
    from ..retrieval.embedding import make_embedder
    from ..retrieval.retriever import needs_embedder, retriever_from_store
    from ..store import KnowledgeStore

    golden = load_golden(folder or DEFAULT_FOLDER)
    serve = settings.serve_config()
    cfg = settings.research_config(serve.retriever)
    key = hashlib.sha256(f"{golden.folder.resolve()}|{cfg.chunking}".encode()).hexdigest()[:10]
    path = Path(".ragbench") / f"serve-{golden.folder.name}-{key}.db"
    path.parent.mkdir(parents=True, exist_ok=True)
    embedder = (make_embedder(cfg.embedding) if needs_embedder(serve.retriever) or cfg.answer.extractive_semantic
                else None)
    with KnowledgeStore.open(path) as store:
        store.ingest(golden.documents, make_chunker(cfg.chunking), embedder, show_progress=show_progress)
        if embedder is not None:
            retriever_from_store(store, "dense", cfg, embedder, show_progress=show_progress)  # vectors stored
    return str(path)


def _run_uvicorn(uvicorn: Any, host: str, port: int, workers: int) -> None:
    """uvicorn on the factory ``app_from_env``; with several workers the listening socket is made here, as
    ``uvicorn.run`` does, but with ``TCP_NODELAY`` set: accepted connections inherit it (Linux), and without it every
    keep-alive response of a worker process waited for a delayed ACK (measured: ``/healthz`` p50 4.6 ms with one
    worker, 47.9 ms with two; docs/benchmarks.md)."""
    from ..serve.logs import log_config

    config = uvicorn.Config("ragbench.serve.app:app_from_env", factory=True, host=host, port=port, workers=workers,
                            log_config=log_config(), access_log=False, timeout_graceful_shutdown=5)
    if workers == 1:
        uvicorn.Server(config).run()
        return
    from uvicorn.supervisors import Multiprocess

    sock = config.bind_socket()
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    Multiprocess(config, sockets=[sock]).run()


def run(args: argparse.Namespace) -> int:
    for module in ("fastapi", "jwt", "prometheus_client"):
        require_extra(module, "serve", "ragbench serve")
    uvicorn = require_extra("uvicorn", "serve", "ragbench serve")
    from ..serve.app import authenticator
    from ..serve.settings import SETTINGS_ENV, ServeSettings

    overrides = config_overrides(args)
    from ..dal.testweb import maybe_testweb

    with maybe_testweb(args.testweb) as web:
        if web is not None:
            overrides = {"dal.search_url": web.search_url, "dal.url_rewrite": web.url_rewrite,
                         "dal.request_delay": "0", "dal.as_of": "2025-06-01", **overrides}
        settings = ServeSettings(store=args.store or "", hub=args.hub, config_path=args.config, overrides=overrides,
                                 options=_options(args))
        serve = settings.serve_config()  # bad knobs fail here, before any indexing
        if args.store is None:
            settings = ServeSettings(**{**settings.__dict__, "store": data_store(args.data, settings, not args.quiet)})
        elif not Path(args.store).is_file():
            raise ConfigError(f"store {args.store} does not exist. Fix: give a store filled by `ragbench index`, or "
                              "serve a folder with --data DIR.")
        authenticator(settings)  # a bad authentication setup fails here, before the workers start
        os.environ[SETTINGS_ENV] = settings.to_env()
        multiproc = None
        if serve.workers > 1 and not os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
            multiproc = tempfile.TemporaryDirectory(prefix="ragbench-metrics-")
            os.environ["PROMETHEUS_MULTIPROC_DIR"] = multiproc.name
        print(f"ragbench serve: http://{serve.host}:{serve.port}/ ({serve.workers} worker(s), store {settings.store})",
              file=sys.stderr, flush=True)
        try:
            _run_uvicorn(uvicorn, serve.host, serve.port, serve.workers)
        finally:
            if multiproc is not None:
                multiproc.cleanup()
    return 0
