import pytest


@pytest.fixture(autouse=True)
def _fresh_shared_runs():
    """Each app test starts as on a fresh server: no runs shared from an earlier test
    (explorer.shared_runs keeps the runs on public data once per process, as a server does)."""
    from explorer import shared_runs
    shared_runs.SERVER.clear()
    shared_runs.FIGURES.clear()
    yield
