"""Restarts, grids and folds run through one place (``estimator.run_many``, joblib): on a Dask
cluster (here a LocalCluster of two worker processes, so every task is pickled and run in
another interpreter) they give exactly what the local threads give for the same random_state."""
import numpy as np
import pytest
from joblib import parallel_config

from mapdp_core import MAPDP, cross_validate, n0_grid
from mapdp_core.core.estimator import run_many

from test_exactness import three_shapes

distributed = pytest.importorskip("distributed")


def _pid(_):
    import os

    return os.getpid()


def test_run_many_under_the_dask_config_runs_on_the_workers(client):
    import os

    with parallel_config(backend="dask"):
        pids = set(run_many(_pid, range(8), -1))
    assert os.getpid() not in pids and len(pids) >= 1
    assert pids <= set(client.run(os.getpid).values())


def test_restarts_on_dask_are_the_local_ones(client):
    X = three_shapes(3, 600)
    kwargs = dict(N0=3.0, likelihood="normal_wishart", prior=None, n_init=4, random_state=11)
    local = MAPDP(**kwargs).fit(X)
    with parallel_config(backend="dask"):
        remote = MAPDP(n_jobs=-1, **kwargs).fit(X)
    np.testing.assert_array_equal(remote.labels_, local.labels_)
    np.testing.assert_array_equal(remote.restart_neg_log_joints_, local.restart_neg_log_joints_)
    assert remote.neg_log_joint_ == local.neg_log_joint_


def test_subsample_restarts_and_the_automatic_search_on_dask(client):
    X = three_shapes(4, 900)
    local = MAPDP(random_state=5, restart_rows=300).fit(X)
    with parallel_config(backend="dask"):
        remote = MAPDP(random_state=5, restart_rows=300, n_jobs=-1).fit(X)
    np.testing.assert_array_equal(remote.labels_, local.labels_)
    assert remote.hyperparameters_ == local.hyperparameters_
    assert remote.neg_log_joint_ == local.neg_log_joint_


def test_grids_and_folds_on_dask(client):
    X = three_shapes(6, 240)
    steps = []
    local = n0_grid(X, [0.5, 3.0, 20.0], "normal_wishart", n_init=2, random_state=2)
    with parallel_config(backend="dask"):
        remote = n0_grid(X, [0.5, 3.0, 20.0], "normal_wishart", n_init=2, random_state=2, n_jobs=-1,
                         on_step=lambda done, total: steps.append((done, total)))
        cv = cross_validate(X, [1.0, 5.0], [1.0], "normal_wishart", n_folds=3, random_state=1, n_jobs=-1)
    assert steps == [(1, 3), (2, 3), (3, 3)]  # in the caller's thread, in order
    assert remote.table.equals(local.table)
    assert cv.folds.equals(cross_validate(X, [1.0, 5.0], [1.0], "normal_wishart", n_folds=3, random_state=1).folds)


def test_run_many_keeps_order_and_reports_progress_locally():
    seen = []
    out = run_many(lambda x: x * x, range(7), None, on_done=lambda d, t: seen.append((d, t)))
    assert out == [x * x for x in range(7)]
    assert seen == [(d, 7) for d in range(1, 8)]
    assert run_many(lambda x: -x, [3], 1, on_done=lambda d, t: seen.append((d, t))) == [-3]


def test_local_runs_take_this_process_threads_and_a_chosen_backend_takes_joblib():
    import threading

    from mapdp_core.core import estimator

    assert estimator._local_threads()
    names = run_many(lambda _: threading.current_thread().name, range(4), 2)
    assert all(name.startswith("ThreadPoolExecutor") for name in names)
    with parallel_config(backend="loky"):
        assert not estimator._local_threads()
    with parallel_config(backend="threading"):
        assert estimator._local_threads()
