"""``ragbench batch BATCH.yaml [--no-mlflow] [--json]``: execute notebooks × parameter sets with papermill into
``notebooks/runs/`` (see :mod:`ragbench.tune.batch`), logging each executed notebook to MLflow. A failing notebook
is reported and the batch goes on; the exit code is 1 when any notebook failed (or could not be logged)."""
from __future__ import annotations

import argparse
import json
import sys


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("batch", help="run notebooks × parameter sets with papermill (logged to MLflow)")
    p.add_argument("batch", metavar="BATCH.yaml", help="jobs: [{notebook, parameters}], output_dir, cwd, kernel")
    p.add_argument("--no-mlflow", action="store_true", help="do not log the executed notebooks to MLflow")
    p.add_argument("--json", action="store_true", help="end the output with one JSON line of the results")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from ..tune.batch import load_batch, run_batch

    batch = load_batch(args.batch)
    report = run_batch(batch, track=not args.no_mlflow, show_progress=not (args.quiet or args.json))
    for r in report.results:
        status = "ok    " if r.ok else "FAILED"
        print(f"{status} {r.seconds:6.1f}s  {r.notebook} {json.dumps(r.parameters, sort_keys=True)} -> {r.output}"
              + (f"\n       {r.error}" if r.error else ""))
    n_bad = len(report.failed)
    print(f"{len(report.results) - n_bad} of {len(report.results)} notebooks succeeded")
    for err in report.tracking_errors:
        print(f"error: {err}", file=sys.stderr)
    if n_bad:
        print(f"error: {n_bad} notebook(s) failed: " + ", ".join(r.output for r in report.failed), file=sys.stderr)
    if args.json:
        print(json.dumps({"ok": len(report.results) - n_bad, "failed": [r.output for r in report.failed],
                          "runs": [r.__dict__ for r in report.results]}, default=str))
    return 1 if n_bad or report.tracking_errors else 0
