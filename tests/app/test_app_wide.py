"""A wide table in the app (issue 28, part 4): 200 rows x 20 000 columns uploaded as a CSV go
through Data, Explore, Subtypes, Tune, Compare and Predict without an error; MAP-DP clusters
the table through the principal components MAPDP() uses, Subtypes ranks the columns
themselves, and the downloads keep every column. About a minute here."""
import time

import numpy as np
import pytest

from apptools import ok, start
from explorer import report, runner
from mapdp_core.evaluation.metrics import clustering_scores

ROWS, COLS, INFORMATIVE = 200, 20_000, 50
TIMEOUT = 600


@pytest.fixture(scope="module")
def wide_csv() -> tuple[bytes, np.ndarray]:
    """Issue 28's case: three groups of 80, 70 and 50 rows that shift each of the first 50
    columns by -1.5, 0 or +1.5 sd (a random choice per group and column); the other 19 950
    columns are noise. The groups lie below the noise level of all 20 000 columns' principal
    components; the column screen of ``selection.auto.WideProjection`` finds them."""
    rng = np.random.default_rng(0)
    truth = np.repeat([0, 1, 2], [80, 70, 50])
    X = rng.normal(size=(ROWS, COLS))
    X[:, :INFORMATIVE] += 1.5 * rng.choice([-1.0, 0.0, 1.0], size=(3, INFORMATIVE))[truth]
    header = ",".join(f"g{j}" for j in range(COLS))
    body = "\n".join(",".join(f"{v:.3f}" for v in row) for row in X)
    return (header + "\n" + body).encode(), truth


def test_a_wide_table_goes_through_every_page(wide_csv):
    data, truth = wide_csv
    at = start(TIMEOUT)
    at.switch_page("pages/data.py").run()
    at.radio(key="w_data_source").set_value("Upload a table").run()
    t0 = time.perf_counter()
    at.file_uploader(key="w_upload").upload("panel.csv", data, "text/csv").run()
    ok(at)
    at.button(key="use_upload").click().run()
    ok(at)
    seconds = time.perf_counter() - t0
    d = at.session_state["data"]
    assert d.wide is not None and len(d.wide.columns) == COLS and d.summarised.shape == (ROWS, COLS)
    assert d.features == d.wide.names and 1 <= len(d.features) <= 50
    assert sum(int(c[1:]) < INFORMATIVE for c in d.wide.informative) >= 0.8 * len(d.wide.informative)
    assert any("principal component" in w.value for w in at.warning)
    assert seconds < 120, f"reading and using the table took {seconds:.0f} s"

    at.session_state["w_algorithms"] = ["MAP-DP", "K-means"]
    at.switch_page("pages/explore.py").run()
    ok(at)
    runs = [v for v in at.session_state["runs"].values() if isinstance(v, runner.Run)]
    mapdp = [r for r in runs if r.algorithm == "MAP-DP"]
    assert mapdp and mapdp[-1].final.labels.shape == (ROWS,)
    labels = mapdp[-1].final.labels
    assert 1 < len(np.unique(labels)) < ROWS  # neither one cluster nor one per row
    assert clustering_scores(truth, labels)["nmi"] > 0.9
    assert at.get("plotly_chart")

    at.switch_page("pages/subtypes.py").run()
    ok(at)
    top = next(df.value for df in at.dataframe if "eta squared" in df.value.columns)
    assert len(top) == 25
    informative = {f"g{j}" for j in range(INFORMATIVE)}
    assert all(c in informative for c in top["column"])  # the shifted columns rank first

    for page in ("tune", "compare", "predict", "data"):
        at.switch_page(f"pages/{page}.py").run()
        ok(at)
    previews = [df.value for df in at.dataframe if "g0" in df.value.columns and "g1" in df.value.columns]
    assert previews and previews[0].shape[1] == 200  # a preview of the first columns
    assert report.assignments(d, labels).shape == (ROWS, COLS + 1)  # the download keeps every column
