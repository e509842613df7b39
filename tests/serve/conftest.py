"""The serve tests need the ``serve`` extra (FastAPI, uvicorn, PyJWT, prometheus-client)."""
import importlib.util

_MISSING = [m for m in ("fastapi", "uvicorn", "jwt", "prometheus_client") if importlib.util.find_spec(m) is None]
# A core-only install has none of them: skip the folder instead of failing at import.
collect_ignore_glob = ["test_*.py"] if _MISSING else []
