"""The outcome view (explorer/outcomes.py): the figure draws what compare_outcome computed."""
import numpy as np
import pandas as pd

from explorer.outcomes import outcome_comparison, outcome_figure, outcome_table
from mapdp_core.data.datasets import load_dataset, load_outcomes


def pbc_comparison():
    X, _, _ = load_dataset("primary_biliary_cholangitis")
    outcomes = load_outcomes("primary_biliary_cholangitis")
    labels = (X["bili"].fillna(X["bili"].median()) > 3).astype(int).to_numpy()  # two groups, no fit needed
    return outcome_comparison(outcomes, labels, {"kind": "time_to_event", "time": "years", "event": "died"}), labels


def test_survival_curves_are_steps_through_the_estimates():
    comparison, labels = pbc_comparison()
    fig = outcome_figure(comparison)
    lines = [t for t in fig.data if t.mode == "lines" and t.fill != "toself"]
    assert len(lines) == 2
    curve = comparison.curves[comparison.curves["cluster"] == 1]
    x, y = np.asarray(lines[1].x), np.asarray(lines[1].y)
    # at each event time the line drops to the estimate there, from the value before it
    for t, s in zip(curve["time"].iloc[1:4], curve["survival"].iloc[1:4]):
        at = np.flatnonzero(x == t)
        assert len(at) == 2 and y[at[1]] == s and y[at[0]] > s
    assert str(int(np.sum(labels == 1))) in lines[1].name


def test_the_table_words_the_reference_and_the_medians():
    comparison, labels = pbc_comparison()
    table = outcome_table(comparison)
    ref = table.set_index("cluster").loc[comparison.reference]
    assert ref["hazard ratio (95 % CI)"].startswith("1 (reference")
    assert comparison.reference == int(np.bincount(labels).argmax())
    other = table.set_index("cluster").loc[1 - comparison.reference, "hazard ratio (95 % CI)"]
    assert "–" in other and float(other.split(" ")[0]) > 1  # high bilirubin: a higher hazard


def test_binary_and_numeric_outcomes_draw_intervals():
    frame = pd.DataFrame({"relapse": [1, 0, 1, 1, 0, 0, 0, 1], "score": [1.0, 2, 3, 4, 5, 6, 7, 8]})
    labels = np.array([0, 0, 0, 0, 1, 1, 1, 1])
    binary = outcome_comparison(frame, labels, {"kind": "binary", "column": "relapse"})
    fig = outcome_figure(binary)
    assert list(fig.data[0].y) == [0.75, 0.25] and fig.data[0].error_y.array is not None
    assert outcome_table(binary)["rate (95 % CI)"].iloc[0].startswith("75 %")
    numeric = outcome_comparison(frame, labels, {"kind": "numeric", "column": "score"})
    assert list(outcome_figure(numeric).data[0].y) == [2.5, 6.5]


def test_a_curve_holds_its_last_value_until_the_longest_follow_up():
    frame = pd.DataFrame({"t": [1.0, 2.0, 3.0, 4.0, 5.0, 9.0], "e": [1, 0, 1, 0, 0, 0]})
    labels = np.array([0, 0, 0, 1, 1, 1])  # cluster 1: no event at all
    comparison = outcome_comparison(frame, labels, {"kind": "time_to_event", "time": "t", "event": "e"})
    lines = [t for t in outcome_figure(comparison).data if t.mode == "lines" and t.fill != "toself"]
    flat = lines[1]
    assert list(flat.x) == [0.0, 9.0] and list(flat.y) == [1.0, 1.0]  # at 100 % to its last follow-up
    assert list(lines[0].x)[-1] == 3.0 and list(lines[0].y)[-1] == 0.0
    from explorer.report_figures import outcome_svg
    assert outcome_svg(comparison).count("<path") == 2
