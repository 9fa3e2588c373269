"""What the headless app tests share (streamlit.testing.v1.AppTest): start the app, check that
nothing failed, and read back charts and tables by their keys and columns."""
import base64
import json
import re
from pathlib import Path

import numpy as np
import pandas as pd
from streamlit.testing.v1 import AppTest

APP = str(Path(__file__).resolve().parents[1] / "app.py")


def start(timeout: float, **query) -> AppTest:
    """The app after its first run (``query``: the address bar's parameters), which must not fail."""
    at = AppTest.from_file(APP, default_timeout=timeout)
    for k, v in query.items():
        at.query_params[k] = v
    at.run()
    ok(at)
    return at


def ok(at: AppTest):
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]


def simulate_clinical(at: AppTest, n: int = 300) -> None:
    """Make the session's data the Data page's simulated clinical table (mixed types with gaps)."""
    at.switch_page("pages/data.py").run()
    at.radio(key="w_data_source").set_value("Simulated").run()
    at.selectbox(key="w_generator").set_value("Clinical patients, mixed types with gaps").run()
    at.number_input(key="w_gen_cl_n").set_value(n).run()
    at.button(key="generate").click().run()


def _chart_proto(at: AppTest, key: str):
    for chart in at.get("plotly_chart"):
        if chart.proto.id and key in chart.proto.id:
            return chart.proto
    raise AssertionError(f"no plotly chart with key {key!r}")


def chart(at: AppTest, key: str) -> dict:
    """The Plotly figure (as JSON) of the chart whose key contains ``key``."""
    return json.loads(_chart_proto(at, key).spec)


def plotly_array(value) -> np.ndarray:
    """A Plotly JSON array: a list, or a typed array ({"dtype", "bdata"} in base64)."""
    if isinstance(value, dict):
        return np.frombuffer(base64.b64decode(value["bdata"]), dtype=np.dtype(value["dtype"]))
    return np.asarray(value)


def chart_config(at: AppTest, key: str) -> dict:
    """Its Plotly config (the camera button's format, ...)."""
    return json.loads(_chart_proto(at, key).config)


def table(at: AppTest, columns: set) -> pd.DataFrame:
    """The first table shown that has all of ``columns``."""
    for df in at.dataframe:
        if columns <= set(df.value.columns):
            return df.value
    raise AssertionError(f"no table with columns {columns}")


def shown(markdown: str) -> str:
    """The text a reader sees of markdown that ``ui.common.escape_markdown`` escaped: without the
    backslashes before marks and the invisible word joiners."""
    return re.sub(r"\\(.)", r"\1", markdown).replace("\u2060", "")
