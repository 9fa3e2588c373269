"""Number formats people read (issue 27): no "N0 = 1e+03", whole-number ticks on K axes,
imputed values to a sensible precision, dates without 00:00:00; and the animation's exports."""
import numpy as np
import pandas as pd
import pytest

from explorer import animation, figures, report, runner, sources


@pytest.mark.parametrize("value, text", [(1000, "1,000"), (1e3, "1,000"), (0.3, "0.3"), (2.5, "2.5"), (3, "3"),
                                         (12345.6, "12,300"), (0.000123, "0.000123"), (0, "0")])
def test_plain_number_writes_no_exponent(value, text):
    assert figures.plain_number(value) == text


def test_plain_numbers_rewrites_exponents_in_settings_text():
    assert figures.plain_numbers("N0 = 1e+03, λ = 8.35") == "N0 = 1,000, λ = 8.35"


@pytest.fixture(scope="module")
def frames_and_view():
    d = sources.scenario_data("5.2", n=300, seed=2)
    runs = [runner.run_mapdp(d, 3.0), runner.run_kmeans(d, 3)]
    coords, names = sources.projection(d)
    return animation.animation_frames(runs, coords, None, d.truth), coords, names


def test_panel_titles_write_settings_without_exponents(frames_and_view):
    fr, coords, names = frames_and_view
    fig = figures.animation_figure(fr, coords, names, settings={"MAP-DP": "N0 = 1e+03"}, controls=False)
    title = fig.layout.annotations[0].text
    assert "N0 = 1,000" in title and "e+03" not in title


def test_k_axes_tick_whole_numbers(frames_and_view):
    fr, _, _ = frames_and_view
    fig = figures.trace_figure(fr)
    for axis in ("yaxis", "yaxis2"):  # the K rows
        assert fig.layout[axis].tickformat == ",d" and fig.layout[axis].dtick == 1
    table = pd.DataFrame({"N0": [0.1, 1.0, 10.0], "neg_log_joint": [3.0, 2.0, 2.5], "K": [2, 3, 3]})
    fig = figures.n0_figure(table, panel="K")
    assert fig.layout.yaxis.tickformat == ",d" and fig.layout.yaxis.dtick == 1
    assert figures.count_axis(np.arange(40)) == {"tickformat": ",d"}


def test_imputed_values_are_rounded_for_display():
    d = sources.builtin_data("hepatitis")
    filled = d.X.copy()
    missing = filled.isna()
    for c in filled.columns:  # a filled value with many decimals, as a predictive mean gives
        filled[c] = filled[c].fillna(filled[c].mean() + 1 / 3)
    labels = np.zeros(d.n_rows, dtype=int)
    table, mask = report.imputed_rows(d, labels, filled, missing)
    for c in filled.columns:
        if pd.api.types.is_numeric_dtype(table[c]):
            shown = table.loc[mask[c], c].dropna().to_numpy(dtype=float)
            if shown.size:
                text = [f"{v}" for v in shown]
                assert all(len(t.split(".")[-1]) <= 4 for t in text if "." in t and "e" not in t), (c, text[:3])


def test_midnight_dates_are_shown_as_dates_alone():
    days = pd.Series(pd.date_range("2024-03-01", periods=50, freq="D"))
    assert figures.midnight_dates(days)
    assert not figures.midnight_dates(days + pd.Timedelta(hours=3))
    assert not figures.midnight_dates(np.arange(5))
    fig = figures.sequence_figure(days, np.arange(50.0), "x", [], animate=False)
    assert fig.layout.xaxis.hoverformat == "%Y-%m-%d"


def test_the_still_image_leaves_plotlys_controls_out(frames_and_view):
    fr, coords, names = frames_and_view
    fig = figures.animation_figure(fr, coords, names)
    assert fig.layout.updatemenus and fig.layout.sliders
    still = figures.static_image(fig)
    assert not still.layout.updatemenus and not still.layout.sliders and not still.frames
    assert still.layout.height < fig.layout.height


def test_the_exported_html_has_a_title_and_a_caption(frames_and_view):
    fr, coords, names = frames_and_view
    fig = figures.animation_figure(fr, coords, names)
    html = figures.animation_html(fig, "MAP-DP clusters of <PLOS 5.2>", "PLOS 5.2: MAP-DP (N0 = 3) beside K-means (K = 3)")
    assert "<title>MAP-DP clusters of &lt;PLOS 5.2&gt;</title>" in html
    assert '<p class="caption">PLOS 5.2: MAP-DP (N0 = 3) beside K-means (K = 3)</p>' in html
    assert "<PLOS" not in html and "Plotly.newPlot" in html


def test_groups_text_names_the_components_of_each_cluster():
    groups = [(0, (0, 3)), (1, (1,)), (2, tuple(range(2, 30, 3)))]
    assert animation.groups_text(groups[:2]) == "cluster 0 = components 0+3 · cluster 1 = component 1"
    assert "(10 components)" in animation.groups_text(groups, most=6)


def test_the_data_preview_shows_midnight_dates_as_dates():
    """The Data page's preview of a table with a date column: its cells read 2024-03-01, not
    2024-03-01 00:00:00 (a date-time column with a time keeps it)."""
    import json

    from streamlit.testing.v1 import AppTest

    from apptools import APP, ok

    table = pd.DataFrame({"visit": pd.date_range("2024-03-01", periods=40, freq="D"),
                          "stamp": pd.date_range("2024-03-01 08:30", periods=40, freq="h"),
                          "x": np.r_[np.zeros(20), np.ones(20) * 5.0]})
    at = AppTest.from_file(APP, default_timeout=120)
    at.session_state["data"] = sources.table_data(table, roles={"visit": "ignored", "stamp": "ignored", "x": "feature"},
                                                  name="visits")
    at.switch_page("pages/data.py").run()
    ok(at)
    preview = next(df for df in at.dataframe if {"visit", "stamp"} <= set(df.value.columns))
    config = json.loads(preview.proto.columns)
    assert config["visit"]["type_config"]["format"] == "YYYY-MM-DD"
    assert "stamp" not in config
