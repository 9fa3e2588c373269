"""MAPDP().fit on Dask collections, on a LocalCluster of worker processes: the labels equal the
in-memory MAP-DP run over the same global visiting order from the same start (the sample's fit
extended to every row), and the joint to rounding; prediction is lazy and equals the in-memory
prediction; bad input is said in words."""
import numpy as np
import pandas as pd
import pytest

from mapdp_core import MAPDP
from mapdp_core.core.spec import ParsedData
from mapdp_core.engine.model_data import extend_partition
from mapdp_core.engine.sweeps import run_sweeps
from mapdp_core.models.partitioned_fit import plan, visiting_order

from test_exactness import mixed_data, three_shapes

distributed = pytest.importorskip("distributed")
da = pytest.importorskip("dask.array")
dd = pytest.importorskip("dask.dataframe")


def test_without_a_client_the_message_says_what_to_start():
    with pytest.raises(ValueError, match="no client is running: start one"):
        MAPDP(N0=3.0, likelihood="normal_wishart", prior=None).fit(da.zeros((10, 2), chunks=(5, 2)))


def _in_memory(params, table, lengths, seed, n_sample):
    """The same fit in memory: the sample's MAPDP, its partition extended to every row, and the
    serial sweeps over the parts' rows in the global order."""
    rows, seqs = plan(seed, lengths, n_sample)
    sample = table.iloc[rows] if isinstance(table, pd.DataFrame) else table[rows]
    sample_fit = MAPDP(**{**params, "restart_rows": None, "merge": None, "random_state": seed}).fit(sample)
    M = sample_fit._encode_new(table)
    start = extend_partition(sample_fit._parsed, np.asarray(sample_fit.component_labels_), M, sample_fit.N0_,
                             keep=(rows, np.asarray(sample_fit.component_labels_)))
    offsets = np.concatenate([[0], np.cumsum(lengths)])
    order = np.concatenate([lo + visiting_order(seq, n) for lo, seq, n in zip(offsets, seqs, lengths)])
    parsed = ParsedData(M, sample_fit._parsed.names, sample_fit._parsed.blocks, sample_fit._parsed.categories)
    states = list(run_sweeps(parsed, sample_fit.N0_, order, params.get("tol", 1e-6), 100, init=start))
    return states, sample_fit


def _check_exact(client, params, table, dask_table, lengths, n_sample=600):
    model = MAPDP(**params, restart_rows=n_sample).fit(dask_table)
    states, sample_fit = _in_memory(params, table, lengths, params["random_state"], n_sample)
    np.testing.assert_array_equal(model.labels_.compute(), states[-1].labels)
    assert model.neg_log_joint_ == pytest.approx(states[-1].neg_log_joint, rel=1e-12)
    assert model.n_iter_ == len(states)
    assert list(model.partitions_["moved"]) == [s.n_changed for s in states]
    np.testing.assert_array_equal(model.component_sizes_, states[-1].cluster_sizes)
    assert model.N0_ == sample_fit.N0_ and model.restart_rows_ == n_sample
    assert model.partitions_.attrs["parts"] == len(lengths)
    return model, states


def test_a_normal_wishart_block_in_parts_is_the_serial_run(client):
    X = three_shapes(1, 6000)
    X = X[np.random.default_rng(0).permutation(len(X))]
    params = dict(N0=3.0, likelihood="normal_wishart", prior=None, random_state=3)
    model, states = _check_exact(client, params, X, da.from_array(X, chunks=(1700, 2)), [1700, 1700, 1700, 900])
    assert sum(states[i].n_changed for i in range(len(states))) > 0  # the sweeps moved rows after the extension
    # prediction, lazily per part, is the in-memory model's
    held = three_shapes(9, 300)
    lazy = model.predict(da.from_array(held, chunks=(100, 2)))
    assert isinstance(lazy, da.Array)
    np.testing.assert_array_equal(lazy.compute(), model.predict(held))
    np.testing.assert_allclose(model.predict_proba(da.from_array(held, chunks=(100, 2))).compute(),
                               model.predict_proba(held))
    np.testing.assert_allclose(model.score_samples(da.from_array(held, chunks=(100, 2))).compute(),
                               model.score_samples(held))


def test_per_column_gaussians_in_parts_are_the_serial_run(client):
    X = three_shapes(2, 5000)
    X = X[np.random.default_rng(1).permutation(len(X))]
    params = dict(N0=1.0, likelihood="normal_gamma", prior=None, random_state=8)
    _check_exact(client, params, X, da.from_array(X, chunks=(1300, 2)), [1300, 1300, 1300, 1100])


def test_a_mixed_table_with_gaps_in_parts_is_the_serial_run(client):
    X = mixed_data(7, n=2400, missing=0.1)
    df = pd.DataFrame({"a": X[:, 0], "b": X[:, 1], "c": X[:, 2], "n": X[:, 10],
                       "kind": pd.Series(np.where(np.isnan(X[:, 9]), None, np.array(["x", "y", "z"])[
                           np.nan_to_num(X[:, 9]).astype(int)]), dtype=object)})
    df.loc[df.index % 11 == 0, "a"] = np.nan  # gaps in the Normal-Wishart block too
    likelihood = {("a", "b"): "normal_wishart", "c": "normal_gamma", "n": "poisson", "kind": "categorical"}
    params = dict(N0=1.0, likelihood=likelihood, prior=None, random_state=5)
    ddf = dd.from_pandas(df, npartitions=3)
    lengths = list(ddf.map_partitions(len).compute())
    model, _ = _check_exact(client, params, df, ddf, lengths)
    assert model.n_components_ >= 2
    lazy = model.predict(ddf)
    np.testing.assert_array_equal(lazy.compute().to_numpy(), model.predict(df))


def test_the_defaults_on_a_dask_array(client):
    X = three_shapes(3, 4000)
    model = MAPDP(random_state=0, restart_rows=800).fit(da.from_array(X, chunks=(1000, 2)))
    labels = model.labels_.compute()
    assert len(labels) == 4000 and model.n_clusters_ == 3
    assert model.hyperparameter_search_ is not None and model.restart_rows_ == 800
    assert np.bincount(labels).sum() == 4000
    for method in (model.k_evidence, model.impute):
        with pytest.raises(ValueError, match="rows stay on the workers"):
            method()


def test_empty_parts_and_input_order(client):
    X = three_shapes(5, 900)
    dX = da.from_array(X, chunks=((400, 0, 250, 250), (2,)))
    assert dX.numblocks[0] == 4
    params = dict(N0=3.0, likelihood="normal_wishart", prior=None, random_state=2, shuffle=False)
    model = MAPDP(**params, restart_rows=300).fit(dX)
    labels = model.labels_.compute()
    assert len(labels) == 900 and model.partitions_.attrs["parts"] == 4
    # the same labels as the serial run over the rows in the table's order, from the same start
    rows, _ = plan(2, [400, 250, 250], 300)
    sample_fit = MAPDP(**{**params, "restart_rows": None, "merge": None}).fit(X[rows])
    start = extend_partition(sample_fit._parsed, np.asarray(sample_fit.component_labels_), X, sample_fit.N0_,
                             keep=(rows, np.asarray(sample_fit.component_labels_)))
    parsed = ParsedData(X, sample_fit._parsed.names, sample_fit._parsed.blocks, sample_fit._parsed.categories)
    states = list(run_sweeps(parsed, 3.0, np.arange(900), 1e-6, 100, init=start))
    np.testing.assert_array_equal(labels, states[-1].labels)


def test_progress_per_round_and_stop(client):
    import threading

    from mapdp_core.models.partitioned_fit import FitStopped, fit_partitioned

    X = three_shapes(6, 3000)
    dX = da.from_array(X, chunks=(300, 2))
    params = dict(N0=3.0, likelihood="normal_wishart", prior=None, random_state=1, restart_rows=100)
    steps = []
    model = fit_partitioned(MAPDP(**params), dX, 100, progress=steps.append)
    history = model.partitions_
    assert history["moved"][1] > 0  # a second sweep that moves rows, and a third
    assert [s["phase"] for s in steps[:2]] == ["sample", "extension"]
    rounds = [s for s in steps if s["phase"] == "sweep"]
    assert len(rounds) == history["rounds"].sum() and rounds[-1]["committed"] == rounds[-1]["parts"] == 10
    assert model.converged_ and not model.partitions_.attrs["stopped"]

    stop = threading.Event()

    def stop_in_sweep_2(step):
        if step.get("sweep") == 2:
            stop.set()

    stopped = fit_partitioned(MAPDP(**params), dX, 100, progress=stop_in_sweep_2, stop=stop)
    # stopped after sweep 2's first round: sweep 2 is kept when that round finished it, else dropped
    assert stopped.partitions_.attrs["stopped"] and not stopped.converged_
    assert stopped.n_iter_ == (2 if history["rounds"][1] == 1 else 1)
    assert stopped.neg_log_joint_ == history["neg_log_joint"][stopped.n_iter_ - 1]
    assert len(stopped.labels_.compute()) == 3000  # the last complete sweep's labels, every row
    np.testing.assert_array_equal(stopped.labels_.compute() >= 0, True)
    stop.set()
    with pytest.raises(FitStopped, match="nothing is fitted"):
        fit_partitioned(MAPDP(**params), dX, 100, stop=stop)


def test_init_is_refused_in_words(client):
    with pytest.raises(ValueError, match="init= gives a starting partition"):
        MAPDP(init=np.zeros(10, dtype=int)).fit(da.zeros((10, 2), chunks=(5, 2)))


def test_a_category_the_sample_never_saw_is_named(client):
    rng = np.random.default_rng(0)
    df = pd.DataFrame({"x": rng.normal(size=3000), "kind": rng.choice(["a", "b"], 3000)})
    ddf = dd.from_pandas(df, npartitions=3)
    sampled, _ = plan(0, list(ddf.map_partitions(len).compute()), 300)
    rare = max(set(range(3000)) - set(sampled.tolist()))
    df.loc[rare, "kind"] = "rare"
    with pytest.raises(ValueError, match=rf"categories that the 300 sampled rows.*'kind': 'rare'.*row {rare}"):
        MAPDP(N0=1.0, likelihood={"x": "normal_gamma", "kind": "categorical"}, prior=None, random_state=0,
              restart_rows=300).fit(dd.from_pandas(df, npartitions=3))


def test_a_one_dimensional_dask_array_is_refused_in_words(client):
    with pytest.raises(ValueError, match="2 dimensions"):
        MAPDP().fit(da.zeros(10, chunks=5))
