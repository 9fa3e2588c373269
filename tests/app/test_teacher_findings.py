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
