"""Tune's charts (issue 42, finding 5): the chosen point on the same scale as the candidates (the
search's stage-4 check, a joint over more rows, was drawn at 14 000 among candidates at 1 900), no
structure's line hidden under another's, and cross-validation at the grid's edge said in words."""
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

from explorer import figures, report, runner, sources


@pytest.fixture(scope="module")
def searched():
    d = sources.clinical_data(3000, 3, 0.1, 0)  # large enough for the search's subsample and its stage-4 check
    choice = runner.auto_settings(d)
    assert (choice.table["stage"] == 4).any()
    return d, choice


@pytest.mark.parametrize("against", ["spread", "N0"])
def test_the_chosen_point_is_on_the_candidates_scale(searched, against):
    d, choice = searched
    fig = figures.search_figure(choice.table, against)
    candidates = [t for t in fig.data if t.name != "chosen"]
    ys = np.concatenate([np.asarray(t.y, dtype=float) for t in candidates])
    (chosen,) = [t for t in fig.data if t.name == "chosen"]
    spread = ys.max() - ys.min()  # the chosen (the best) may lie a little below the line drawn at its x
    assert ys.min() - spread <= chosen.y[0] <= ys.max(), (chosen.y, ys.min(), ys.max())
    searched_rows = choice.table[choice.table["stage"] <= 3]
    assert chosen.y[0] in set(searched_rows["evidence"])
    final = choice.table[choice.table["chosen"]].iloc[-1]
    x = final["spread" if against == "spread" else "N0"]
    assert chosen.x[0] == x
    stage4 = choice.table.loc[choice.table["stage"] == 4, "evidence"].to_numpy()
    assert not np.isin(stage4, ys).any()
    words = report.search_scale_words(choice)
    assert "stage 4" in words and "another scale" in words


def test_no_structure_line_hides_under_another(searched):
    fig = figures.search_figure(searched[1].table, "spread")
    styles = [(t.line.dash, t.marker.symbol) for t in fig.data if t.name != "chosen"]
    assert len(styles) >= 2 and len(set(styles)) == len(styles)


def _cv(best_n0: float) -> SimpleNamespace:
    grid = [0.3, 1.0, 4.48, 30.0]
    means = {0.3: -900.0, 1.0: -880.0, 4.48: -871.0, 30.0: -870.0}
    summary = pd.DataFrame({"N0": grid, "scale": 1.0, "mean_heldout_loglik": [means[v] for v in grid],
                            "se": 2.0, "mean_K": [2, 3, 3, 5], "best": [v == 30.0 for v in grid]})
    if best_n0 != 30.0:
        summary["mean_heldout_loglik"] = [-900.0, -871.0, -880.0, -890.0]
    return SimpleNamespace(summary=summary, best_N0=best_n0, best_scale=1.0)


def test_cross_validation_at_the_grids_edge_is_said():
    said = report.cv_edge_words(_cv(30.0))
    assert "N0 30 is the largest value tried" in said and "N0 = 4.48" in said
    assert report.cv_edge_words(_cv(1.0)) == ""  # inside the grid: nothing to say
