"""Auto-tuning with Optuna (the ``tune`` extra): experiment files (:mod:`~ragbench.tune.space`) name a dataset, a search
space over dotted config fields and the metrics; :mod:`~ragbench.tune.objectives` measures a configuration on a
seeded tuning split; :mod:`~ragbench.tune.sweep` runs the study (parallel workers, resumable storage from
:mod:`~ragbench.tune.storage`); :mod:`~ragbench.tune.confirm` re-scores the best configuration on the held-out split
against the base; :mod:`~ragbench.tune.report` writes plots and MLflow runs; :mod:`~ragbench.tune.batch` runs
notebooks over parameter sets (papermill)."""
