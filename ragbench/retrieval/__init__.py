"""The retrieval stack: chunking, embeddings (ONNX MiniLM, hashing, cache), BM25, exact cosine, LSH and fusion,
behind the ``Chunker`` / ``Embedder`` / ``Retriever`` contracts of :mod:`ragbench.retrieval.base`.

Submodules load their heavy dependencies (onnxruntime, tokenizers) only when used."""
from .base import Chunker, Embedder, Retriever
from .bm25 import BM25Retriever
from .chunking import SentenceChunker, WholeDocumentChunker, WordWindowChunker
from .dense import DenseRetriever
from .embedding import CachedEmbedder, HashingEmbedder, OnnxEmbedder, embedding_hash
from .factory import IndexedParts, make_chunker, make_embedder, make_retriever
from .fusion import HybridRetriever, rrf
from .lsh import LshRetriever
from .retriever import retriever_from_store
from .trec import read_trec_run, write_trec_run

__all__ = ["Chunker", "Embedder", "Retriever", "BM25Retriever", "DenseRetriever", "LshRetriever",
           "HybridRetriever", "rrf", "WordWindowChunker", "SentenceChunker", "WholeDocumentChunker", "make_chunker",
           "OnnxEmbedder", "HashingEmbedder", "CachedEmbedder", "embedding_hash", "make_embedder", "make_retriever",
           "retriever_from_store", "read_trec_run", "write_trec_run", "IndexedParts"]
