"""Issue 43, item 6: a Dask worker killed during an out-of-core fit. The partitioned sweeps keep only
each part's newest version on the workers, so the parts a dead worker held cannot be computed again
from their history (Dask cancels the fit's futures: "already forgotten"). The fit then starts again
from the table, read again from the operator's file, and ends with the labels of a fit that lost
no worker; when every try loses a worker it stops with a plain sentence, and no labels at all
(never a partial fit shown as final). Workers are killed with SIGKILL, as the kernel's
out-of-memory killer ends a process."""
import os
import re
import signal

import numpy as np
import pandas as pd
import pytest

from explorer import large_tables as lt

FIT = {"restart_rows": 1000, "tol": 0.0, "max_iter": 4}


@pytest.fixture(scope="module")
def two_workers(tmp_path_factory):
    folder = tmp_path_factory.mktemp("large_faults")
    rng = np.random.default_rng(0)
    g = rng.integers(0, 3, 24_000)
    pd.DataFrame({"a": rng.normal(size=len(g)) + 4 * g, "b": rng.normal(size=len(g)) + 3 * (g == 1)}).to_csv(
        folder / "t.csv", index=False)
    cfg = lt.LargeTablesConfig(folders=(folder.resolve(),), scheduler="local", workers=2, sample_rows=400)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(lt, "CSV_BLOCKSIZE", 100_000)  # ten parts, spread over both workers
        reference = lt.fit_large(cfg, "t.csv", None, None, columns=["a", "b"], **FIT)
        yield cfg, np.asarray(reference.labels_.compute())
    lt.close_clients()


def _killing(monkeypatch, cfg, every_try: bool) -> list:
    """Kill one worker process at the first sweep's first round (of the first try, or of every try)."""
    client, killed, real = lt.client_for(cfg), [], lt.FitJob._progress

    def progress(job, step):
        if step.get("phase") == "sweep" and step["sweep"] == 1 and step["round"] == 1 and (every_try or not killed):
            pids = client.run(os.getpid)
            if len(pids) == cfg.workers:  # not while a killed worker is still being replaced
                os.kill(sorted(pids.values())[0], signal.SIGKILL)
                killed.append(dict(step))
        real(job, step)

    monkeypatch.setattr(lt.FitJob, "_progress", progress)
    monkeypatch.setattr(lt, "CSV_BLOCKSIZE", 100_000)
    return killed


def test_a_worker_killed_mid_fit_starts_the_fit_again_and_ends_with_the_full_fits_labels(two_workers, monkeypatch):
    cfg, reference = two_workers
    killed = _killing(monkeypatch, cfg, every_try=False)
    steps = []
    real = lt.FitJob._progress
    monkeypatch.setattr(lt.FitJob, "_progress", lambda job, step: steps.append(dict(step)) or real(job, step))
    job = lt.start_fit(cfg, "t.csv", ["a", "b"], **FIT)
    assert job.wait(300)
    assert killed, "no worker was killed"
    assert job.error is None and job.model is not None and job.retries == 1
    retry = [s for s in steps if s["phase"] == "retry"]
    assert retry == [{"phase": "retry", "attempt": 2, "tries": lt.MAX_FIT_TRIES}]
    assert lt.progress_text(retry[0]).startswith("A worker of the cluster stopped during the fit")
    np.testing.assert_array_equal(np.asarray(job.model.labels_.compute()), reference)
    assert all(r["sweep"] >= 1 for r in job.rounds) and job.rounds[-1]["committed"] == job.rounds[-1]["parts"]


def test_a_worker_killed_at_every_try_stops_with_a_sentence_and_no_labels(two_workers, monkeypatch):
    cfg, _ = two_workers
    monkeypatch.setattr(lt, "MAX_FIT_TRIES", 2)
    original = lt.FitJob._progress
    killed = _killing(monkeypatch, cfg, every_try=True)
    job = lt.start_fit(cfg, "t.csv", ["a", "b"], **FIT)
    assert job.wait(300)
    assert len(killed) == 2 and job.retries == 1
    assert job.model is None and not job.stopped_early  # nothing fitted: no partial labels to show
    assert job.error.startswith("A worker of the cluster stopped during the fit") and "2 times" in job.error
    assert "Error" not in job.error and not re.search(r"[0-9a-f]{8}-", job.error)  # no exception names nor task keys
    monkeypatch.setattr(lt.FitJob, "_progress", original)
    again = lt.start_fit(cfg, "t.csv", ["a", "b"], **FIT)  # the cluster serves the next fit
    assert again.wait(300) and again.model is not None
