import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))


@pytest.fixture(scope="session", autouse=True)
def _compiled_kernels():
    """Compile (or load) every numba kernel once, the opt-in algorithms' too, so that no single
    test (an AppTest's time limit, a browser test's wait) pays for it."""
    import mapdp_core
    mapdp_core.warm_up(everything=True)


@pytest.fixture
def rng():
    return np.random.default_rng(12345)
