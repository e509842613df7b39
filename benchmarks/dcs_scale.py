"""DCS scaling: registration and assembly time against the number of registered turns (1k … 10k).

Keys are drawn from the source taxonomy with a seeded generator (1–2 intents, 0–2 domains per turn) and every
turn is routed to a DCN (``observe``). For each size we time registering all turns, then the median over
``--queries`` assemblies of random query keys, and report microseconds per candidate: flat means linear growth.
The peer is a naive re-implementation of the source's selection (score *every* stored message, then sort) on the
same data. Run:

    python benchmarks/dcs_scale.py [--sizes 1000,2000,5000,10000] [--queries 50] [--faithful]
"""
from __future__ import annotations

import argparse
import statistics
import time
from datetime import datetime, timedelta, timezone

import numpy as np

from ragbench.config import DcsConfig
from ragbench.dcs.assembler import DcsContextAssembler
from ragbench.dcs.key import DcsKey


def random_key(rng: np.random.Generator) -> DcsKey:
    intents = rng.choice(np.arange(1, 9), size=rng.integers(1, 3), replace=False)
    domains = rng.choice(np.arange(1, 5), size=rng.integers(0, 3), replace=False)
    return DcsKey(tuple(int(i) for i in intents), tuple(int(d) for d in domains))


def naive_scan(asm: DcsContextAssembler, key: DcsKey, limit: int) -> list[str]:
    """The full-scan peer: similarity of every stored message, sorted (no index)."""
    scored = [(m.key.similarity(key), m.message_id) for m in asm._messages.values()]
    scored = [s for s in scored if s[0] >= asm.config.eligibility_threshold]
    scored.sort(key=lambda s: -s[0])
    return [mid for _, mid in scored[:limit]]


def run(sizes: list[int], queries: int, faithful: bool, seed: int = 0) -> list[dict]:
    rows = []
    for n in sizes:
        rng = np.random.default_rng(seed)
        t0 = datetime(2025, 1, 1, tzinfo=timezone.utc)
        clock = {"now": t0}
        asm = DcsContextAssembler(DcsConfig(faithful=faithful, profile="source" if faithful else "improved"),
                                  clock=lambda: clock["now"])  # noqa: B023 - used within this iteration
        start = time.perf_counter()
        for i in range(n):
            clock["now"] = t0 + timedelta(seconds=30 * i)
            asm.observe(f"m{i}", random_key(rng), timestamp=clock["now"])
        register_s = time.perf_counter() - start
        qkeys = [random_key(rng) for _ in range(queries)]
        times, cands, naive = [], [], []
        for k in qkeys:
            node = asm.match_dcn(k)
            q = k.with_dcns((node.dcn_id,)) if node is not None else k
            s = time.perf_counter()
            asm.assemble(q)
            times.append(time.perf_counter() - s)
            cands.append(asm.log[-1].candidates)
            s = time.perf_counter()
            naive_scan(asm, q, asm.config.max_total)
            naive.append(time.perf_counter() - s)
        med = statistics.median(times)
        rows.append({"turns": n, "register_ms_total": 1000 * register_s, "register_us_per_turn": 1e6 * register_s / n,
                     "assemble_ms_median": 1000 * med, "candidates_median": statistics.median(cands),
                     "us_per_candidate": 1e6 * med / max(1, statistics.median(cands)),
                     "naive_scan_ms_median": 1000 * statistics.median(naive), "dcns": len(asm.nodes)})
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", default="1000,2000,5000,10000")
    ap.add_argument("--queries", type=int, default=50)
    ap.add_argument("--faithful", action="store_true")
    args = ap.parse_args()
    rows = run([int(s) for s in args.sizes.split(",")], args.queries, args.faithful)
    cols = list(rows[0])
    print("| " + " | ".join(cols) + " |")
    print("|" + "---:|" * len(cols))
    for r in rows:
        print("| " + " | ".join(f"{r[c]:.3f}" if isinstance(r[c], float) else str(r[c]) for c in cols) + " |")


if __name__ == "__main__":
    main()
