"""Run pytest as a core-only install would: the optional extras (tracking, tuning, notebooks, benchmarks, the local
LLM, the server) cannot be imported, so every test that needs one must skip with a reason instead of failing.

    python tests/core_only.py [pytest arguments]      # e.g. --collect-only -q, or nothing for the fast suite

Before pytest starts, every finder on ``sys.meta_path`` is wrapped so that it does not see the extras' top-level
packages: importing one raises the ordinary ``ModuleNotFoundError`` and ``importlib.util.find_spec`` returns
None, exactly as when the package is not installed (modules already imported are dropped first). The nbval
plugin is disabled (it imports nbformat): the notebook tests are slow-marked and need the notebooks extra anyway.
"""
from __future__ import annotations

import importlib.abc
import sys
from typing import Any, Sequence

#: Top-level packages of the optional extras (pyproject.toml: track, tune, notebooks, bench, llm, serve, wordnet).
BLOCKED = frozenset({
    "optuna", "mlflow", "matplotlib", "psycopg2", "papermill", "nbformat", "nbclient", "ipykernel", "jupyterlab",
    "faiss", "bm25s", "rank_bm25", "llama_cpp", "fastapi", "uvicorn", "starlette", "wn",
})


class HideExtras(importlib.abc.MetaPathFinder):
    """Wraps one finder: blocked packages are not found, everything else is delegated."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner

    def find_spec(self, fullname: str, path: Any, target: Any = None) -> Any:
        if fullname.partition(".")[0] in BLOCKED:
            return None
        find = getattr(self.inner, "find_spec", None)
        return find(fullname, path, target) if find is not None else None

    def find_distributions(self, *args: Any, **kwargs: Any) -> Any:
        # importlib.metadata asks the finders for distributions (pytest's plugin entry points need this).
        find = getattr(self.inner, "find_distributions", None)
        return find(*args, **kwargs) if find is not None else iter(())

    def invalidate_caches(self) -> None:
        if hasattr(self.inner, "invalidate_caches"):
            self.inner.invalidate_caches()


def install() -> None:
    for name in [m for m in sys.modules if m.partition(".")[0] in BLOCKED]:
        del sys.modules[name]
    sys.meta_path[:] = [HideExtras(f) for f in sys.meta_path]


def main(argv: Sequence[str]) -> int:
    install()
    import pytest

    return int(pytest.main(["-p", "no:nbval", "-p", "no:cacheprovider", *argv]))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
