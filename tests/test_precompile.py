"""The install-time compilation (mapdp_core._precompile) compiles what a real fit runs."""
import numba
import numpy as np

from mapdp_core import _kernels, _precompile
from mapdp_core._model import ModelData
from mapdp_core.families import warm_up_example
from mapdp_core.spec import parse


def test_precompiled_sweep_signature_is_the_one_a_fit_uses():
    _precompile.compile_sweep()
    rng = np.random.default_rng(3)
    X = np.column_stack([rng.normal(size=30), rng.normal(size=30), rng.poisson(2.0, 30)]).astype(float)
    model = ModelData(parse(X, {(0, 1): "normal_wishart", 2: "poisson"}, None))
    N = model.N
    args = (np.arange(N, dtype=np.int64), 0, np.zeros(N, dtype=np.int64), 1, True, 0.0, model.d_new,
            model.pconst, model.cnt, model.logcnt, model.fams, np.zeros(0), np.zeros(0))
    assert tuple(numba.typeof(a) for a in args) in _kernels.sweep.signatures


def test_arrays_only_model_has_the_same_types_as_a_built_one():
    X, likelihood = warm_up_example()
    built = ModelData(parse(X, likelihood, None))
    bare = ModelData(parse(X, likelihood, None), arrays_only=True)
    assert numba.typeof(bare.fams) == numba.typeof(built.fams)
    assert [np.shape(a) for f in bare.fams for a in f] == [np.shape(a) for f in built.fams for a in f]


def test_compile_others_runs():
    _precompile.compile_others()
    assert _kernels.score_rows.signatures and _kernels.add_all.signatures
