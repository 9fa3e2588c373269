"""Predict (issue 42, finding 7): the assigned column is wide enough for "new cluster" (it was
cut to "new cluste"), and so is each probability column."""
import json

from apptools import ok, start
from explorer import sources


def test_new_cluster_is_not_cut_off():
    at = start(300)
    at.session_state["data"] = sources.scenario_data("5.2", n=300)
    at.switch_page("pages/predict.py").run()
    ok(at)
    result = next(df for df in at.dataframe if "assigned" in df.value.columns)  # AppTest keeps no key of a table
    assert json.loads(result.proto.columns)["assigned"]["width"] == "medium"
    proba = next(df for df in at.dataframe if "new cluster" in df.value.columns)
    assert json.loads(proba.proto.columns)["new cluster"]["width"] == "medium"
