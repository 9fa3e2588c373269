"""The start page runs headless (streamlit.testing) without an exception and shows MAP-DP's answer."""
from pathlib import Path

from streamlit.testing.v1 import AppTest

APP = str(Path(__file__).resolve().parents[1] / "app.py")


def test_start_page_runs_and_reports_clusters():
    at = AppTest.from_file(APP, default_timeout=120).run()
    assert not at.exception
    assert any("clusters" in m.value for m in at.markdown)
    at.slider[0].set_value(10.0).run()
    assert not at.exception
