"""The install-time compilation (mapdp_core._precompile) compiles what a real fit runs."""
import numba
import numpy as np

from mapdp_core import MAPDP, _precompile
from mapdp_core.kernels import dp_mixture as _kernels
from mapdp_core.engine import sweeps
from mapdp_core.engine.model_data import ModelData
from mapdp_core.families import warm_up_example
from mapdp_core.models.registry import ALGORITHMS
from mapdp_core.core.spec import parse


def test_precompiled_sweep_types_are_those_a_fit_passes(monkeypatch):
    """The types compiled ahead are the ones sweeps.run_sweeps hands the sweep (recorded from a real fit)."""
    seen = []
    real_sweep = _kernels.sweep

    def recording_sweep(*args):
        seen.append(tuple(numba.typeof(a) for a in args))
        return real_sweep(*args)

    monkeypatch.setattr(sweeps.dp_mixture, "sweep", recording_sweep)
    X, likelihood = warm_up_example()
    MAPDP(N0=1.0, likelihood=likelihood, prior=None, n_init=1, max_iter=2, shuffle=False).fit(X)
    assert seen and all(types == _precompile.sweep_argument_types() for types in seen)


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
    assert _kernels.score_rows.signatures and _kernels.move_rows.signatures


def test_only_the_opt_in_algorithms_are_left_to_their_first_run():
    """The first visit pays for every precompiled kernel: the algorithms left out are the opt-in
    ones, and each still has a warm-up hook for ``warm_up(everything=True)``."""
    left_out = {name for name, cls in ALGORITHMS.items() if not cls.precompile}
    assert left_out == {"SUGS", "V-SUGS"}
    assert all(hasattr(ALGORITHMS[name], "warm_up") for name in left_out)
