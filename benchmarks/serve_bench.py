"""``ragbench serve`` under load: requests/s and p50/p95 latency of ``POST /v1/ask`` (extractive model) and
``GET /v1/search`` at 1, 8 and 32 concurrent clients, with 1 and 2 uvicorn workers, against the in-process Python
call (``AnsweringService.answer`` / ``retriever.search`` + post-filter) as the reference.

Loopback only and bounded: each cell sends at most ``--requests`` requests and stops after ``--max-seconds``. The
load generator runs on the same machine (threads with one httpx client each) and competes for the same cores.
Questions are the golden set's, asked in turn by its seven principals (HS256 tokens). Also measured in process: one
answer-log write (the SQLite write every ``/v1/ask`` makes).

    python benchmarks/serve_bench.py --requests 200 --max-seconds 40 --out runs/serve_bench.json
"""
from __future__ import annotations

import argparse
import json
import os
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import jwt

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from ragbench.answer import post_filter  # noqa: E402
from ragbench.commands._common import parse_sets  # noqa: E402
from ragbench.commands.serve import data_store  # noqa: E402
from ragbench.eval.golden import load_golden  # noqa: E402
from ragbench.serve.settings import ServeSettings  # noqa: E402
from ragbench.serve.state import ServeState  # noqa: E402

SECRET = "bench-secret-" + "z" * 40


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def percentile(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    s = sorted(values)
    return s[min(len(s) - 1, max(0, round(q * (len(s) - 1))))]


def summarize(latencies: list[float], errors: int, wall: float) -> dict[str, Any]:
    return {"requests": len(latencies), "errors": errors, "rps": round(len(latencies) / wall, 1) if wall else 0.0,
            "p50_ms": round(1000 * percentile(latencies, 0.50), 1),
            "p95_ms": round(1000 * percentile(latencies, 0.95), 1)}


def load(call: Callable[[int], bool], clients: int, requests: int, max_seconds: float) -> dict[str, Any]:
    """``clients`` threads calling ``call(i)`` until ``requests`` calls are made or the time is up."""
    counter = iter(range(requests))
    lock = threading.Lock()
    latencies: list[float] = []
    errors = 0
    stop = time.perf_counter() + max_seconds

    def worker() -> None:
        nonlocal errors
        while time.perf_counter() < stop:
            with lock:
                i = next(counter, None)
            if i is None:
                return
            t = time.perf_counter()
            ok = call(i)
            dt = time.perf_counter() - t
            with lock:
                latencies.append(dt)
                errors += 0 if ok else 1

    start = time.perf_counter()
    threads = [threading.Thread(target=worker) for _ in range(clients)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    return summarize(latencies, errors, time.perf_counter() - start)


class Server:
    def __init__(self, workers: int, store: str, extra: list[str]) -> None:
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        env = {**os.environ, "RAGBENCH_JWT_SECRET": SECRET, "PYTHONPATH": str(ROOT)}
        env.pop("PROMETHEUS_MULTIPROC_DIR", None)
        self.log = tempfile.TemporaryFile()
        cmd = [sys.executable, "-m", "ragbench.cli", "serve", "--store", store, "--port", str(self.port), "--workers",
               str(workers), "--rate-limit", "0", "--quiet", *extra]
        self.proc = subprocess.Popen(cmd, env=env, stdout=self.log, stderr=subprocess.STDOUT)

    def wait_ready(self, warm: Callable[[httpx.Client], None], timeout: float = 300) -> None:
        deadline = time.monotonic() + timeout
        with httpx.Client(base_url=self.base, timeout=30) as c:
            streak = 0
            while streak < 10:  # several answers in a row: every worker has built its service
                if self.proc.poll() is not None or time.monotonic() > deadline:
                    self.log.seek(0)
                    raise RuntimeError("server did not start:\n" + self.log.read().decode(errors="replace")[-3000:])
                try:
                    streak = streak + 1 if c.get("/readyz").status_code == 200 else 0
                except httpx.HTTPError:
                    streak = 0
                time.sleep(0.1)
            for _ in range(20):
                warm(c)

    def rss_mb(self) -> dict[str, float]:
        """Resident memory of the server process and of each worker it started (Linux /proc)."""
        def rss(pid: int) -> float:
            for line in Path(f"/proc/{pid}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
            return 0.0

        out = {"main": round(rss(self.proc.pid), 1)}
        for stat in Path("/proc").glob("[0-9]*/stat"):
            try:
                fields = stat.read_text().rsplit(")", 1)[1].split()
                if int(fields[1]) == self.proc.pid:
                    out[f"child-{stat.parent.name}"] = round(rss(int(stat.parent.name)), 1)
            except (OSError, ValueError, IndexError):
                continue
        return out

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.proc.kill()


def run_http(workers: int, store: str, extra: list[str], questions: list[str], tokens: list[str],
             clients_list: list[int], requests: int, max_seconds: float) -> list[dict[str, Any]]:
    server = Server(workers, store, extra)
    local = threading.local()

    def client() -> httpx.Client:
        c = getattr(local, "c", None)
        if c is None:
            c = local.c = httpx.Client(base_url=server.base, timeout=120)
        return c

    def ask(i: int) -> bool:
        r = client().post("/v1/ask", json={"question": questions[i % len(questions)]},
                          headers={"Authorization": f"Bearer {tokens[i % len(tokens)]}"})
        return r.status_code == 200

    def search(i: int) -> bool:
        r = client().get("/v1/search", params={"q": questions[i % len(questions)], "k": 5},
                         headers={"Authorization": f"Bearer {tokens[i % len(tokens)]}"})
        return r.status_code == 200

    rows = []
    try:
        server.wait_ready(lambda c: ask(0))
        for name, fn in (("ask", ask), ("search", search)):
            for clients in clients_list:
                row = {"endpoint": name, "mode": "http", "workers": workers, "clients": clients,
                       **load(fn, clients, requests, max_seconds)}
                rows.append(row)
                print(json.dumps(row), flush=True)
        rows.append({"endpoint": "memory", "workers": workers, "rss_mb": server.rss_mb()})
        print(json.dumps(rows[-1]), flush=True)
    finally:
        server.stop()
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--requests", type=int, default=200, help="requests per cell at most")
    ap.add_argument("--max-seconds", type=float, default=40.0, help="time limit per cell")
    ap.add_argument("--clients", default="1,8,32")
    ap.add_argument("--workers", default="1,2")
    ap.add_argument("--set", action="append", default=[],
                    help="passed to ragbench serve (e.g. embedding.model=hashing)")
    ap.add_argument("--out", default=None, help="write the results as JSON here")
    args = ap.parse_args()
    os.environ["RAGBENCH_JWT_SECRET"] = SECRET
    extra = [x for s in args.set for x in ("--set", s)]

    golden = load_golden()
    settings = ServeSettings(store="", overrides=parse_sets(args.set))
    store = data_store(None, settings, show_progress=False)
    settings = ServeSettings(store=store, overrides=settings.overrides)
    questions = [q.question for q in golden.questions]
    principals = sorted(golden.principals.values(), key=lambda p: p.user_id)
    tokens = [jwt.encode({"sub": p.user_id, "roles": sorted(p.roles), "departments": sorted(p.departments),
                          "clearance": p.max_classification.name.title(), "exp": int(time.time()) + 7200},
                         SECRET, algorithm="HS256") for p in principals]
    results: list[dict[str, Any]] = []

    # ---- in-process reference (the same service the server builds)
    state = ServeState(settings)
    service = state.service()
    def ref_ask(i: int) -> bool:
        return not service.answer(questions[i % len(questions)], principals[i % len(principals)]).error

    def ref_search(i: int) -> bool:
        who = principals[i % len(principals)]
        hits = service.retriever.search(questions[i % len(questions)], k=20, principal=who)
        service._context(post_filter(hits, who, service.store)[:5])
        return True

    ref = {"ask": ref_ask, "search": ref_search}
    for name, fn in ref.items():
        for warm in range(10):
            fn(warm)
        row = {"endpoint": name, "mode": "in-process", "workers": 0, "clients": 1,
               **load(fn, 1, args.requests, args.max_seconds)}
        results.append(row)
        print(json.dumps(row), flush=True)
    t = time.perf_counter()
    n_writes = 200
    for _ in range(n_writes):
        service.answer_log.add("bench", "default", "p@v1", "m", "dense", False, None, 1.0, ["c"])
    write_ms = 1000 * (time.perf_counter() - t) / n_writes
    print(json.dumps({"answer_log_write_ms": round(write_ms, 3)}), flush=True)
    state.close()

    # ---- over HTTP
    for workers in [int(w) for w in args.workers.split(",")]:
        results += run_http(workers, store, extra, questions, tokens, [int(c) for c in args.clients.split(",")],
                            args.requests, args.max_seconds)

    print("\n| endpoint | how | workers | clients | requests | errors | req/s | p50 ms | p95 ms |")
    print("|---|---|---|---|---|---|---|---|---|")
    for r in results:
        if r["endpoint"] == "memory":
            continue
        print(f"| {r['endpoint']} | {r['mode']} | {r['workers'] or '–'} | {r['clients']} | {r['requests']} | "
              f"{r['errors']} | {r['rps']} | {r['p50_ms']} | {r['p95_ms']} |")
    print(f"\nanswer-log write (SQLite, WAL): {write_ms:.2f} ms")
    for r in results:
        if r["endpoint"] == "memory":
            print(f"resident memory with {r['workers']} worker(s), MB: {r['rss_mb']}")
    if args.out:
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).write_text(json.dumps({"results": results, "answer_log_write_ms": write_ms,
                                              "settings": vars(args)}, indent=2))


if __name__ == "__main__":
    main()
