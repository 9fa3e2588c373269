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


def _picking(monkeypatch, events: list):
    """Explore with K-means starting from picked rows; each run of the page reads the next chart
    selection from ``events`` (rows), as the chart's on_select event would bring it."""
    import ui.common

    state = {"rows": []}
    monkeypatch.setattr(ui.common, "selected_rows", lambda event, shown: list(state["rows"]))
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.session_state["data"] = sources.scenario_data("5.2", n=400, seed=0)
    at.session_state["settings"] = {"algorithms": ["K-means"], "K-means:start": "picked"}
    at.run()
    _ok(at)
    return at, state


def test_each_click_adds_to_kmeans_picked_centres(monkeypatch):
    """Shift-click replaced the pick (always K = 1): the chart is drawn anew after each pick, so
    the next selection holds only the new point; it now adds to the rows picked."""
    at, state = _picking(monkeypatch, [])
    for row in (5, 9, 30):
        state["rows"] = [row]
        at.run()
        _ok(at)
    assert at.session_state["settings"]["K-means:start_rows"] == [5, 9, 30]
    assert any("K = 3" in c.value for c in at.caption if c.value.startswith("Starting centres"))


def test_a_box_that_picks_a_band_of_rows_is_refused_not_run_with_k_204(monkeypatch):
    at, state = _picking(monkeypatch, [])
    state["rows"] = [5, 9]
    at.run()
    state["rows"] = list(range(100, 304))  # a thin box across a dense band: 204 rows
    at.run()
    _ok(at)
    assert at.session_state["settings"]["K-means:start_rows"] == [5, 9]
    assert any("picked 204 rows" in w.value and "at most 20" in w.value for w in at.warning)
    assert any("K = 2" in c.value for c in at.caption if c.value.startswith("Starting centres"))


def test_outliers_no_longer_stretch_the_axes_on_5_3():
    """On 5.3 the two outlier pairs stretched the axes so the three clusters were one blob."""
    from explorer import animation, figures, runner

    d = sources.scenario_data("5.3", n=1000, seed=0)
    coords, names = sources.projection(d)
    run = runner.run(d, "K-means", {"n_clusters": 3})
    fig = figures.animation_figure(animation.animation_frames([run], coords, None, d.truth), coords, names,
                                   controls=False)
    x_view, y_view = fig.layout.xaxis.range, fig.layout.yaxis.range
    assert x_view is not None and y_view is not None
    bulk = (d.truth >= 0) & (d.truth < 3)  # the three clusters, not the outlier pairs
    inside = ((coords[:, 0] >= x_view[0]) & (coords[:, 0] <= x_view[1])
              & (coords[:, 1] >= y_view[0]) & (coords[:, 1] <= y_view[1]))
    assert inside[bulk].mean() > 0.99
    assert 0 < figures.outside_view(coords) <= 10
    # data without far outliers keep Plotly's own range (every point)
    plain = sources.scenario_data("5.2", n=1000, seed=0)
    assert figures.view_range(sources.projection(plain)[0][:, 0]) is None


def test_log_axes_label_every_tick_in_full():
    """Tune's log axes read "2 5 1 2 5 10" (Plotly's minor labels, decades unsaid)."""
    from explorer import figures
    import pandas as pd

    table = pd.DataFrame({"N0": [0.1, 0.3, 1.0, 3.0, 10.0], "neg_log_joint": [5, 4, 3, 4, 5], "K": [1, 2, 3, 4, 5]})
    axis = figures.n0_figure(table).layout.xaxis
    assert axis.type == "log" and list(axis.ticktext) == ["0.1", "0.2", "0.5", "1", "2", "5", "10"]


def test_the_saved_animation_makes_room_for_minus_signs_and_the_y_title():
    from explorer import animation, figures, runner

    d = sources.scenario_data("5.2", n=300, seed=0)
    coords, names = sources.projection(d)
    frames = animation.animation_frames([runner.run(d, "K-means", {"n_clusters": 3})], coords, None, d.truth)
    html = figures.animation_html(figures.animation_figure(frames, coords, names), "t", "c")
    assert '"automargin":true' in html.replace(" ", "")
    assert (coords[:, 1] < 0).any()  # there are minus signs to show


def test_the_toolbar_has_room_above_the_panel_titles():
    from explorer import figures

    assert figures._TITLE_PX >= 3 * figures._TITLE_LINE_PX + figures._MODEBAR_PX
