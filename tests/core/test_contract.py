"""One contract for every registered algorithm (the registry's own parametrize_with_checks)."""
import numpy as np
import pytest
from sklearn.base import clone

from mapdp_core import ALGORITHMS, SweepEstimator, SweepState, register
from mapdp_core.core.estimator import Problem
from mapdp_core.models.registry import algorithm

#: small settings per algorithm so that each check runs in well under a second
FAST = {"MAP-DP": {"max_iter": 30}, "K-means": {"n_clusters": 3}, "DP-means": {"lam": 4.0},
        "Gibbs": {"n_sweeps": 8}, "SUGS": {}, "DP search": {"beam_size": 5},
        "E-M": {"n_components": 3, "max_iter": 30}, "Variational DP": {"n_components": 5, "max_iter": 30}}
#: parameter values each algorithm must refuse (an algorithm not listed: N0 = -1)
BAD = {"K-means": {"n_clusters": 0}, "DP-means": {"lam": -1.0}, "Gibbs": {"n_sweeps": 0},
       "DP search": {"beam_size": 0}, "E-M": {"n_components": 0}, "Variational DP": {"n_components": 0}}
#: algorithms that label every row in every state; the others (SUGS, DP search, ...) build a
#: clustering row by row, and every state but their last may leave rows at -1 (not visited yet)
COMPLETE = {"MAP-DP", "K-means", "DP-means", "Gibbs", "E-M", "Variational DP"}


@pytest.fixture(scope="module")
def blobs():
    rng = np.random.default_rng(0)
    centres = np.array([[0.0, 0.0], [6.0, 0.0], [0.0, 6.0]])
    z = rng.integers(0, 3, 120)
    return centres[z] + rng.normal(size=(120, 2))


def make(name, **extra):
    cls = algorithm(name)
    params = {**FAST.get(name, {}), "random_state": 3, **extra}
    if "n_init" in cls().get_params():
        params.setdefault("n_init", 2)
    if "shuffle" in cls().get_params():
        params.setdefault("shuffle", True)
    return cls(**params)


@pytest.fixture(params=list(ALGORITHMS))
def name(request):
    return request.param


def test_declares_what_the_app_needs(name):
    cls = ALGORITHMS[name]
    assert issubclass(cls, SweepEstimator) and cls.name == name
    assert cls.input in ("mixed", "numeric") and cls.keep in ("last", "best")
    assert cls().restart_key in SweepState.__dataclass_fields__  # SUGS's depends on its parameters
    assert cls.monotone is None or cls.monotone in SweepState.__dataclass_fields__
    for key, control in cls.ui.items():
        assert key in cls().get_params(), f"{name}.ui names {key!r}, which is not a parameter"
        assert control.label


def test_validates_eagerly(name, blobs):
    bad = BAD.get(name, {"N0": -1.0})
    assert set(bad) <= set(make(name).get_params()), f"add a parameter value {name} refuses to BAD"
    with pytest.raises(ValueError):
        make(name, **bad).iter_sweeps(blobs)  # raises before the first next()
    with pytest.raises(ValueError):
        make(name, **bad).fit(blobs)


def test_states_are_read_only_and_numbered_without_gaps(name, blobs):
    states = list(make(name).iter_sweeps(blobs))
    for t, state in enumerate(states):
        labels = state.labels
        assert not labels.flags.writeable
        assert labels.shape == (len(blobs),)
        placed = labels[labels != -1]
        if name in COMPLETE or t == len(states) - 1:
            assert placed.size == labels.size, f"{name}: rows at -1 in state {t + 1} of {len(states)}"
        assert set(np.unique(placed)) == set(range(state.n_clusters))
        assert np.array_equal(np.bincount(placed, minlength=state.n_clusters), state.cluster_sizes)
        assert state.algorithm == name


def test_reproducible_under_random_state(name, blobs):
    a, b = make(name).fit(blobs), make(name).fit(blobs)
    assert np.array_equal(a.labels_, b.labels_)
    np.testing.assert_allclose(a.restart_values_, b.restart_values_)
    assert np.isfinite(a.restart_values_).all()


def test_monotone_objective_where_claimed(name, blobs):
    cls = ALGORITHMS[name]
    if cls.monotone is None:
        pytest.skip(f"{name} claims no monotone objective")
    values = [getattr(s, cls.monotone) for s in make(name).iter_sweeps(blobs)]
    steps = np.diff(values[1:])  # MAP-DP's first sweep replaces a count (PLOS Appendix B)
    assert np.all(steps <= 1e-7 * (1 + np.abs(values[1:-1])))


def test_fit_keeps_the_best_restart_and_from_states_agrees(name, blobs):
    est = make(name)
    fitted = clone(est).fit(blobs)
    assert fitted.restart_values_.min() == pytest.approx(fitted.restart_values_[np.argmin(fitted.restart_values_)])
    best = int(np.argmin(fitted.restart_values_))
    states = list(est.iter_sweeps(blobs, restart=best))
    again = clone(est).from_states(blobs, states, fitted.restart_values_)
    assert np.array_equal(again.labels_, fitted.labels_)
    assert again.n_clusters_ == fitted.n_clusters_ and again.n_iter_ == fitted.n_iter_


def test_restarts_are_independent_of_threads(blobs):
    from mapdp_core import MAPDP

    one = MAPDP(n_init=3, random_state=5).fit(blobs)
    threads = MAPDP(n_init=3, random_state=5, n_jobs=2).fit(blobs)
    np.testing.assert_array_equal(one.restart_neg_log_joints_, threads.restart_neg_log_joints_)


class _Halves(SweepEstimator):
    """A trivial algorithm written in a test: split the rows at the median of the first column."""

    name = "Halves (test)"
    input = "numeric"
    restart_key = "objective"

    def __init__(self, random_state=None):
        self.random_state = random_state

    def _validate(self, X):
        X = np.asarray(X, dtype=float)
        if X.ndim != 2 or len(X) < 2:
            raise ValueError("Halves needs a 2-D array with at least 2 rows.")
        return Problem(X, len(X))

    def _sweeps(self, problem, order, rng):
        x = problem.data[:, 0]
        labels = (x > np.median(x)).astype(np.int64)
        labels = np.unique(labels, return_inverse=True)[1]
        sizes = np.bincount(labels)
        yield SweepState(iteration=1, labels=labels, n_clusters=len(sizes), objective=float(np.var(x)),
                         neg_log_joint=np.nan, n_changed=len(x), cluster_sizes=sizes,
                         summaries={"mean": np.zeros((len(sizes), problem.data.shape[1])), "covariance": {},
                                    "proportions": {}},
                         elapsed=0.0, converged=True, algorithm=self.name)


def test_a_new_algorithm_needs_only_its_class_and_the_registry(blobs):
    from explorer import comparison, runner, sources

    register(_Halves)
    try:
        assert _Halves().fit(blobs).n_clusters_ == 2
        data = sources.table_data(__import__("pandas").DataFrame(blobs, columns=["a", "b"]))
        run = runner.run(data, "Halves (test)", {}, restarts=1)
        assert run.final.n_clusters == 2
        table = comparison.compare(data, ["MAP-DP", "Halves (test)"], restarts=1)
        assert list(table["algorithm"]) == ["MAP-DP", "Halves (test)"]
    finally:
        ALGORITHMS.pop("Halves (test)", None)


def test_engine_imports_neither_pandas_nor_sklearn():
    """The numba engine (kernels, families, arrays) stands alone: run in a fresh process."""
    import subprocess
    import sys

    code = ("import sys, importlib.util, pathlib\n"
            "root = pathlib.Path('mapdp_core')\n"
            "import types; pkg = types.ModuleType('mapdp_core'); pkg.__path__ = [str(root)]; sys.modules['mapdp_core'] = pkg\n"
            "import mapdp_core.kernels.dp_mixture, mapdp_core.kernels.baseline\n"
            "bad = [m for m in ('pandas', 'sklearn') if m in sys.modules]\n"
            "print(','.join(bad))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600,
                         cwd=str(__import__("pathlib").Path(__file__).resolve().parents[2]))
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == ""
