"""mapdp_core: MAP-DP clustering (Raykov et al., PLOS ONE 2016; EJS 2016), numba-accelerated."""
from ._config import ensure_numba_cache_dir

ensure_numba_cache_dir()

from .families import FAMILIES  # noqa: E402
from .mapdp import MAPDP, default_prior, map_dp, warm_up  # noqa: E402
from .state import SweepState  # noqa: E402

__all__ = ["MAPDP", "map_dp", "default_prior", "warm_up", "SweepState", "FAMILIES"]
