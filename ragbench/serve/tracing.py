"""OpenTelemetry spans around retrieval and generation, only when ``serve.otlp_endpoint`` is set.

The answering service is not changed: its retriever and chat model are wrapped in proxies whose ``search`` /
``complete`` run inside ``rag.retrieve`` / ``rag.generate`` spans (the Enterprise source's span names). The
OpenTelemetry SDK and OTLP exporter are the optional extra ``otel``; asking for tracing without them is a
:class:`~ragbench.errors.MissingExtraError` naming the pip command.
"""
from __future__ import annotations

from typing import Any

from ..errors import require_extra
from .logs import current_request_id


class Tracer:
    """A no-op unless :meth:`setup` found an endpoint."""

    def __init__(self) -> None:
        self._tracer: Any = None
        self._provider: Any = None

    @property
    def enabled(self) -> bool:
        return self._tracer is not None

    def setup(self, endpoint: str | None, service_name: str = "ragbench-serve") -> Tracer:
        if not endpoint:
            return self
        purpose = "serve.otlp_endpoint (OpenTelemetry tracing)"
        exporter = require_extra("opentelemetry.exporter.otlp.proto.http.trace_exporter", "otel", purpose)
        resources = require_extra("opentelemetry.sdk.resources", "otel", purpose)
        sdk = require_extra("opentelemetry.sdk.trace", "otel", purpose)
        export = require_extra("opentelemetry.sdk.trace.export", "otel", purpose)
        OTLPSpanExporter, Resource = exporter.OTLPSpanExporter, resources.Resource
        TracerProvider, BatchSpanProcessor = sdk.TracerProvider, export.BatchSpanProcessor
        self._provider = TracerProvider(resource=Resource.create({"service.name": service_name}))
        self._provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter(endpoint=endpoint, timeout=5)))
        self._tracer = self._provider.get_tracer("ragbench.serve")
        return self

    def span(self, name: str, **attributes: Any) -> Any:
        rid = current_request_id()
        attrs = {k: v for k, v in {**attributes, "ragbench.request_id": rid}.items() if v is not None}
        return self._tracer.start_as_current_span(name, attributes=attrs)

    def shutdown(self) -> None:
        if self._provider is not None:
            self._provider.shutdown()

    def wrap_retriever(self, retriever: Any) -> Any:
        return TracedRetriever(retriever, self) if self.enabled else retriever

    def wrap_model(self, model: Any) -> Any:
        return TracedChatModel(model, self) if self.enabled else model


class _Proxy:
    def __init__(self, inner: Any, tracer: Tracer) -> None:
        self._inner = inner
        self._tracer = tracer

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


class TracedRetriever(_Proxy):
    def search(self, query: str, k: int = 10, principal: Any = None) -> Any:
        with self._tracer.span("rag.retrieve", **{"rag.mode": str(getattr(self._inner, "name", "")), "rag.k": k}) as s:
            hits = self._inner.search(query, k=k, principal=principal)
            s.set_attribute("rag.hits", len(hits))
            return hits


class TracedChatModel(_Proxy):
    def complete(self, messages: Any, **kwargs: Any) -> Any:
        with self._tracer.span("rag.generate", **{"rag.model": str(getattr(self._inner, "model_id", ""))}) as s:
            out = self._inner.complete(messages, **kwargs)
            s.set_attribute("rag.completion_tokens", int(getattr(out, "completion_tokens", 0) or 0))
            return out
