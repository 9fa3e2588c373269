"""Compare's K-means BIC curve (issue 42, finding 6): its formula is the library's (checked by hand
in tests/models/test_kmeans.py); through the page, three round well-separated clusters give a curve
that peaks at 3 and falls after it, and the page says what the curve assumes."""
import numpy as np
import pandas as pd

from apptools import chart, ok, plotly_array, shown, start
from explorer import sources


def test_three_round_clusters_peak_at_three_on_the_page():
    rng = np.random.default_rng(0)
    X = np.vstack([rng.normal(m, 1.0, (100, 2)) for m in ([0, 0], [10, 0], [0, 10])])
    at = start(300)
    at.session_state["data"] = sources.table_data(pd.DataFrame(X, columns=["a", "b"]), name="three.csv")
    at.switch_page("pages/compare.py").run()
    at.pills(key="w_cmp_algorithms").set_value(["K-means"]).run()
    at.slider(key="w_bic_kmax").set_value(10).run()
    ok(at)
    fig = chart(at, "bic_plot")
    x, y = plotly_array(fig["data"][0]["x"]), plotly_array(fig["data"][0]["y"])
    assert int(x[np.argmax(y)]) == 3
    after = np.diff(y[2:])
    assert (after < 0).all(), y  # smooth: falls at every K past the peak
    said = " ".join(shown(c.value) for c in at.caption)
    assert "round clusters sharing one spread" in said and "highest at K = 1" in said
