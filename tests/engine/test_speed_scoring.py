"""The threaded scoring of new rows (``ModelData.score_rows``) and the extension's shortcut give
the numbers of the one-thread kernel ``dp_mixture.score_rows`` and of the plain NumPy rule, bit
for bit (issue 26: faster, same results)."""
import math

import numpy as np
import pytest

from mapdp_core.core.spec import parse
from mapdp_core.engine import model_data
from mapdp_core.engine.model_data import ModelData, extension_labels
from mapdp_core.models.mapdp import _every_family_table


def _fitted(n=3000, n_new=5000, gaps=False):
    X, likelihood = _every_family_table(n + n_new)
    if gaps:
        X[np.random.default_rng(1).random(X.shape) < 0.05] = np.nan
    parsed = parse(X[:n], likelihood, None)
    labels = np.random.default_rng(2).integers(0, 4, n)
    labels[:4] = np.arange(4)
    model = ModelData(parsed)
    K = model.start(labels.astype(np.int64))
    return model, K, X[n:], parsed, labels


def _reference_scores(model, M, K):
    """What ``score_rows`` computes on the calling thread alone (every row in one kernel call)."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(model_data.os, "cpu_count", lambda: 1)
        return model.score_rows(M, K)


@pytest.mark.parametrize("gaps", [False, True])
@pytest.mark.parametrize("rows_per_thread", [700, 1])
def test_threaded_score_rows_equal_one_thread_kernel(monkeypatch, gaps, rows_per_thread):
    model, K, M, _, _ = _fitted(gaps=gaps)
    want = _reference_scores(model, M, K)
    monkeypatch.setattr(model_data, "SCORE_THREAD_ROWS", rows_per_thread)
    monkeypatch.setattr(model_data.os, "cpu_count", lambda: 4)
    got = model.score_rows(M, K)
    for a, b in zip(got, want):
        assert a.shape == b.shape
        assert np.array_equal(a, b, equal_nan=True)
        assert np.array_equal(a.view(np.int64), b.view(np.int64))  # bit for bit


@pytest.mark.parametrize("gaps", [False, True])
def test_extension_labels_equal_plain_rule(gaps):
    model, K, M, parsed, labels = _fitted(gaps=gaps)
    n0 = 0.3
    nlp, nlp_prior = _reference_scores(model, M, K)
    logw = np.log(model.cnt[:K])[None, :] - nlp
    want = np.argmax(logw, axis=1)
    want[math.log(n0) - nlp_prior > logw.max(axis=1)] = K
    got = extension_labels(parsed, labels.astype(np.int64), M, n0, chunk=1700)
    assert np.array_equal(got, want)
