"""Issue 27: a teacher picks K-means' starting centres as rows on a chart in Explore; K-means then
runs once from exactly those rows (K = their number)."""
import numpy as np
import pytest

from apptools import chart, ok, plotly_array, start, table
from explorer import runner, sources
from mapdp_core.evaluation.metrics import clustering_scores
from mapdp_core.models.kmeans import KMeans
from ui.common import selected_rows


def test_picked_rows_are_kmeans_starting_centres():
    at = start(300)
    at.radio(key="w_kmeans_start").set_value("picked").run()
    ok(at)
    assert any("No rows picked yet" in i.value for i in at.info)
    picker = chart(at, "kmeans_centres")
    assert picker["data"][0]["hovertemplate"].startswith("row ")
    d = at.session_state["data"]
    rows = [int(r) for r in np.flatnonzero(d.truth == d.truth[0])[:3]]  # three centres in one true group
    at.session_state["settings"]["K-means:start_rows"] = rows
    at.run()
    ok(at)
    Z = runner.numeric_matrix(d)
    expected = KMeans(n_clusters=3, init=Z[rows], n_init=1).fit(Z).labels_
    shown = table(at, {"algorithm", "K", "NMI"}).set_index("algorithm").loc["K-means"]
    assert shown["K"] == 3
    assert shown["NMI"] == pytest.approx(clustering_scores(d.truth, expected)["nmi"], abs=5e-4)
    said = [c.value for c in at.caption if c.value.startswith("Starting centres")]
    assert said and f"rows {rows[0] + 1}, {rows[1] + 1}, {rows[2] + 1}" in said[0]
    picked = chart(at, "kmeans_centres")["data"][1]
    assert list(plotly_array(picked["customdata"])) == [r + 1 for r in rows]
    at.button(key="kmeans_centres_clear").click().run()
    ok(at)
    assert at.session_state["settings"]["K-means:start_rows"] == []


def test_selected_points_become_rows_and_centre_markers_are_ignored():
    shown = np.array([10, 20, 30, 40])
    event = {"selection": {"points": [{"curve_number": 0, "point_index": 2}, {"curve_number": 0, "point_index": 0},
                                      {"curve_number": 1, "point_index": 0}, {"curve_number": 0, "point_index": 2}]}}
    assert selected_rows(event, shown) == [10, 30]
    assert selected_rows(None, shown) == [] and selected_rows({"selection": {"points": []}}, shown) == []


def test_runner_says_plainly_when_picked_rows_cannot_start():
    d = sources.scenario_data("5.2", n=400)
    with pytest.raises(ValueError, match="no rows were picked"):
        runner.estimator(d, "K-means", {"start_rows": ()})
    with pytest.raises(ValueError, match="outside the data"):
        runner.estimator(d, "K-means", {"start_rows": (0, d.n_rows)})
    with pytest.raises(ValueError, match="only K-means"):
        runner.estimator(d, "DP-means", {"start_rows": (0, 1)})
    est, X = runner.estimator(d, "K-means", {"start_rows": (5, 1, 5)})
    assert est.n_clusters == 2 and np.array_equal(est.init, X[[1, 5]])
