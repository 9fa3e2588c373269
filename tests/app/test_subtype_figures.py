"""The Subtypes page's and the report's figures (issue 42, findings 7 and item 5): one heat-map
colour convention (red above the mean) in the app and the report, no "null" in a cell, whole
cluster ticks, imputation said as it is done, and the report's figures: sizes with stability, K's
evidence on a scale where the neighbouring K can be compared."""
import re

import numpy as np
import pandas as pd

from apptools import chart, ok, shown, start
from explorer import figures, report, report_figures, sources


def _rgb(colour: str) -> tuple:
    if colour.startswith("#"):
        return tuple(int(colour[i:i + 2], 16) for i in (1, 3, 5))
    return tuple(int(float(v)) for v in re.findall(r"[\d.]+", colour)[:3])


def test_one_colour_convention_and_no_null_cells():
    heat = pd.DataFrame({0: [1.5, np.nan], 1: [-1.5, 0.2]}, index=["hba1c", "crp"])
    fig = figures.heatmap_figure(heat, heat.round(1).astype(str), "sd from overall mean")
    scale = fig.data[0].colorscale
    high, low = _rgb(scale[-1][1]), _rgb(scale[0][1])
    assert high[0] > high[2] and low[2] > low[0]  # red above the mean, blue below
    r, g, b = _rgb(report_figures.heat_color(1.5))
    assert r > b  # the report's cells: red above too
    r, g, b = _rgb(report_figures.heat_color(-1.5))
    assert b > r
    text = np.asarray(fig.data[0].text, dtype=object)
    assert "nan" not in text.ravel().tolist() and "–" in text.ravel().tolist()
    assert "null" not in fig.to_json().split('"text"')[1][:200]
    assert fig.layout.xaxis.type == "category"


def test_the_subtypes_page_draws_the_heat_map_and_says_how_gaps_are_filled():
    at = start(300)
    at.session_state["data"] = sources.clinical_data(200, 3, 0.15, 0)
    at.switch_page("pages/subtypes.py").run()
    ok(at)
    fig = chart(at, "sub_heatmap")
    assert fig["layout"]["xaxis"]["type"] == "category"
    assert fig["data"][0]["colorscale"][-1][1] != fig["data"][0]["colorscale"][0][1]
    high = _rgb(fig["data"][0]["colorscale"][-1][1])
    assert high[0] > high[2]
    captions = " ".join(shown(c.value) for c in at.caption)
    assert report.IMPUTED_WORDS in captions and "filled from its row's cluster" not in captions
    assert "Red: the cluster's mean lies above the overall mean" in captions


def test_ks_evidence_is_drawn_on_a_comparable_scale():
    table = pd.DataFrame({"K": [1, 2, 3, 4], "neg_log_joint": [9000.0, 4000.0, 4012.0, 4020.0],
                          "delta": [5000.0, 0.0, 12.0, 20.0], "how": ["", "the fitted partition", "", ""],
                          "fitted": [False, True, False, False]})
    svg = report_figures.evidence_svg(table)
    heights = [float(h) for h in re.findall(r'<rect x="[\d.]+" y="[\d.]+" width="[\d.]+" height="([\d.]+)" fill', svg)]
    assert heights[2] > 0.2 * heights[0]  # K = 3's 12 nats readable beside K = 1's 5 000
    assert heights[3] > heights[2] > heights[1]  # and still in order
    assert "5,000" in svg and "(log)" in svg


def test_the_report_draws_sizes_coloured_by_stability():
    sizes = pd.DataFrame({"cluster": [0, 1, 2], "n": [80, 50, 20], "stability": [0.9, 0.65, 0.3],
                          "verdict": ["stable", "uncertain", "fragile"]})
    svg = report_figures.sizes_svg(sizes)
    for verdict, colour in report_figures.VERDICT_COLOURS.items():
        assert f'fill="{colour}"' in svg
    assert "80 · 0.90" in svg and "20 · 0.30" in svg


def test_imputed_values_are_shown_as_rounded():
    """The Styler wrote every filled value with six decimals ("5.130000", issue 42)."""
    import pyarrow as pa

    at = start(300)
    at.session_state["data"] = sources.clinical_data(200, 3, 0.15, 0)
    at.switch_page("pages/subtypes.py").run()
    ok(at)
    styled = next(df for df in at.dataframe if "filled" in df.value.columns)
    raw = styled.proto.arrow_data.styler.display_values  # the cells as the browser writes them
    shown_cells = pa.ipc.open_stream(raw).read_pandas().astype(str).to_numpy().ravel().tolist()
    numbers = [c for c in shown_cells if re.fullmatch(r"-?\d+\.\d+", c)]
    assert numbers, shown_cells[:20]
    assert not [c for c in numbers if c.endswith("000")], numbers[:20]
    assert report.cell_text(5.13) == "5.13" and report.cell_text(47.0) == "47" and report.cell_text(np.nan) == ""
