"""The app's figures as drawn: ellipses above the points, no fixed light background, panels that wrap."""
import numpy as np
import pytest

from explorer import animation, figures, runner, sources


@pytest.fixture(scope="module")
def frames_and_view():
    d = sources.scenario_data("5.2", n=600, seed=1)
    runs = [runner.run_mapdp(d, 3.0), runner.run_kmeans(d, 3)]
    coords, names = sources.projection(d)
    return animation.animation_frames(runs, coords, None, d.truth), coords, names


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
    d = sources.scenario_data("5.2", n=300, seed=2)
    runs = [runner.run_mapdp(d, 3.0), runner.run_kmeans(d, 3), runner.run_kmeans(d, 2), runner.run_kmeans(d, 4)]
    coords, names = sources.projection(d)
    fr = animation.animation_frames(runs, coords, None, d.truth)
    one_row = figures.animation_figure(animation.animation_frames(runs[:3], coords, None, d.truth), coords, names)
    fig = figures.animation_figure(fr, coords, names)
    assert fig.layout.height > one_row.layout.height
    assert {t.xaxis for t in fig.data[::3]} == {"x", "x2", "x3", "x4"}
    assert fig.layout.yaxis3.matches == "y" and fig.layout.xaxis4.matches == "x"
    assert len(fig.layout.annotations) == 4 and "<br>NMI" in fig.layout.annotations[3].text


# ----------------------------------------------------------------------------- rows not visited yet (-1)

@pytest.fixture(scope="module")
def partial_frames():
    """SUGS and DP search beside MAP-DP: their frames before the last leave rows at -1."""
    d = sources.scenario_data("5.2", n=400, seed=3)
    runs = [runner.run_mapdp(d, 3.0),
            runner.run(d, "SUGS", {"N0": 3.0}, restarts=2),
            runner.run(d, "DP search", {"N0": 3.0, "beam_size": 3})]
    coords, names = sources.projection(d)
    return animation.animation_frames(runs, coords, None, d.truth), runs, coords, names, d


def test_unvisited_rows_keep_colour_id_minus_one_and_are_no_cluster(partial_frames):
    fr, runs, coords, names, d = partial_frames
    assert fr.partial == ["SUGS", "DP search"]
    for a, run in enumerate(runs):
        info = fr.info[a]
        for f, colours in enumerate(fr.colours[a]):
            unvisited = int(np.count_nonzero(colours < 0))
            assert unvisited == info["unvisited"].iloc[f]
            # K counts clusters only: the colour ids of the visited rows, never -1
            assert len(np.unique(colours[colours >= 0])) == info["K"].iloc[f]
            assert all(cid >= 0 for cid, _ in fr.ellipses[a][f])
            assert np.isfinite(info["nmi"].iloc[f]) and np.isfinite(info["ari"].iloc[f])
        assert info["unvisited"].iloc[-1] == 0 and (fr.colours[a][-1] >= 0).all()
        if run.algorithm == "MAP-DP":
            assert (info["unvisited"] == 0).all()
        else:
            assert info["unvisited"].iloc[0] > 0
    assert fr.info[1]["unvisited"].is_monotonic_decreasing  # SUGS visits a block of rows per frame
    # SUGS never revises a row: a visited row keeps its colour to the end, an unvisited one is -1 until visited
    sugs = np.array(fr.colours[1])
    first_seen = np.argmax(sugs >= 0, axis=0)
    for row in range(sugs.shape[1]):
        assert (sugs[:first_seen[row], row] == -1).all() and (sugs[first_seen[row]:, row] == sugs[-1, row]).all()


def test_unvisited_rows_are_drawn_grey_and_counted_in_the_title(partial_frames):
    fr, runs, coords, names, d = partial_frames
    fig = figures.animation_figure(fr, coords, names, start=0)
    grey = len(figures.PALETTE)
    first = np.asarray(fig.data[3].marker.color)  # SUGS's points at frame 0
    np.testing.assert_array_equal(first == grey, fr.colours[1][0] < 0)
    titles = [a.text for a in fig.layout.annotations]
    n = int(fr.info[1]["unvisited"].iloc[0])
    assert f"K = {int(fr.info[1]['K'].iloc[0])} · {n:,} not yet visited" in titles[1]
    assert "not yet visited" not in titles[0]  # MAP-DP labels every row in every sweep
    last = fig.frames[-1]
    assert not any("not yet visited" in a["text"] for a in last.layout.annotations)
    assert all(grey not in np.asarray(t.marker.color) for t in last.data[::3])
    # the frames carry the same colour index: the grey band for -1, the palette's for the others
    np.testing.assert_array_equal(np.asarray(fig.frames[0].data[3].marker.color), first)


def _colour_at(marker, value: int) -> str:
    """The colour a marker's colour scale gives ``value`` (Plotly maps cmin..cmax onto 0..1)."""
    x = (value - marker.cmin) / (marker.cmax - marker.cmin)
    return next(c for (lo, c), (hi, _) in zip(marker.colorscale[::2], marker.colorscale[1::2]) if lo <= x <= hi)


def test_the_colour_scale_gives_every_cluster_its_palette_colour_and_minus_one_grey(frames_and_view):
    fr, coords, names = frames_and_view
    marker = figures.animation_figure(fr, coords, names).data[0].marker
    ids = np.arange(-1, 2 * len(figures.PALETTE))
    values = figures.colour_index(ids)
    assert [_colour_at(marker, v) for v in values[1:]] == figures.PALETTE * 2
    assert _colour_at(marker, values[0]) == figures.UNVISITED and figures.UNVISITED not in figures.PALETTE
    # MAP-DP's colours are the palette's as before: ids 0..K-1 modulo its length
    np.testing.assert_array_equal(figures.colour_index(fr.colours[0][-1]), fr.colours[0][-1] % len(figures.PALETTE))


def test_a_frame_with_no_row_placed_draws_all_grey_without_scores():
    import pandas as pd

    from mapdp_core import SweepState

    d = sources.scenario_data("5.2", n=60, seed=4)
    empty = SweepState(iteration=1, labels=np.full(60, -1), n_clusters=0, objective=0.0, neg_log_joint=0.0,
                       n_changed=0, cluster_sizes=np.zeros(0, dtype=np.int64), summaries={}, elapsed=0.0)
    done = SweepState(iteration=2, labels=np.zeros(60, dtype=np.int64), n_clusters=1, objective=1.0,
                      neg_log_joint=1.0, n_changed=60, cluster_sizes=np.array([60]), summaries={}, elapsed=0.0,
                      converged=True)
    run = runner.Run(algorithm="SUGS", states=(empty, done), restarts=pd.DataFrame())
    coords, names = sources.projection(d)
    fr = animation.animation_frames([run], coords, None, d.truth)
    assert (fr.colours[0][0] == -1).all() and fr.ellipses[0][0] == []
    assert fr.info[0]["unvisited"].tolist() == [60, 0] and np.isnan(fr.info[0]["nmi"].iloc[0])
    fig = figures.animation_figure(fr, coords, names, start=0)
    assert "60 not yet visited<br>NMI – · ARI –" in fig.layout.annotations[0].text
    assert (np.asarray(fig.data[0].marker.color) == len(figures.PALETTE)).all()


# ----------------------------------------------------------------------------- issue 27: units and one position

def test_a_page_owned_figure_draws_one_frame_without_plotlys_controls(frames_and_view):
    """The Explore page owns the frame shown (ui.player): its chart carries no Plotly frames, Play
    or slider that would move the picture without the page knowing, and no room for them."""
    fr, coords, names = frames_and_view
    whole = figures.animation_figure(fr, coords, names, start=1)
    one = figures.animation_figure(fr, coords, names, start=1, controls=False)
    assert not one.frames and not one.layout.updatemenus and not one.layout.sliders
    assert one.layout.height == whole.layout.height - figures._CONTROLS_PX
    assert [a.text for a in one.layout.annotations] == [a.text for a in whole.layout.annotations]
    np.testing.assert_array_equal(np.asarray(one.data[0].marker.color), figures.colour_index(fr.colours[0][1]))


def test_each_panel_counts_its_own_steps_and_an_early_finish_says_how_it_ended():
    """Issue 27: the slider read "sweep 46" (DP-means' passes) beside MAP-DP's "sweep 7 (done)"."""
    d = sources.scenario_data("5.2", n=300, seed=3)
    runs = [runner.run_mapdp(d, 3.0), runner.run(d, "DP-means", {"lam": 2.0}),
            runner.run(d, "Gibbs", {"N0": 1.0, "n_sweeps": 12})]
    coords, names = sources.projection(d)
    fr = animation.animation_frames(runs, coords, None, d.truth)
    short = min(range(3), key=lambda a: len(fr.sweeps[a]))
    assert len(fr.sweeps[short]) < fr.n_frames  # one algorithm ends before the others
    f = fr.n_frames - 1
    titles = [a.text for a in figures.animation_figure(fr, coords, names, start=f, controls=False).layout.annotations]
    for a, (name, word) in enumerate([("MAP-DP", "sweep"), ("DP-means", "pass"), ("Gibbs", "sweep")]):
        assert f"<br>{word} {fr.sweeps[a][-1]} ({fr.endings[a]})" in titles[a]
    label = animation.frame_label(fr, f)
    assert label.startswith(f"frame {fr.n_frames} of {fr.n_frames}: ")
    assert f"DP-means pass {fr.sweeps[1][-1]} ({fr.endings[1]})" in label and "MAP-DP sweep" in label
    middle = animation.frame_label(fr, 1)
    assert f"Gibbs sweep {fr.sweeps[2][1]}" in middle and "(" not in middle.split("Gibbs")[1]
    # a held last frame says how that algorithm ended, in its own units
    assert f"{fr.algorithms[short]} {animation.step_word(fr.algorithms[short])} {fr.sweeps[short][-1]} (" in middle \
        or len(fr.sweeps[short]) > 2


def test_a_sampler_says_which_partition_it_reports_in_its_panel_and_the_table():
    """Issue 27: Gibbs's panel said K = 8 (its last sweep) while the table said 7 (its most probable
    partition) without a word. The table's K, NMI and ARI are of one partition, named."""
    import pandas as pd

    from mapdp_core import SweepState

    d = sources.scenario_data("5.2", n=60, seed=4)
    gibbs = runner.run(d, "Gibbs", {"N0": 1.0, "n_sweeps": 3})

    def state(i, labels, neg_log_joint):
        labels = np.asarray(labels)
        return SweepState(iteration=i, labels=labels, n_clusters=len(np.unique(labels)), objective=neg_log_joint,
                          neg_log_joint=neg_log_joint, n_changed=0, cluster_sizes=np.bincount(labels), summaries={},
                          elapsed=0.0)

    two = np.repeat([0, 1], 30)
    three = np.repeat([0, 1, 2], 20)
    states = (state(1, np.zeros(60, dtype=np.int64), 50.0), state(2, two, 10.0), state(3, three, 20.0))
    run = runner.Run(algorithm="Gibbs", states=states, restarts=pd.DataFrame(), estimator=gibbs.estimator)
    assert run.shown.iteration == 2  # the most probable partition, not the last sweep
    coords, names = sources.projection(d)
    fr = animation.animation_frames([run], coords, None, d.truth)
    assert fr.reported[0]["step"] == 2 and fr.reported[0]["K"] == 2 and not fr.reported[0]["last"]
    fig = figures.animation_figure(fr, coords, names, controls=False)
    assert "K = 3" in fig.layout.annotations[0].text and "reports sweep 2: K = 2" in fig.layout.annotations[0].text
    first = figures.animation_figure(fr, coords, names, start=0, controls=False)
    assert "reports" not in first.layout.annotations[0].text  # said on its last frame only
    row = animation.summary_rows([run], fr)[0]
    assert row["K"] == 2 and row["partition"] == "most probable (sweep 2)" and row["steps"] == 3
    assert row["NMI"] == round(float(fr.reported[0]["nmi"]), 3)
    kmeans = runner.run_kmeans(d, 3)
    fk = animation.animation_frames([kmeans], coords, None, d.truth)
    row = animation.summary_rows([kmeans], fk)[0]
    assert row["partition"] == "last step" and row["NMI"] == round(float(fk.info[0]["nmi"].iloc[-1]), 3)
    assert "reports" not in figures.animation_figure(fk, coords, names).layout.annotations[0].text


@pytest.fixture(scope="module")
def merged_run():
    """MAP-DP over-split on purpose (a large N0, a narrow prior) with components grouped into clusters."""
    d = sources.scenario_data("5.3", n=400, seed=0)
    choice = runner.auto_settings(d)
    params = {**runner.mapdp_settings(choice, N0=10.0, spread=0.1), "merge": 0.2}
    run = runner.run(d, "MAP-DP", params, choice=choice)
    model = runner.fitted_model(d, run)
    assert len(model.merges_) and model.n_clusters_ < model.n_components_
    coords, names = sources.projection(d)
    return d, run, model, coords, names


def test_the_last_frame_of_merged_components_is_coloured_by_cluster(merged_run):
    # issue 24: the animation coloured the components; the last frame shows the clusters a person reads
    d, run, model, coords, names = merged_run
    fr = animation.animation_frames([run, runner.run_kmeans(d, 3)], coords, None, d.truth, models=[model, None])
    last, before = fr.colours[0][-1], fr.colours[0][-2]
    assert len(np.unique(last)) == model.n_clusters_
    assert len(np.unique(before)) == model.n_components_
    # one colour per cluster: the rows of every component of a cluster share it
    for k in range(model.n_clusters_):
        assert len(np.unique(last[model.labels_ == k])) == 1
    groups = fr.groups[0]
    assert fr.groups[1] is None and len(groups) == model.n_clusters_
    for k, (colour, members) in enumerate(groups):
        assert list(members) == list(np.flatnonzero(model.cluster_of_component_ == k))
        assert np.all(last[model.labels_ == k] == colour)
        # the cluster's largest component already wears the cluster's colour before the merge
        sizes = np.bincount(model.component_labels_, minlength=model.n_components_)
        largest = members[int(np.argmax(sizes[list(members)]))]
        assert np.all(before[model.component_labels_ == largest] == colour)
    said = fr.reported[0]
    assert said["K"] == model.n_clusters_ and said["components"] == model.n_components_
    assert fr.info[0]["K"].iloc[-1] == model.n_clusters_
    # the same from the data alone (Explore passes the data set)
    assert animation.animation_frames([run], coords, None, d.truth, data=d).groups[0] == groups


def test_the_panel_and_the_frame_label_say_which_components_form_each_cluster(merged_run):
    d, run, model, coords, names = merged_run
    fr = animation.animation_frames([run], coords, None, d.truth, models=[model])
    fig = figures.animation_figure(fr, coords, names)
    last = fig.frames[-1].layout.annotations[0].text
    assert f"K = {model.n_clusters_} of {model.n_components_} components" in last
    joined = [m for _, m in fr.groups[0] if len(m) > 1]
    assert "●" + "+".join(map(str, joined[0][:4])) in last.replace("</span>", "")
    assert "components" not in fig.frames[0].layout.annotations[0].text  # earlier frames: the components
    label = animation.frame_label(fr, fr.n_frames - 1)
    assert f"grouped into {model.n_clusters_} clusters" in label and "cluster 0 = component" in label
    rows = animation.summary_rows([run], fr)
    assert rows[0]["K"] == model.n_clusters_ and rows[0]["components"] == model.n_components_


def test_without_merges_the_frames_are_unchanged(frames_and_view):
    fr, coords, names = frames_and_view
    assert fr.groups == [None, None]


def test_the_true_groups_panel_stays_while_the_frames_play_and_points_say_their_row():
    d = sources.scenario_data("5.2", n=600, seed=1)
    runs = [runner.run_mapdp(d, 3.0), runner.run_kmeans(d, 3)]
    coords, names = sources.projection(d)
    sample = np.arange(0, 600, 2)
    fr = animation.animation_frames(runs, coords, sample, d.truth)
    truth = animation.truth_view(d.truth, coords, sample)
    fig = figures.animation_figure(fr, coords[sample], names, truth=truth, rows=sample)
    A = len(fr.algorithms)
    assert len(fig.data) == 3 * A + 3  # the truth panel's points and rings after the algorithms'
    points = fig.data[3 * A]
    assert points.name == "True groups" and points.xaxis not in {t.xaxis for t in fig.data[:3 * A]}
    # its colours are the reference the algorithms were matched to: MAP-DP's agree on most rows
    assert np.mean(np.asarray(points.marker.color) == figures.colour_index(fr.colours[0][-1])) > 0.7
    assert np.array_equal(np.asarray(points.customdata)[:, 0], sample)
    assert "true group" in points.hovertemplate and "True groups" in fig.layout.annotations[A].text
    # the frames redraw the algorithms only, and keep the truth panel's title
    assert all(list(f.traces) == list(range(3 * A)) for f in fig.frames)
    assert all(len(f.layout.annotations) == A + 1 and "True groups" in f.layout.annotations[A].text for f in fig.frames)
    # every algorithm's points say their row on hover; without rows nothing is hovered
    assert all(np.array_equal(np.asarray(fig.data[3 * a].customdata), sample) for a in range(A))
    plain = figures.animation_figure(fr, coords[sample], names)
    assert len(plain.data) == 3 * A and plain.data[0].hoverinfo == "skip"
    assert animation.truth_view(None, coords) is None and animation.truth_view(np.full(600, -1), coords) is None
