"""The install-time compilation (mapdp_core._precompile) compiles what a real fit runs."""
import numba
import numpy as np

from mapdp_core import _kernels, _precompile, mapdp, sugs
from mapdp_core._model import ModelData
from mapdp_core.families import warm_up_example
from mapdp_core.registry import ALGORITHMS
from mapdp_core.spec import parse


def test_precompiled_sweep_types_are_those_a_fit_passes(monkeypatch):
    """The types compiled ahead are the ones mapdp._run hands the sweep (recorded from a real fit)."""
    seen = []
    real_sweep = _kernels.sweep

    def recording_sweep(*args):
        seen.append(tuple(numba.typeof(a) for a in args))
        return real_sweep(*args)

    monkeypatch.setattr(mapdp._kernels, "sweep", recording_sweep)
    X, likelihood = warm_up_example()
    mapdp.MAPDP(N0=1.0, likelihood=likelihood, prior=None, n_init=1, max_iter=2, shuffle=False).fit(X)
    assert seen and all(types == _precompile.sweep_argument_types() for types in seen)


def test_precompiled_sugs_pass_types_are_those_a_fit_passes(monkeypatch):
    """The SUGS pass is compiled ahead by signature too (in the sweep's process): its types are the
    ones sugs._run hands it, in input order and in a shuffled order, with a grid of concentrations."""
    seen = []
    real_pass = _kernels.sugs_pass

    def recording_pass(*args):
        seen.append(tuple(numba.typeof(a) for a in args))
        return real_pass(*args)

    monkeypatch.setattr(sugs._kernels, "sugs_pass", recording_pass)
    X, likelihood = warm_up_example()
    sugs.SUGS(N0=1.0, likelihood=likelihood, n_init=2, shuffle=False, block_size=2, random_state=0).fit(X)
    sugs.SUGS(N0_grid=[0.5, 2.0], likelihood=likelihood, n_init=1, shuffle=True, random_state=1).fit(X)
    assert seen and all(types == _precompile.sugs_argument_types() for types in seen)


def test_arrays_only_model_has_the_same_types_as_a_built_one():
    X, likelihood = warm_up_example()
    built = ModelData(parse(X, likelihood, None))
    bare = ModelData(parse(X, likelihood, None), arrays_only=True)
    assert numba.typeof(bare.fams) == numba.typeof(built.fams)
    assert [np.shape(a) for f in bare.fams for a in f] == [np.shape(a) for f in built.fams for a in f]


def test_the_algorithms_skipped_by_compile_others_are_registered():
    """compile_others skips the hooks that run the sweep by name: a renamed algorithm would
    silently compile the sweep twice (it did, once)."""
    assert set(_precompile.SWEEP_ALGORITHMS) <= set(ALGORITHMS)
    _precompile.compile_others()
    assert _kernels.score_rows.signatures and _kernels.add_all.signatures
