"""Result plots shared by the evaluations (matplotlib with the Agg backend; byte-identical PNGs for the same
numbers)."""
from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from ..errors import require_extra

#: Name endings (in snake case) of measures that are counts, not rates in [0, 1]: drawn on their own axis.
COUNT_SUFFIXES = ("_tokens", "_calls", "_ms", "_size", "_docs", "_seconds")


def is_count(measure: str) -> bool:
    """Whether a measure is a count (tokens, calls, milliseconds, documents) rather than a rate in [0, 1]:
    ``ContextTokens``, ``context_tokens``, ``ModelCalls``, ``latency_ms``, ``LeakedDocs``…"""
    snake = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", str(measure)).lower()
    return snake.endswith(COUNT_SUFFIXES)


def panels(aggregate: Any) -> list[list[str]]:
    """The measure columns of each panel: rates (0–1 axis) first, then counts (their own axis); empty panels and
    all-NaN columns are left out."""
    data = aggregate.dropna(axis=1, how="all")
    parts = [[c for c in data.columns if not is_count(c)], [c for c in data.columns if is_count(c)]]
    return [p for p in parts if p]


def pyplot(purpose: str = "plotting") -> Any:
    """``matplotlib.pyplot`` on the file-only Agg backend, or :class:`~ragbench.errors.MissingExtraError` with the
    install line when matplotlib is absent."""
    matplotlib = require_extra("matplotlib", "track", purpose)
    matplotlib.use("Agg")
    return require_extra("matplotlib.pyplot", "track", purpose)


def _bars(ax: Any, data: Any, width: float, labels: bool) -> None:
    for i, system in enumerate(data.index):
        xs = [j + i * width for j in range(len(data.columns))]
        ax.bar(xs, data.loc[system].fillna(0).to_numpy(), width, label=str(system) if labels else None)
    ax.set_xticks([j + (len(data.index) - 1) * width / 2 for j in range(len(data.columns))], list(data.columns))


def bar_chart(aggregate: Any, path: str | Path, title: str = "golden set") -> Path:
    """Grouped bars, one group per measure and one bar per system: rates on a 0–1 axis, counts (context tokens,
    model calls) on a second panel with their own axis."""
    plt = pyplot("the result bar chart")

    data = aggregate.dropna(axis=1, how="all")
    parts = [data[cols] for cols in panels(data)]
    width = 0.8 / max(1, len(data.index))
    ratios = [len(p.columns) for p in parts] or [1]
    fig, axes = plt.subplots(1, len(parts) or 1, figsize=(max(6, 1.4 * len(data.columns) + 2), 4), dpi=100,
                             gridspec_kw={"width_ratios": ratios}, squeeze=False)
    for n, (ax, part) in enumerate(zip(axes[0], parts, strict=False)):
        _bars(ax, part, width, labels=n == 0)
        if is_count(part.columns[0]):
            ax.set_ylabel("count (mean per question)")
        else:
            ax.set_ylim(0, 1.05)
            ax.set_ylabel("rate (mean over questions)")
    fig.suptitle(title)
    if len(data.index):
        fig.legend(loc="lower center", ncol=min(6, len(data.index)), fontsize="small", frameon=False)
    fig.tight_layout(rect=(0, 0.08, 1, 1))
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    # Fixed metadata so the same numbers give byte-identical PNGs.
    fig.savefig(p, format="png", metadata={"Software": None})
    plt.close(fig)
    return p
