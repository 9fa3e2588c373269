"""Threads: concurrent first predictions on a freshly unpickled model (issue 14.3), and restarts
in worker threads that stop when the caller is interrupted (issue 14.4)."""
import _thread
import pickle
import signal
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

from mapdp_core import MAPDP
from mapdp_core.core.estimator import StopFlag, Stopped, run_many, until_stopped

THREADS = 8
ROUNDS = 12


def _data(rng, n=150):
    centres = np.array([[0, 0, 0], [6, 0, 2], [0, 7, -3], [8, 8, 8]], dtype=float)
    return np.vstack([rng.normal(c, 1.0, (n // 4, 3)) for c in centres])


@pytest.mark.parametrize("likelihood", [
    "normal_wishart", "spherical_gaussian", "gaussian_known_cov",
    {(0, 1): "normal_wishart", 2: "normal_gamma"},
])
def test_concurrent_first_predictions_on_an_unpickled_model_agree_with_serial(rng, likelihood):
    X = _data(rng)
    model = MAPDP(N0=1.0, likelihood=likelihood, prior=None, n_init=1, random_state=0).fit(X)
    new = X[::3] + 0.25
    expected = model.predict_proba(new)
    blob = pickle.dumps(model)
    for _ in range(ROUNDS):
        fresh = pickle.loads(blob)  # its statistics are rebuilt at the first prediction
        start = threading.Barrier(THREADS)

        def first_call(_):
            start.wait()  # every thread makes its first call at the same moment
            return fresh.predict_proba(new)

        with ThreadPoolExecutor(THREADS) as pool:
            results = list(pool.map(first_call, range(THREADS)))
        for got in results:
            np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-300)


def test_stop_flag_survives_pickling_fresh_and_stops_a_generator():
    flag = StopFlag()
    flag.set()
    assert not pickle.loads(pickle.dumps(flag)).is_set()  # a remote copy cannot be reached: it runs on
    gen = until_stopped(iter(range(5)), flag)
    with pytest.raises(Stopped):
        next(gen)


def test_a_failing_restart_stops_the_others_before_the_error_propagates():
    flag = StopFlag()
    finished = []

    def work(i):
        if i == 0:
            raise RuntimeError("boom")
        for _ in until_stopped(iter(range(400)), flag):
            time.sleep(0.005)  # a "sweep"
        finished.append(i)

    with pytest.raises(RuntimeError, match="boom"):
        run_many(work, range(4), n_jobs=2, stop=flag)
    assert flag.is_set() and flag.wait_idle(timeout=0)  # nothing left running when it propagated
    assert finished == []  # the others stopped at a sweep boundary instead of running 2 s each


def test_ctrl_c_stops_parallel_restarts_and_joins_them(rng):
    """Ctrl-C during fit(n_init=4, n_jobs=2): the exception propagates, and within 2 s no thread
    the fit started is still alive (before, the restarts kept both cores busy)."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)  # e.g. under nohup
    X = np.vstack([rng.normal(c, 1.0, (6000, 2)) for c in (0.0, 3.0, 6.0, 9.0)])
    model = MAPDP(N0=50.0, likelihood="normal_wishart", prior=None, n_init=4, n_jobs=2, max_iter=200,
                  tol=0.0, random_state=0)
    before = set(threading.enumerate())

    def interrupt_once_restarts_run():
        """Ctrl-C half a second after the fit's worker threads appear (not during validation)."""
        while not [t for t in threading.enumerate() if t not in before and t is not timer]:
            time.sleep(0.01)
        time.sleep(0.5)
        _thread.interrupt_main()

    timer = threading.Thread(target=interrupt_once_restarts_run, daemon=True)
    try:
        started = time.perf_counter()
        timer.start()
        with pytest.raises(KeyboardInterrupt):
            model.fit(X)
        interrupted = time.perf_counter() - started
        deadline = time.perf_counter() + 2.0
        while time.perf_counter() < deadline:
            left = [t for t in threading.enumerate() if t not in before and t is not timer and t.is_alive()]
            if not left:
                break
            time.sleep(0.05)
        assert not left, f"threads still running {time.perf_counter() - started - interrupted:.1f} s after Ctrl-C: {left}"
        assert interrupted < 60  # it did not run every restart to its end first
    finally:
        signal.signal(signal.SIGINT, previous)


def test_an_interrupt_without_a_signal_reaches_run_many_while_it_waits():
    """Issue 29: ``_thread.interrupt_main()`` (Jupyter's interrupt on Windows) sets the interrupt
    without a signal, so a wait on a lock never saw it: MAPDP()'s threaded restarts ran on. The
    wait wakes every 50 ms now; the workers (20 s each if never stopped) end at their next step."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    flag = StopFlag()
    finished = []

    def work(i):
        for _ in until_stopped(iter(range(4000)), flag):
            time.sleep(0.005)
        finished.append(i)

    timer = threading.Timer(0.3, _thread.interrupt_main)
    try:
        started = time.perf_counter()
        timer.start()
        with pytest.raises(KeyboardInterrupt):
            run_many(work, range(2), n_jobs=2, stop=flag)
        took = time.perf_counter() - started
        assert flag.is_set() and flag.wait_idle(timeout=0)
        assert finished == [] and took < 10.0, took  # not after the workers' 20 s
    finally:
        timer.cancel()
        signal.signal(signal.SIGINT, previous)
