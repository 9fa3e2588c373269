"""Issue 27: Explore shows one row's decision in MAP-DP's sweep (PLOS Algorithm 3), the costs
the fitted model gives (:meth:`mapdp_core.MAPDP.row_costs`), for a row the user picks."""
from apptools import chart, ok, start


def test_explore_shows_one_rows_decision():
    at = start(300)
    at.number_input(key="w_explore_decision_row").set_value(17).run()
    ok(at)
    said = [m.value for m in at.markdown if "Row 17 goes to" in m.value]
    assert len(said) == 1, [m.value[:60] for m in at.markdown]
    spec = chart(at, "explore_row_costs")
    names = spec["data"][0]["y"]
    chosen = [n for n in names if n.endswith("(chosen)")]
    assert len(chosen) == 1 and names[-1].startswith("new cluster")
    assert f"**{chosen[0].removesuffix(' (chosen)')}**" in said[0]  # the sentence names the chart's choice
