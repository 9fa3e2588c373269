"""Issue 43, item 4: the teacher's findings, one test each (the animation's frame, links and
Pause are in test_animation_player.py and test_link_restores.py; Home's caveat in
test_formats_home.py)."""
from streamlit.testing.v1 import AppTest

from apptools import APP, chart
from apptools import ok as _ok
from explorer import comparison, sources

TIMEOUT = 240


def test_homes_grid_tells_kmeans_the_k_explore_tells_it_on_5_3():
    """Home's grid (inside "where K-means fails") ran K-means with K = 5 on 5.3, Explore with K = 3."""
    table, _ = comparison.overview(("5.3",), n=300)
    told = table.set_index("algorithm")["told"]
    explore_k = sources.scenario_data("5.3", n=300).true_k
    assert explore_k == 3 and told["K-means"] == f"K = {explore_k}" and told["E-M"] == f"K = {explore_k}"


def test_the_expected_clusters_box_starts_empty_not_at_0_00():
    """"…or set N0 from an expected number of clusters" showed 0.00."""
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.session_state["data"] = sources.scenario_data("5.2", n=300, seed=0)
    at.session_state["settings"] = {"algorithms": ["K-means"]}
    at.run()
    _ok(at)
    box = at.number_input(key="w_expected_K")
    assert box.value is None and box.proto.format == "%g" and box.proto.min == 1
    box.set_value(4.0).run()
    _ok(at)
    assert any(c.value.startswith("E[K] = 4 needs N0 = ") for c in at.caption)
