"""Seeded generators for the six synthetic scenarios of Raykov et al. (2016).

Section 5 of "What to do when K-means clustering fails: a simple yet principled
alternative algorithm" (PLOS ONE 11(9): e0162259) studies six two-dimensional
data sets, each drawn from a mixture of K = 3 Gaussians with N = 4000 points,
built to expose one failure of K-means (Table 1, Figs 1-6).  The paper gives no
numeric parameters, so the parameters below re-create each scenario as the text
and figure captions describe it, and were tuned so that K-means (k-means++,
best of 10 restarts) scores an NMI close to the paper's Table 1 while the
true-parameter Bayes classifier stays near-perfect (except 5.6, which has
deliberate overlap):

=======  =============================================  ==========  ======
section  what it shows                                  K-means     Bayes
                                                        NMI (ours)  oracle
=======  =============================================  ==========  ======
5.1      spherical, unequal radii, equal counts         0.62        1.00
5.2      spherical, equal radii, 69% / 29% / 2% counts  0.68        0.95
5.3      spherical, equal radii and counts, two         0.66        0.94
         outlier pairs
5.4      elliptical, equal volume and counts, one       0.52        1.00
         cluster rotated by 90 degrees
5.5      elliptical, different covariances and counts   1.00        1.00
         (12% / 28% / 60%), far apart
5.6      elliptical, different covariances and counts   0.54        0.90
         (65% / 30% / 5%), significant overlap
=======  =============================================  ==========  ======

K-means: scikit-learn ``KMeans(3, n_init=10)``, seed 0, N = 4000 (other data
seeds move it by about 0.02).  Oracle: each Gaussian point given to the
component of highest posterior under the true parameters (outliers excluded),
roughly the best any clustering can do.  (Paper, Table 1, K-means column: 0.57, 0.48, 0.67, 0.56, 1.00, 0.56.)

The exact means, covariances and proportions are returned by
:func:`plos_scenario_parameters`.  Rows are shuffled, so visiting the data in
identity order (MAP-DP's default) does not visit one cluster after another.

Scenario 5.3 has fixed outlier positions: isolating the top-right pair beats
separating two of the spherical clusters in the K-means objective only while
the clusters are small, so from about ``n = 6000`` on K-means recovers the
three clusters (NMI about 0.93) and absorbs the outliers into them.  The other
scenarios keep their character at any ``n``.
"""
from __future__ import annotations

import numpy as np

from mapdp_core.core.validation import check_int, check_real, check_seed

__all__ = [
    "PLOS_SCENARIOS",
    "plos_scenario",
    "plos_scenario_nd",
    "plos_scenario_parameters",
]

#: One-line description of each synthetic scenario of the PLOS paper, Section 5.
PLOS_SCENARIOS: dict[str, str] = {
    "5.1": "Spherical clusters, unequal radii, equal counts, well separated (Fig 1).",
    "5.2": "Spherical clusters, equal radii, unequal counts 69%/29%/2%, well separated (Fig 4).",
    "5.3": "Spherical clusters, equal radii and counts, plus two pairs of outliers (Fig 3).",
    "5.4": "Elliptical clusters, equal volumes and counts, one rotated 90 degrees, negligible overlap (Fig 2).",
    "5.5": "Elliptical clusters, different covariances and counts 12%/28%/60%, no overlap (Fig 5).",
    "5.6": "Elliptical clusters, different covariances and counts 65%/30%/5%, significant overlap (Fig 6).",
}


def _cov(sd_major: float, sd_minor: float, angle_deg: float) -> np.ndarray:
    """Covariance of an ellipse with the given axis standard deviations, rotated by angle."""
    t = np.deg2rad(angle_deg)
    rot = np.array([[np.cos(t), -np.sin(t)], [np.sin(t), np.cos(t)]])
    return rot @ np.diag([sd_major**2, sd_minor**2]) @ rot.T


def _iso(sd: float) -> np.ndarray:
    return np.eye(2) * sd**2


# Parameters of each scenario.  "outliers" are (label, points) groups appended to
# the Gaussian data; their count is taken out of n.
_SPECS: dict[str, dict] = {
    # Large diffuse cluster and two small tight ones close to each other:
    # merging the two small clusters costs K-means less than splitting the big one.
    "5.1": dict(
        means=[(0.0, 0.0), (12.0, 1.25), (12.0, -1.25)],
        covs=[_iso(3.0), _iso(0.5), _iso(0.3)],
        weights=[1 / 3, 1 / 3, 1 / 3],
        outliers=[],
    ),
    # The 2% cluster sits next to the 69% cluster; K-means' equal-volume cells
    # hand a large slice of the big cluster to the small one.
    "5.2": dict(
        means=[(0.0, 0.0), (5.0, 0.0), (0.0, 5.0)],
        covs=[_iso(1.0), _iso(1.0), _iso(1.0)],
        weights=[0.69, 0.29, 0.02],
        outliers=[],
    ),
    # Equilateral triangle of unit clusters (side 5); a far top-right pair and a
    # nearer top-left pair of outliers.  K-means spends one centre on the top-right
    # pair and merges two real clusters.
    "5.3": dict(
        means=[(0.0, 0.0), (5.0, 0.0), (2.5, 2.5 * np.sqrt(3.0))],
        covs=[_iso(1.0), _iso(1.0), _iso(1.0)],
        weights=[1 / 3, 1 / 3, 1 / 3],
        outliers=[
            (3, [(80.0, 80.0), (80.4, 80.3)]),
            (4, [(-25.0, 30.0), (-25.3, 30.4)]),
        ],
    ),
    # Two horizontal needles stacked 2.5 apart (about 7 minor s.d.) and the same
    # needle turned upright to their right.  K-means cuts the stacked pair into
    # left and right halves; even started from the true means it drifts away
    # from the truth (NMI about 0.85).
    "5.4": dict(
        means=[(0.0, 0.0), (0.0, 2.5), (13.0, 1.25)],
        covs=[_cov(4.0, 0.35, 0.0), _cov(4.0, 0.35, 0.0), _cov(4.0, 0.35, 90.0)],
        weights=[1 / 3, 1 / 3, 1 / 3],
        outliers=[],
    ),
    "5.5": dict(
        means=[(-12.0, 8.0), (12.0, 8.0), (0.0, -8.0)],
        covs=[_cov(2.0, 0.5, 45.0), _cov(3.0, 1.0, -30.0), _cov(4.0, 1.5, 0.0)],
        weights=[0.12, 0.28, 0.60],
        outliers=[],
    ),
    # A long horizontal 65% cluster, a steep 30% cluster whose lower tail crosses
    # it, and a small 5% cluster above its left end.
    "5.6": dict(
        means=[(0.0, 0.0), (6.0, 7.0), (-8.0, 6.0)],
        covs=[_cov(5.0, 1.0, 0.0), _cov(3.0, 0.6, 72.0), _cov(1.0, 0.5, 45.0)],
        weights=[0.65, 0.30, 0.05],
        outliers=[],
    ),
}


# ---------------------------------------------------------------------------
# Validation
# ---------------------------------------------------------------------------

def _check_section(section) -> str:
    if not isinstance(section, str):
        raise ValueError(
            f"section must be a string such as '5.1', got {section!r} of type "
            f"{type(section).__name__}; valid sections: {', '.join(PLOS_SCENARIOS)}"
        )
    key = section.strip()
    if key not in _SPECS:
        raise ValueError(
            f"unknown scenario section {section!r}; valid sections: {', '.join(PLOS_SCENARIOS)}"
        )
    return key


def _min_points(spec: dict) -> int:
    return len(spec["weights"]) + sum(len(pts) for _, pts in spec["outliers"])


def _cluster_counts(weights: np.ndarray, n: int) -> np.ndarray:
    """Split n into len(weights) counts by largest remainder, each at least 1."""
    raw = weights * n
    counts = np.floor(raw).astype(np.int64)
    short = n - counts.sum()
    if short:
        order = np.argsort(-(raw - counts), kind="stable")
        counts[order[:short]] += 1
    for k in np.flatnonzero(counts == 0):  # tiny n: borrow from the largest cluster
        counts[np.argmax(counts)] -= 1
        counts[k] = 1
    return counts


def _generate(key: str, n: int, rng: np.random.Generator, shuffle: bool):
    spec = _SPECS[key]
    n_out = sum(len(pts) for _, pts in spec["outliers"])
    counts = _cluster_counts(np.asarray(spec["weights"], dtype=float), n - n_out)
    xs, ys = [], []
    for label, (mean, cov, count) in enumerate(zip(spec["means"], spec["covs"], counts)):
        chol = np.linalg.cholesky(cov)
        xs.append(rng.standard_normal((count, 2)) @ chol.T + np.asarray(mean))
        ys.append(np.full(count, label, dtype=np.int64))
    for label, pts in spec["outliers"]:
        xs.append(np.asarray(pts, dtype=np.float64))
        ys.append(np.full(len(pts), label, dtype=np.int64))
    X = np.ascontiguousarray(np.vstack(xs), dtype=np.float64)
    y = np.concatenate(ys)
    if shuffle:
        perm = rng.permutation(n)
        X, y = X[perm], y[perm]
    return np.ascontiguousarray(X), y


# ---------------------------------------------------------------------------
# Public API
# ---------------------------------------------------------------------------

def plos_scenario_parameters(section: str) -> dict:
    """Generating parameters of one synthetic scenario.

    Parameters
    ----------
    section : str
        One of ``"5.1"`` ... ``"5.6"`` (see :data:`PLOS_SCENARIOS`).

    Returns
    -------
    dict
        ``"means"`` (3, 2) array, ``"covariances"`` (3, 2, 2) array,
        ``"weights"`` (3,) array of mixing proportions (of the Gaussian points),
        ``"outliers"`` list of ``(label, (m, 2) array)`` fixed outlier groups
        (only 5.3 has any), and ``"description"``.  All arrays are fresh copies.

    Raises
    ------
    ValueError
        If ``section`` is not a known scenario.
    """
    key = _check_section(section)
    spec = _SPECS[key]
    return {
        "means": np.array(spec["means"], dtype=np.float64),
        "covariances": np.array(spec["covs"], dtype=np.float64),
        "weights": np.array(spec["weights"], dtype=np.float64),
        "outliers": [(label, np.array(pts, dtype=np.float64)) for label, pts in spec["outliers"]],
        "description": PLOS_SCENARIOS[key],
    }


def plos_scenario(
    section: str, n: int = 4000, seed: int | None = 0, *, shuffle: bool = True
) -> tuple[np.ndarray, np.ndarray]:
    """Draw one of the six two-dimensional scenarios of the PLOS paper, Section 5.

    Parameters
    ----------
    section : str
        ``"5.1"`` ... ``"5.6"``; see :data:`PLOS_SCENARIOS` for what each shows
        and :func:`plos_scenario_parameters` for the exact parameters.
    n : int, default 4000
        Total number of points (the paper uses 4000).  Cluster sizes follow the
        scenario's proportions exactly (largest-remainder rounding, at least one
        point per cluster).  For ``"5.3"`` the four outliers are part of ``n``.
    seed : int, numpy.random.Generator or None, default 0
        Seed of the random draw; the same seed always gives the same data.
        ``None`` draws fresh entropy.
    shuffle : bool, default True
        Randomly permute the rows (with the same generator).  When False, rows
        are grouped by label in increasing label order.

    Returns
    -------
    X : ndarray of shape (n, 2), float64
        The data, C-contiguous.
    y : ndarray of shape (n,), int64
        True labels.  Gaussian clusters are labelled 0, 1, 2 in the order of
        :func:`plos_scenario_parameters`.  In ``"5.3"`` the far top-right
        outlier pair is labelled 3 and the top-left pair 4, so the truth there
        has five groups (the paper's MAP-DP also finds K = 5).

    Raises
    ------
    ValueError
        If ``section`` is unknown, ``n`` is not an integer or is too small to
        give every cluster (and outlier) a point (3, or 7 for ``"5.3"``), or
        ``seed`` is invalid.

    Examples
    --------
    >>> X, y = plos_scenario("5.2", n=1000, seed=1)
    >>> X.shape, sorted(set(y.tolist()))
    ((1000, 2), [0, 1, 2])
    """
    key = _check_section(section)
    n = check_int(n, "n", _min_points(_SPECS[key]))
    rng = check_seed(seed)
    return _generate(key, n, rng, bool(shuffle))


def plos_scenario_nd(
    section: str,
    n: int = 4000,
    d: int = 10,
    seed: int | None = 0,
    *,
    noise_scale: float | None = None,
    offset_scale: float = 0.0,
    shuffle: bool = True,
) -> tuple[np.ndarray, np.ndarray]:
    """A PLOS scenario embedded in ``d`` dimensions.

    The first two columns are exactly ``plos_scenario(section, n, seed)``
    (same seed, same points, same labels).  Columns 2 .. d-1 are independent
    Gaussian noise, drawn afterwards from the same generator.

    Parameters
    ----------
    section : str
        ``"5.1"`` ... ``"5.6"``.
    n : int, default 4000
        Number of points.
    d : int, default 10
        Total dimension, at least 2 (``d == 2`` returns the 2-D scenario).
    seed : int, numpy.random.Generator or None, default 0
        Seed of the random draw.
    noise_scale : float or None, default None
        Standard deviation of the extra coordinates.  ``None`` uses the pooled
        within-cluster standard deviation of the 2-D scenario,
        ``sqrt(sum_k w_k trace(Sigma_k) / 2)``, so the noise is of the same
        scale as the clusters themselves.
    offset_scale : float, default 0.0
        If positive, each Gaussian cluster k gets a random offset
        ``o_k ~ N(0, (offset_scale * noise_scale)^2 I)`` added to its extra
        coordinates (outliers get none).  With the default 0 the extra columns
        carry no information about the labels: the clustering problem is the
        2-D one, hidden among ``d - 2`` nuisance dimensions.
    shuffle : bool, default True
        As in :func:`plos_scenario`.

    Returns
    -------
    X : ndarray of shape (n, d), float64
    y : ndarray of shape (n,), int64
        Same labels as :func:`plos_scenario`.

    Raises
    ------
    ValueError
        On an unknown section, a non-integer or too small ``n`` or ``d``, a
        non-positive or non-finite ``noise_scale``, a negative or non-finite
        ``offset_scale``, or an invalid seed.
    """
    key = _check_section(section)
    spec = _SPECS[key]
    n = check_int(n, "n", _min_points(spec))
    d = check_int(d, "d", 2)
    if noise_scale is None:
        w = np.asarray(spec["weights"], dtype=float)
        traces = np.array([np.trace(c) for c in spec["covs"]])
        noise_scale = float(np.sqrt(np.dot(w, traces) / 2.0))
    else:
        noise_scale = check_real(noise_scale, "noise_scale", positive=True)
    offset_scale = check_real(offset_scale, "offset_scale", low=0)
    rng = check_seed(seed)

    X2, y = _generate(key, n, rng, bool(shuffle))
    if d == 2:
        return X2, y
    X = np.empty((n, d), dtype=np.float64)
    X[:, :2] = X2
    X[:, 2:] = rng.standard_normal((n, d - 2)) * noise_scale
    if offset_scale > 0:
        k = len(spec["weights"])
        offsets = rng.standard_normal((k, d - 2)) * (offset_scale * noise_scale)
        gaussian = y < k
        X[gaussian, 2:] += offsets[y[gaussian]]
    return X, y
