"""Missing values: the clustering survives gaps (exact marginalisation), and imputed values
for display come from each row's cluster."""
import numpy as np
import pandas as pd
from sklearn.metrics import normalized_mutual_info_score as nmi

from mapdp_core import MAPDP
from mapdp_core.data.synthetic import clinical_simulator


def remove_at_random(df, rate, seed):
    rng = np.random.default_rng(seed)
    out = df.copy()
    for c in out.columns:
        out.loc[rng.random(len(out)) < rate, c] = None if out[c].dtype == object else np.nan
    return out


def test_twenty_percent_missing_keeps_the_complete_data_clustering():
    X, y, likelihood = clinical_simulator(n=600, n_subtypes=3, missing_rate=0.0, seed=0)
    complete = MAPDP(prior=None, N0=1.0, likelihood=likelihood, n_init=3, random_state=0).fit(X)
    gappy = remove_at_random(X, 0.2, seed=1)
    assert 0.17 < gappy.isna().to_numpy().mean() < 0.23
    holed = MAPDP(prior=None, N0=1.0, likelihood=likelihood, n_init=3, random_state=0).fit(gappy)
    assert len(holed.labels_) == len(X)
    agreement = nmi(complete.labels_, holed.labels_)
    print(f"NMI(complete, 20% missing) = {agreement:.3f}; vs truth {nmi(y, complete.labels_):.3f} -> "
          f"{nmi(y, holed.labels_):.3f}; K {complete.n_clusters_} -> {holed.n_clusters_}")
    assert agreement > 0.8


def test_imputed_values_come_from_the_rows_cluster():
    rng = np.random.default_rng(2)
    z = np.repeat([0, 1], 50)
    df = pd.DataFrame({
        "score": rng.normal(10 * z, 1.0), "smoker": (rng.random(100) < np.where(z, 0.9, 0.1)).astype(float),
        "stage": np.where(z, "late", "early"), "visits": rng.poisson(np.where(z, 12, 1)).astype(float),
    })
    holes = df.copy()
    holes.loc[[0, 60], "score"] = np.nan
    holes.loc[[1, 61], "smoker"] = np.nan
    holes.loc[[2, 62], "stage"] = None
    holes.loc[[3, 63], "visits"] = np.nan
    m = MAPDP(prior=None, n_init=1, N0=1.0, likelihood={"score": "normal_gamma", "smoker": "bernoulli", "stage": "categorical",
                                  "visits": "poisson"}, shuffle=False).fit(holes)
    filled, mask = m.impute()
    assert filled.shape == df.shape and mask.to_numpy().sum() == 8
    assert abs(filled.loc[0, "score"]) < 1 and abs(filled.loc[60, "score"] - 10) < 1
    assert filled.loc[1, "smoker"] == 0 and filled.loc[61, "smoker"] == 1
    assert filled.loc[2, "stage"] == "early" and filled.loc[62, "stage"] == "late"
    assert filled.loc[3, "visits"] <= 2 and 9 <= filled.loc[63, "visits"] <= 13
    observed = ~mask.to_numpy()
    np.testing.assert_array_equal(filled.to_numpy()[observed].astype(str), holes.to_numpy()[observed].astype(str))
