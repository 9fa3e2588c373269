"""Issue 27: every PLOS scenario beside K-means and E-M (told the true K) and MAP-DP (told
nothing), as one grid, the way scikit-learn's clustering comparison lays out data sets x
algorithms; drawn on Home on request."""
import numpy as np
import pytest

from apptools import chart, ok, start
from explorer.comparison import OVERVIEW_ALGORITHMS, overview
from explorer.sources import scenario_data
from mapdp_core.evaluation.metrics import clustering_scores


def test_the_overview_has_every_scenario_and_algorithm_with_its_own_scores():
    table, points = overview(["5.2", "5.5"], n=400, seed=1)
    assert list(table["scenario"]) == ["5.2"] * 3 + ["5.5"] * 3
    assert list(table["algorithm"]) == list(OVERVIEW_ALGORITHMS) * 2
    told = dict(zip(table["algorithm"], table["told"]))
    assert told == {"K-means": "K = 3", "E-M": "K = 3", "MAP-DP": "nothing"}
    for _, row in table.iterrows():
        data = scenario_data(row["scenario"], n=400, seed=1)
        assert points[row["scenario"]].shape == (400, 2)
        assert np.allclose(points[row["scenario"]], data.X[["x", "y"]].to_numpy())
        scores = clustering_scores(data.truth, row["labels"])  # the scores are of the labels shown
        assert row["nmi"] == pytest.approx(scores["nmi"]) and row["K"] == len(np.unique(row["labels"]))
    kmeans = table[table["algorithm"] == "K-means"]
    assert (kmeans["K"] == 3).all()  # told the true K


def test_home_draws_the_overview_on_request():
    at = start(300)
    at.switch_page("pages/home.py").run()
    ok(at)
    with pytest.raises(AssertionError):
        chart(at, "home_overview_chart")  # not computed until asked: Home opens fast
    at.button(key="home_overview").click().run()
    ok(at)
    spec = chart(at, "home_overview_chart")
    titles = [a["text"] for a in spec["layout"]["annotations"]]
    assert sum("NMI" in t for t in titles) == 6 * len(OVERVIEW_ALGORITHMS)
    assert any("told nothing" in t for t in titles) and any("told K = 3" in t for t in titles)
