"""Zeros that mean "not measured" (issue 27, clinic): the Data page offers the columns whose
zeros lie far below their other values, and the chosen ones have their zeros read as gaps."""
import numpy as np

from apptools import ok, shown, start


def _csv() -> bytes:
    rng = np.random.default_rng(0)
    n = 120
    bp = rng.normal(80, 8, n).round(0)
    bp[:12] = 0  # twelve blood pressures of 0: not measured
    age = rng.normal(50, 10, n).round(1)
    rows = "\n".join(f"{a},{b:g}" for a, b in zip(age, bp))
    return ("age,blood_pressure\n" + rows).encode()


def test_the_chosen_columns_zeros_become_gaps():
    at = start(300)
    at.switch_page("pages/data.py").run()
    at.radio(key="w_data_source").set_value("Upload a table").run()
    at.file_uploader(key="w_upload").upload("clinic.csv", _csv(), "text/csv").run()
    ok(at)
    choice = at.multiselect(key="w_upload_zeros")
    # offered (as "blood_pressure: 12 zero(s), far below its other values"), not chosen for the user
    assert [o.split(":")[0] for o in choice.options] == ["blood_pressure"] and choice.value == []
    at.button(key="use_upload").click().run()
    ok(at)
    assert int(at.session_state["data"].X["blood_pressure"].isna().sum()) == 0  # nothing changes unless asked

    at.multiselect(key="w_upload_zeros").set_value(["blood_pressure"]).run()
    at.button(key="use_upload").click().run()
    ok(at)
    d = at.session_state["data"]
    assert int(d.X["blood_pressure"].isna().sum()) == 12 and not d.X["age"].isna().any()
    assert any("12 zero(s) treated as missing" in shown(w.value) for w in at.warning)
