"""One vocabulary for K (issue 42, item 2): K counts the clusters a person reads; MAP-DP's
components are named as such. "How sure is K?", Compare's K, the report's partition table and its
restarts all count the clusters shown, and the partitions are named by the clusters' own numbers."""
import html
import re

import numpy as np
import pytest

from explorer import comparison, report, runner, sources
from explorer.subtype_report import subtype_report_html


@pytest.fixture(scope="module")
def merged():
    """MAP-DP over-split on purpose (a large N0, a narrow prior) with components grouped into clusters."""
    d = sources.scenario_data("5.3", n=400, seed=0)
    choice = runner.auto_settings(d)
    params = {**runner.mapdp_settings(choice, N0=10.0, spread=0.1), "merge": 0.2}
    run = runner.run(d, "MAP-DP", params, restarts=2, choice=choice)
    model = runner.fitted_model(d, run)
    assert model.n_clusters_ < model.n_components_
    return d, choice, {**params, "restarts": 2, "seed": 0}, run, model


def _named_clusters(how: str) -> set:
    return {int(k) for k in re.findall(r"\d+", how)}


def test_how_sure_is_k_answers_about_the_clusters_shown(merged):
    d, choice, params, run, model = merged
    table = model.k_evidence(of="clusters")
    K, C = model.n_clusters_, model.n_components_
    assert int(table.loc[table["fitted"], "K"].iloc[0]) == K
    for how in table["how"]:  # "cluster 5 split in two" when the clusters are 0..4 was the finding
        assert _named_clusters(how) <= set(range(K)), how
    said = report.k_words(model, table)
    assert said.startswith(f"K = {K} clusters (grouped from MAP-DP's {C} components).")
    assert "local optimum" not in said  # a grouped cluster's better split is said as what it is
    assert model.k_evidence()["K"].max() > K  # the components' own table is still there, asked for by name


def test_compare_counts_the_clusters_and_names_the_components(merged):
    d, choice, params, run, model = merged
    best = run.restarts.loc[run.restarts["objective"].idxmin()]
    assert int(best["K"]) == model.n_clusters_ and int(best["components"]) == model.n_components_
    summary = comparison.compare_summary(run.restarts.assign(algorithm="MAP-DP"))
    assert {"K mean", "components mean"} <= set(summary.columns)
    assert summary.loc[0, "K mean"] < summary.loc[0, "components mean"]


def test_the_report_numbers_its_partitions_by_the_clusters_shown(merged):
    d, choice, params, run, model = merged
    document = html.unescape(subtype_report_html(d, model, params, choice=choice, run=run))
    K = model.n_clusters_
    assert f"K = {K} clusters (grouped from MAP-DP's {model.n_components_} components)" in document
    assert "Of MAP-DP's components, before grouping" not in document
    for k in re.findall(r"cluster (\d+) split in two", document):
        assert int(k) < K, k
    assert f"clusters per restart: {', '.join(str(int(k)) for k in run.restarts['K'])}" in document
    assert np.all(run.restarts["K"] <= run.restarts["components"])
