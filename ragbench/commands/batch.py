"""``ragbench batch BATCH.yaml``: execute notebooks × parameter sets with papermill into ``notebooks/runs/`` (see
:mod:`ragbench.tune.batch`), logging each executed notebook to MLflow. A failing notebook is reported and the batch
goes on; the exit code is 1 when any notebook failed (or could not be logged). With ``--json`` stdout is one JSON
line ``{"ok", "failed", "runs"}`` (each run with its ``mlflow_run_id``)."""
from __future__ import annotations

import argparse
import json

from ._common import Output, add_output_options, add_tracking_option, show_progress


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("batch", help="run notebooks × parameter sets with papermill (logged to MLflow)")
    p.add_argument("batch", metavar="BATCH.yaml", help="jobs: [{notebook, parameters}], output_dir, cwd, kernel")
    add_output_options(p)
    add_tracking_option(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from ..tune.batch import load_batch, run_batch

    out = Output(args)
    batch = load_batch(args.batch)
    report = run_batch(batch, track=not args.no_mlflow, show_progress=show_progress(args))
    for r in report.results:
        status = "ok    " if r.ok else "FAILED"
        out.text(f"{status} {r.seconds:6.1f}s  {r.notebook} {json.dumps(r.parameters, sort_keys=True)} -> {r.output}"
                 + (f"\n       {r.error}" if r.error else ""))
    n_bad = len(report.failed)
    out.text(f"{len(report.results) - n_bad} of {len(report.results)} notebooks succeeded")
    for err in report.tracking_errors:
        out.error(err)
    if n_bad:
        out.error(f"{n_bad} notebook(s) failed: " + ", ".join(r.output for r in report.failed))
    out.json({"ok": len(report.results) - n_bad, "failed": [r.output for r in report.failed],
              "runs": [r.__dict__ for r in report.results]})
    return 1 if n_bad or report.tracking_errors else 0
