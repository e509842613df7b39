"""Paired tests, corrections and bootstrap: hand-computed values, scipy agreement, cross-process determinism."""
from __future__ import annotations

import json
import math
import subprocess
import sys

import numpy as np
import pytest
from scipy import stats as sps

from ragbench.errors import ConfigError, SchemaError
from ragbench.eval.stats import (EXACT_LIMIT, bonferroni, bootstrap_ci, compare, correct, holm, paired_ttest,
                                 permutation_test, wilcoxon, win_tie_loss)

A = [0.80, 0.55, 0.91, 0.40, 0.66, 0.73, 0.58, 0.99, 0.35, 0.62, 0.71, 0.50]
B = [0.70, 0.60, 0.85, 0.20, 0.66, 0.60, 0.50, 0.90, 0.40, 0.52, 0.65, 0.45]


def test_hand_computed_ttest_and_permutation():
    # d = [1, 2, 3]: t = 2 / (1/√3) = √12 on 2 df; for 2 df the two-sided p is 1 − t/√(2 + t²) = 1 − √(12/14).
    assert paired_ttest([1, 2, 3], [0, 0, 0]) == pytest.approx(1 - math.sqrt(12 / 14), abs=1e-12)
    # Sign flips of (1, 2, 3): sums 6 4 2 0 0 −2 −4 −6; |sum| ≥ 6 in 2 of 8.
    assert permutation_test([1, 2, 3], [0, 0, 0]) == pytest.approx(0.25)
    # Wilcoxon exact: all five differences positive → p = 2 / 2^5.
    assert wilcoxon([1, 2, 3, 4, 5], [0, 0, 0, 0, 0]) == pytest.approx(2 / 32)


def test_agreement_with_scipy():
    assert paired_ttest(A, B) == pytest.approx(sps.ttest_rel(A, B).pvalue, abs=1e-12)
    # A − B has one zero and tied magnitudes: normal approximation (zeros dropped) …
    d = np.round(np.array(A) - np.array(B), 12)  # decimal data: ties must not depend on float noise
    assert wilcoxon(A, B) == pytest.approx(sps.wilcoxon(d, zero_method="wilcox", method="approx").pvalue,
                                           abs=1e-12)
    # … while distinct non-zero differences use the exact distribution.
    a2, b2 = [0.9, 0.4, 0.75, 0.3, 0.62, 0.81], [0.5, 0.45, 0.5, 0.1, 0.3, 0.8]
    assert wilcoxon(a2, b2) == pytest.approx(sps.wilcoxon(a2, b2, method="exact").pvalue, abs=1e-12)
    ref = sps.permutation_test((np.array(A), np.array(B)), lambda x, y: np.mean(x - y), vectorized=False,
                               permutation_type="samples", n_resamples=np.inf, alternative="two-sided")
    assert len(A) - 1 <= EXACT_LIMIT  # one tie, so the exact path is taken
    assert permutation_test(A, B) == pytest.approx(ref.pvalue, abs=1e-12)


def test_monte_carlo_permutation_is_seeded_and_close_to_exact():
    rng = np.random.default_rng(3)
    a = rng.random(40)
    b = a - 0.05 + rng.normal(0, 0.2, 40)
    p1, p2 = permutation_test(a, b, n_resamples=4000, seed=5), permutation_test(a, b, n_resamples=4000, seed=5)
    assert p1 == p2
    assert p1 == pytest.approx(paired_ttest(a, b), abs=0.05)  # large-sample agreement of the two tests


def test_degenerate_inputs():
    assert paired_ttest([1, 1], [1, 1]) == wilcoxon([1, 1], [1, 1]) == permutation_test([1, 1], [1, 1]) == 1.0
    assert paired_ttest([2, 2], [1, 1]) == 0.0
    with pytest.raises(SchemaError):
        paired_ttest([1, 2], [1])
    with pytest.raises(SchemaError):
        wilcoxon([], [])
    with pytest.raises(SchemaError):
        permutation_test([1, float("nan")], [1, 2])


def test_holm_and_bonferroni_hand_computed():
    p = [0.01, 0.04, 0.03, 0.20]
    assert holm(p) == pytest.approx([0.04, 0.09, 0.09, 0.20])
    assert bonferroni(p) == pytest.approx([0.04, 0.16, 0.12, 0.80])
    assert correct([0.01, float("nan"), 0.04]) == pytest.approx([0.02, float("nan"), 0.04], nan_ok=True)
    assert correct(p, "bonferroni") == pytest.approx(bonferroni(p))
    with pytest.raises(ConfigError):
        correct(p, "bh")


def test_win_tie_loss_and_compare():
    assert win_tie_loss(A, B) == (9, 1, 2)
    c = compare(A, B, seed=1, n_resamples=2000)
    assert (c.wins, c.ties, c.losses, c.n) == (9, 1, 2, 12)
    assert c.mean_diff == pytest.approx(np.mean(np.array(A) - np.array(B)))
    assert c.ci_low < c.mean_diff < c.ci_high


def test_bootstrap_matches_scipy_and_constant():
    low, high = bootstrap_ci(A, n_resamples=3000, seed=11)
    ref = sps.bootstrap((np.array(A),), np.mean, n_resamples=3000, method="percentile",
                        rng=np.random.default_rng(11)).confidence_interval
    assert (low, high) == (ref.low, ref.high)
    assert bootstrap_ci([0.5, 0.5, 0.5]) == (0.5, 0.5)
    with pytest.raises(ConfigError):
        bootstrap_ci([0.1, 0.2], confidence=1.5)


def test_bootstrap_same_seed_same_interval_in_new_process():
    here = bootstrap_ci(A, n_resamples=2000, seed=42)
    code = ("import json; from ragbench.eval.stats import bootstrap_ci; "
            f"print(json.dumps(bootstrap_ci({A!r}, n_resamples=2000, seed=42)))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert tuple(json.loads(out)) == here
    assert bootstrap_ci(A, n_resamples=2000, seed=43) != here
