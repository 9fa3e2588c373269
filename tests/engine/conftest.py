"""What the engine's Dask tests share: a LocalCluster of two worker processes, one per test module
(every task is pickled and run in another interpreter, as on a real cluster)."""
import pytest


@pytest.fixture(scope="module")
def client():
    distributed = pytest.importorskip("distributed")
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                                       silence_logs=50)
    with distributed.Client(cluster) as c:
        yield c
    cluster.close()
