"""``ragbench serve``: the assistant, the research hub and EE-RAG chat behind an authenticated HTTP API
(FastAPI + uvicorn). See docs/serve.md."""
from .settings import ServeConfig, ServeSettings

__all__ = ["ServeConfig", "ServeSettings", "create_app"]


def __getattr__(name: str) -> object:
    # FastAPI is the optional extra `serve`: import it only when the app is asked for.
    if name == "create_app":
        from .app import create_app

        return create_app
    raise AttributeError(name)
