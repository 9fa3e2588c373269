"""The app's figures as drawn: ellipses above the points, no fixed light background, panels that wrap."""
import numpy as np
import pytest

from mapdp_core import explorer, figures


@pytest.fixture(scope="module")
def frames_and_view():
    d = explorer.scenario_data("5.2", n=600, seed=1)
    runs = [explorer.run_mapdp(d, 3.0), explorer.run_kmeans(d, 3)]
    coords, names = explorer.projection(d)
    return explorer.animation_frames(runs, coords, None, d.truth), coords, names


def test_ellipses_are_webgl_traces_drawn_after_their_points(frames_and_view):
    # Plotly draws WebGL above SVG: SVG rings (the old drawing) vanished beneath the WebGL points
    fr, coords, names = frames_and_view
    fig = figures.animation_figure(fr, coords, names)
    for a in range(len(fr.algorithms)):
        points, halo, line = fig.data[3 * a: 3 * a + 3]
        assert points.type == "scattergl" and points.mode == "markers"
        assert halo.type == line.type == "scattergl" and halo.mode == line.mode == "lines"
        assert halo.xaxis == line.xaxis == points.xaxis  # same panel, later trace: on top
        assert halo.line.width > line.line.width >= 2
        assert np.isfinite(np.asarray(line.x, dtype=float)).any()
    # every frame updates all three traces of every algorithm
    assert all(len(f.data) == 3 * len(fr.algorithms) for f in fig.frames)


@pytest.mark.parametrize("draw", ["animation", "scatter"])
def test_figures_leave_the_background_to_the_theme(frames_and_view, draw):
    fr, coords, names = frames_and_view
    fig = (figures.animation_figure(fr, coords, names) if draw == "animation"
           else figures.scatter_figure(coords, names, fr.colours[0][-1]))
    layout = fig.layout.to_plotly_json()
    assert "plot_bgcolor" not in layout and "paper_bgcolor" not in layout
    assert not any("gridcolor" in v for k, v in layout.items() if k.startswith(("xaxis", "yaxis")))
    assert "#000000" not in figures.PALETTE and "#FFFFFF" not in [c.upper() for c in figures.PALETTE]


def test_controls_sit_below_the_axis_titles_and_the_slider_clears_the_buttons(frames_and_view):
    fr, coords, names = frames_and_view
    fig = figures.animation_figure(fr, coords, names, height=480)
    plot_px = fig.layout.height - fig.layout.margin.t - fig.layout.margin.b
    below_px = -fig.layout.updatemenus[0].y * plot_px
    assert below_px >= figures._AXIS_PX and fig.layout.margin.b >= below_px + 60
    assert fig.layout.sliders[0].pad.l >= figures._BUTTONS_PX and fig.layout.sliders[0].y == fig.layout.updatemenus[0].y


def test_more_than_three_algorithms_wrap_onto_rows():
    assert figures._grid(1) == (1, 1) and figures._grid(3) == (1, 3)
    assert figures._grid(4) == (2, 2) and figures._grid(5) == (2, 3) and figures._grid(6) == (2, 3)
    d = explorer.scenario_data("5.2", n=300, seed=2)
    runs = [explorer.run_mapdp(d, 3.0), explorer.run_kmeans(d, 3), explorer.run_kmeans(d, 2), explorer.run_kmeans(d, 4)]
    coords, names = explorer.projection(d)
    fr = explorer.animation_frames(runs, coords, None, d.truth)
    one_row = figures.animation_figure(explorer.animation_frames(runs[:3], coords, None, d.truth), coords, names)
    fig = figures.animation_figure(fr, coords, names)
    assert fig.layout.height > one_row.layout.height
    assert {t.xaxis for t in fig.data[::3]} == {"x", "x2", "x3", "x4"}
    assert fig.layout.yaxis3.matches == "y" and fig.layout.xaxis4.matches == "x"
    assert len(fig.layout.annotations) == 4 and "<br>NMI" in fig.layout.annotations[3].text
