"""Evaluation: dataset loaders (:mod:`~ragbench.eval.datasets`), measures (:mod:`~ragbench.eval.metrics` = IR
measures equal to trec_eval's + RAG measures), paired statistics (:mod:`~ragbench.eval.stats`), run validity checks,
the experiment harness (:mod:`~ragbench.eval.harness`), and one module per evaluation: BEIR, the golden set
(answers and retrieval), the EE-RAG benchmark and token study, DCS thread recovery and LoCoMo memory."""
