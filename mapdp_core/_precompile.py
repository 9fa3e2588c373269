"""Fill numba's disk cache at install time, using two cores.

``python -m mapdp_core._precompile`` compiles the MAP-DP sweep (the largest kernel, about
40 % of the compile time) in one process while a second process compiles every other kernel
of the algorithms marked ``precompile`` (the opt-in SUGS and V-SUGS compile at their first
run), then loads everything in the calling process through :func:`mapdp_core.warm_up`
(which compiles whatever the two parts missed, so the result is the same as a plain
``warm_up()``, only sooner on a machine with two cores or more). numba compiles on one
thread, so a single process leaves the second core idle; the two processes write different
functions' cache files, which numba keeps apart. Run by ``make`` after the install.
"""
from __future__ import annotations

import os
import subprocess
import sys
import time


def _tiny_model(arrays_only: bool = False):
    """The model of the tiny every-family table; unless ``arrays_only``, building it runs
    (and so compiles) the small kernels ``reset_slots`` and ``point_terms``."""
    from .families import warm_up_example
    from mapdp_core.core.spec import parse
    from mapdp_core.engine.model_data import ModelData

    X, likelihood = warm_up_example()
    return ModelData(parse(X, likelihood, None), arrays_only=arrays_only)


#: the registered algorithms whose warm-up hooks run the MAP-DP sweep (compiled apart, by
#: :func:`compile_sweep`); :func:`compile_others` skips their hooks
SWEEP_ALGORITHMS = ("MAP-DP", "Gibbs")


def sweep_argument_types(model=None) -> tuple:
    """numba's types of ``dp_mixture.sweep``'s arguments as the engine passes them (``engine.sweeps.run_sweeps``)
    for ``model`` (default: the tiny every-family table, arrays only)."""
    import numba
    import numpy as np

    model = _tiny_model(arrays_only=True) if model is None else model
    N = model.N
    no_sampling = np.zeros(0)
    args = (np.arange(N, dtype=np.int64), 0, N, np.zeros(N, dtype=np.int64), 1, True, np.zeros(1), 0.0, model.d_new,
            model.pconst, model.cnt, model.logcnt, model.fams, no_sampling, no_sampling, np.zeros((0, 0)), 0, 0,
            np.zeros(model.capacity, dtype=np.uint8), 0.0, False)
    return tuple(numba.typeof(a) for a in args)


def compile_sweep() -> None:
    """Compile ``dp_mixture.sweep`` for the engine's argument types without running it."""
    from mapdp_core.kernels import dp_mixture

    dp_mixture.sweep.compile(sweep_argument_types())


def compile_others() -> None:
    """Compile the other MAP-DP kernels (by calling them on the tiny model) and the other
    registered algorithms' kernels (the warm-up hooks of those marked ``precompile``), but not
    the MAP-DP sweep (the hooks of :data:`SWEEP_ALGORITHMS` are skipped)."""
    import numpy as np

    from mapdp_core.kernels import dp_mixture
    from mapdp_core.models.registry import ALGORITHMS

    model = _tiny_model()
    N = model.N
    labels = np.zeros(N, dtype=np.int64)
    dp_mixture.move_rows(np.arange(N, dtype=np.int64), labels, 1, model.cnt, model.logcnt, model.fams)
    dp_mixture.log_marginals(1, model.fams, np.zeros(1))
    dp_mixture.cluster_nlp(0, 1, model.fams, np.zeros(1))
    dp_mixture.score_rows(0, N, 1, 1, model.fams, np.zeros((N, 1)), np.zeros(N), np.zeros(N))
    for name, cls in ALGORITHMS.items():
        hook = getattr(cls, "warm_up", None)
        if hook is not None and cls.precompile and name not in SWEEP_ALGORITHMS:
            hook()


def main() -> int:
    t0 = time.perf_counter()
    parts = [subprocess.Popen([sys.executable, "-W", "ignore", "-c",
                               f"from mapdp_core._precompile import {part}; {part}()"], env=os.environ.copy())
             for part in ("compile_sweep", "compile_others")]
    failed = [p.wait() for p in parts]
    from mapdp_core import warm_up

    rest = warm_up()  # loads the two parts' cache; compiles anything they missed
    print(f"kernels compiled in {time.perf_counter() - t0:.0f} s"
          + (" (a part failed; compiled in one process instead)" if any(failed) else "")
          + (f", of which {rest:.0f} s after the two parts" if rest >= 1 else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
