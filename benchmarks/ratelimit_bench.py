"""Cost of one rate-limit check: the in-memory bucket against the shared SQLite bucket file that ``ragbench serve``
uses (one ``BEGIN IMMEDIATE`` transaction per request), with one process and with two processes checking at once.

Each cell makes ``--checks`` calls of ``allow()`` over 50 principals with a bucket large enough never to refuse, in a
temporary folder; prints one JSON line with microseconds per check.

    python benchmarks/ratelimit_bench.py --checks 5000
"""
from __future__ import annotations

import argparse
import json
import multiprocessing
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from ragbench.serve.ratelimit import RateLimiter, SharedRateLimiter  # noqa: E402

BIG = 10**9  # tokens per minute: the bucket never runs dry, so every check is the same work


def _checks(limiter: Any, n: int) -> float:
    """Seconds per ``allow()`` over ``n`` calls."""
    limiter.allow("warm-up")  # the shared limiter connects on first use
    start = time.perf_counter()
    for i in range(n):
        limiter.allow(f"principal-{i % 50}")
    return (time.perf_counter() - start) / n


def _worker(path: str, n: int, go: Any, out: Any) -> None:
    limiter = SharedRateLimiter(path, BIG)
    limiter.allow("warm-up")
    go.wait()
    out.put(_checks(limiter, n))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--checks", type=int, default=5000, help="allow() calls per cell and process (default 5000)")
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="ratelimit-bench-") as tmp:
        path = str(Path(tmp) / "kb.ratelimit.db")
        memory = _checks(RateLimiter(BIG), args.checks)
        shared = _checks(SharedRateLimiter(path, BIG), args.checks)
        ctx = multiprocessing.get_context("fork")
        go, out = ctx.Event(), ctx.Queue()
        procs = [ctx.Process(target=_worker, args=(path, args.checks, go, out)) for _ in range(2)]
        for p in procs:
            p.start()
        go.set()
        two = [out.get() for _ in procs]
        for p in procs:
            p.join()
    print(json.dumps({"checks": args.checks, "memory_us": round(memory * 1e6, 1), "shared_us": round(shared * 1e6, 1),
                      "shared_two_processes_us": [round(t * 1e6, 1) for t in two]}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
