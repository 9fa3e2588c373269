"""Issue 42, item 3 in the app: an outcome left out of the clustering is compared across the
subtypes on the Subtypes page and in the report (the built-in PBC table ships its follow-up time
and death flag), and a column given the role 'outcome' on upload is never clustered."""
import html

import numpy as np
import pandas as pd
import pytest

from apptools import chart, ok, shown, start, table
from explorer import sources
from explorer.subtype_report import subtype_report_html
from mapdp_core import MAPDP


@pytest.fixture(scope="module")
def pbc_subtypes():
    at = start(600)
    at.switch_page("pages/data.py").run()
    at.selectbox(key="w_builtin").set_value("primary_biliary_cholangitis").run()
    at.button(key="use_builtin").click().run()
    ok(at)
    at.switch_page("pages/subtypes.py").run()
    ok(at)
    return at


def test_the_built_in_pbc_table_brings_its_outcome_and_never_clusters_it():
    d = sources.builtin_data("primary_biliary_cholangitis")
    assert d.outcome == {"kind": "time_to_event", "time": "years", "event": "died"}
    assert "years" not in d.features and "died" not in d.features
    assert {"years", "died"} <= set(d.table.columns)


def test_subtypes_page_shows_kaplan_meier_curves_per_cluster(pbc_subtypes):
    at = pbc_subtypes
    data = at.session_state["data"]
    fig = chart(at, "sub_outcome")
    lines = [t for t in fig["data"] if t.get("mode") == "lines" and t.get("fill") != "toself"]
    per_cluster = table(at, {"cluster", "events", "median time", "hazard ratio (95 % CI)"})
    assert len(lines) == len(per_cluster) >= 2
    assert per_cluster["events"].sum() == int(data.table["died"].sum())  # every death counted once
    assert any("log-rank test" in shown(m.value) for m in at.markdown)
    assert any("not circular" in c.value for c in at.caption)
    assert any("reference: the largest cluster" in v for v in per_cluster["hazard ratio (95 % CI)"])


def test_the_report_has_the_outcome_section_with_its_figure():
    d = sources.builtin_data("primary_biliary_cholangitis")
    model = MAPDP(random_state=0, n_init=1).fit(d.X)
    text = html.unescape(subtype_report_html(d, model, {"N0": model.N0_}))
    section = text[text.index("The outcome across the clusters: years"):]
    assert "not circular" in section and "log-rank test" in section
    assert section.index("<svg") < section.index("Profile of each cluster")
    assert section.count("<path") == model.n_clusters_  # one Kaplan-Meier curve per cluster


def test_an_uploaded_outcome_column_is_left_out_and_compared():
    rng = np.random.default_rng(0)
    g = np.repeat([0, 1], 60)
    t = pd.DataFrame({"marker": rng.normal(g * 6.0, 1.0), "other": rng.normal(g * 6.0, 1.0),
                      "relapse": np.where(rng.random(120) < np.where(g == 1, 0.8, 0.1), "yes", "no")})
    d = sources.table_data(t, roles={"relapse": "outcome"}, name="trial.csv")
    assert d.features == ["marker", "other"] and d.outcome == {"kind": "binary", "column": "relapse"}
    bad = sources.table_data(t.assign(score=1.0), roles={"relapse": "outcome", "marker": "outcome",
                                                         "other": "feature", "score": "outcome"}, name="x.csv")
    assert bad.outcome is None and any("3 columns are marked 'outcome'" in n for n in bad.notes)
