"""Read single predictive densities and marginals out of the real kernel, for tests."""
import numpy as np

from mapdp_core.kernels import dp_mixture as _kernels
from mapdp_core.engine.model_data import ModelData
from mapdp_core.core.spec import parse


def engine_neg_log_predictive(likelihood, x, cluster, prior):
    """-ln f(x | cluster, theta0) as the sweep computes it (data-only constants included).

    ``cluster`` is an (n, D) array of the other members (n may be 0: prior predictive).
    """
    x = np.atleast_1d(np.asarray(x, dtype=float))
    cluster = np.asarray(cluster, dtype=float).reshape(-1, x.size)
    X = np.vstack([cluster, x[None, :]])
    model = ModelData(parse(X, likelihood, prior))
    last = X.shape[0] - 1
    if cluster.shape[0] == 0:
        return model.d_new[last] + model.pconst[last]
    labels = np.zeros(X.shape[0], dtype=np.int64)
    labels[last] = 1
    model.start(labels)
    out = np.empty(2)
    _kernels.cluster_nlp(last, 2, model.fams, out)
    return out[0] + model.pconst[last]


def engine_neg_log_joint(X, labels, N0, likelihood, prior):
    model = ModelData(parse(X, likelihood, prior))
    labels = np.asarray(labels, dtype=np.int64).copy()
    K = model.start(labels)
    return model.neg_log_joint(K, N0)
