"""Large tables on the server (issue 26, item 4): the operator's config file (good, missing, bad),
the tables a visitor may pick (nothing outside the allowed folders, after links; nothing hidden;
nothing typed), the out-of-core fit on a LocalCluster with progress and Stop, the sample with its
labels, and the Data page's new source (only when configured) from a fit to its sample."""
import os
import threading
import time

import numpy as np
import pandas as pd
import pytest

from explorer import large_tables as lt

distributed = pytest.importorskip("distributed")
pytest.importorskip("dask.dataframe")

TIMEOUT = 240


def _write(path, text):
    path.write_text(text)
    return path


def _three_groups(n=3000, seed=0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    m = n // 3
    X = np.concatenate([rng.normal(0, 1, (m, 2)), rng.normal(7, 1, (m, 2)), rng.normal((0, 9), 1, (n - 2 * m, 2))])
    df = pd.DataFrame(X, columns=["a", "b"])
    df["id"] = [f"r{i}" for i in range(n)]
    return df.sample(frac=1.0, random_state=seed).reset_index(drop=True)


# ----------------------------------------------------------------------------- the config file

def test_a_good_config_and_its_defaults(tmp_path):
    folder = tmp_path / "tables"
    folder.mkdir()
    cfg = lt.load_config(_write(tmp_path / "c.toml", f'[large_tables]\nfolders = ["{folder}"]\n'))
    assert cfg.folders == (folder.resolve(),) and cfg.scheduler == "local" and cfg.workers == 2
    assert cfg.sample_rows == 5000
    cfg = lt.load_config(_write(tmp_path / "d.toml", f'[large_tables]\nfolders = ["{folder}"]\n'
                                                     'scheduler = "tcp://10.1.2.3:8786"\nworkers = 3\nsample_rows = 800\n'))
    assert (cfg.scheduler, cfg.workers, cfg.sample_rows) == ("tcp://10.1.2.3:8786", 3, 800)


def test_no_file_or_no_section_turns_the_feature_off(tmp_path, monkeypatch):
    assert lt.load_config(tmp_path / "absent.toml") is None
    assert lt.load_config(_write(tmp_path / "other.toml", '[something_else]\nx = 1\n')) is None
    monkeypatch.setenv(lt.CONFIG_ENV, str(tmp_path / "absent.toml"))
    assert lt.config_path() == tmp_path / "absent.toml" and lt.load_config() is None
    monkeypatch.delenv(lt.CONFIG_ENV)
    assert lt.config_path() == lt.DEFAULT_CONFIG and lt.DEFAULT_CONFIG.name == "mapdp_app.toml"


@pytest.mark.parametrize("body, key", [
    ('folders = "relative/dir"', "folders"),
    ('folders = 3', "folders"),
    ('folders = []', "folders"),
    ('folders = ["{missing}"]', "folders"),
    ('', "folders"),
    ('folders = ["{folder}"]\nworkers = "2"', "workers"),
    ('folders = ["{folder}"]\nworkers = true', "workers"),
    ('folders = ["{folder}"]\nworkers = 0', "workers"),
    ('folders = ["{folder}"]\nsample_rows = 2.5', "sample_rows"),
    ('folders = ["{folder}"]\nscheduler = "http://evil:80"', "scheduler"),
    ('folders = ["{folder}"]\nscheduler = 8786', "scheduler"),
    ('folders = ["{folder}"]\nfolder = "/x"', "folder"),
])
def test_a_bad_key_is_named_with_what_to_write(tmp_path, body, key):
    folder = tmp_path / "tables"
    folder.mkdir()
    text = "[large_tables]\n" + body.format(folder=folder, missing=tmp_path / "nowhere") + "\n"
    with pytest.raises(lt.ConfigProblem) as got:
        lt.load_config(_write(tmp_path / "c.toml", text))
    message = str(got.value)
    assert f"key '{key}'" in message and "Traceback" not in message
    assert any(w in message for w in ("write", "not a folder", "keys are"))


def test_a_file_that_is_not_toml_says_so(tmp_path):
    with pytest.raises(lt.ConfigProblem, match="not valid TOML"):
        lt.load_config(_write(tmp_path / "c.toml", "[large_tables\nfolders = ["))
    with pytest.raises(lt.ConfigProblem, match="must be a section"):
        lt.load_config(_write(tmp_path / "d.toml", 'large_tables = "on"\n'))


# ----------------------------------------------------------------------------- the tables offered

@pytest.fixture
def tree(tmp_path):
    """An allowed folder with tables, hidden ones, links out and a parquet dataset; a secret outside."""
    allowed, outside = tmp_path / "allowed", tmp_path / "outside"
    allowed.mkdir()
    outside.mkdir()
    small = pd.DataFrame({"a": [1.0, 2.0, 3.0], "b": [4.0, 5.0, 6.0]})
    small.to_csv(allowed / "a.csv", index=False)
    (allowed / "sub").mkdir()
    small.to_parquet(allowed / "sub" / "b.parquet")
    (allowed / "ds.parquet").mkdir()
    small.to_parquet(allowed / "ds.parquet" / "part.0.parquet")
    small.to_parquet(allowed / "ds.parquet" / "part.1.parquet")
    small.to_csv(allowed / ".hidden.csv", index=False)
    (allowed / ".private").mkdir()
    small.to_csv(allowed / ".private" / "c.csv", index=False)
    (allowed / "notes.txt").write_text("not a table")
    small.to_csv(outside / "secret.csv", index=False)
    (outside / "more").mkdir()
    small.to_csv(outside / "more" / "d.csv", index=False)
    os.symlink(outside / "secret.csv", allowed / "link_out.csv")
    os.symlink(outside / "more", allowed / "linkdir")
    os.symlink(allowed / "a.csv", allowed / "link_in.csv")  # a link that stays inside is fine
    (allowed / "leaky.parquet").mkdir()  # a parquet folder with one part linked from outside
    small.to_parquet(outside / "x.parquet")
    os.symlink(outside / "x.parquet", allowed / "leaky.parquet" / "part.0.parquet")
    deep = allowed
    for i in range(lt.MAX_DEPTH + 2):
        deep = deep / f"d{i}"
        deep.mkdir()
    small.to_csv(deep / "too_deep.csv", index=False)
    cfg = lt.LargeTablesConfig(folders=(allowed.resolve(),), workers=1, sample_rows=50)
    return cfg, allowed, outside


def test_only_tables_inside_the_allowed_folders_are_listed(tree):
    cfg, allowed, outside = tree
    listed = lt.list_tables(cfg)
    assert {t.name for t in listed} == {"a.csv", "sub/b.parquet", "ds.parquet", "link_in.csv"}
    assert all(t.path.resolve().is_relative_to(allowed.resolve()) for t in listed)
    assert lt.list_tables(None) == []


@pytest.mark.parametrize("choice", ["link_out.csv", "linkdir/d.csv", "../outside/secret.csv", ".hidden.csv",
                                    ".private/c.csv", "leaky.parquet", "notes.txt", "sub/../a.csv",
                                    "{outside}/secret.csv", "/etc/passwd", "a.csv\x00"])
def test_a_name_not_in_the_list_is_refused(tree, choice):
    cfg, allowed, outside = tree
    with pytest.raises(lt.LargeTableError, match="not one of the tables"):
        lt.open_table(cfg, choice.format(outside=outside))
    with pytest.raises(lt.LargeTableError, match="not one of the tables"):
        lt.start_fit(cfg, choice.format(outside=outside))


def test_listing_is_bounded(tmp_path, monkeypatch):
    for i in range(12):
        (tmp_path / f"t{i:02d}.csv").write_text("a\n1\n")
    monkeypatch.setattr(lt, "MAX_TABLES", 5)
    assert len(lt.list_tables(lt.LargeTablesConfig(folders=(tmp_path.resolve(),)))) == 5


def test_several_folders_are_named_apart(tmp_path):
    one, two = tmp_path / "one", tmp_path / "two"
    for f in (one, two):
        f.mkdir()
        (f / "t.csv").write_text("a\n1\n")
    cfg = lt.LargeTablesConfig(folders=(one.resolve(), two.resolve()))
    assert [t.name for t in lt.list_tables(cfg)] == ["one/t.csv", "two/t.csv"]


# ----------------------------------------------------------------------------- fit and sample

@pytest.fixture(scope="module")
def local_tables(tmp_path_factory):
    folder = tmp_path_factory.mktemp("large")
    df = _three_groups()
    df.to_csv(folder / "groups.csv", index=False)
    (folder / "groups.parquet").mkdir()  # a parquet dataset in three parts
    for i, lo in enumerate(range(0, len(df), 1000)):
        df.iloc[lo:lo + 1000].to_parquet(folder / "groups.parquet" / f"part.{i}.parquet", index=False)
    cfg = lt.LargeTablesConfig(folders=(folder.resolve(),), scheduler="local", workers=1, sample_rows=400)
    yield cfg, df
    lt.close_clients()


@pytest.fixture
def small_parts(monkeypatch):
    monkeypatch.setattr(lt, "CSV_BLOCKSIZE", 25_000)  # a few parts of the small CSV


def test_open_and_fit_a_csv_out_of_core_with_progress(local_tables, small_parts):
    cfg, df = local_tables
    ddf = lt.open_table(cfg, "groups.csv")
    assert ddf.npartitions >= 3 and list(ddf.columns) == ["a", "b", "id"]
    info = lt.describe_table(cfg, "groups.csv")
    assert info["rows"] == len(df) and info["columns"] == 3
    assert lt.suggested_features(ddf) == ["a", "b"]  # the identifier is left out
    steps = []
    model = lt.fit_large(cfg, "groups.csv", steps.append, None, columns=["a", "b"], restart_rows=900)
    phases = [s["phase"] for s in steps]
    assert phases[:2] == ["sample", "extension"] and phases[-1] == "sweep"
    last = steps[-1]
    assert last["committed"] == last["parts"] == ddf.npartitions and 1 <= last["sweep"] <= len(model.partitions_)
    labels = np.asarray(model.labels_.compute())
    assert len(labels) == len(df) and model.n_clusters_ == 3
    assert sorted(np.bincount(labels)) == sorted(model.cluster_sizes_) and model.converged_
    assert model.partitions_.attrs["rows"] == len(df) and not model.partitions_.attrs["stopped"]
    # the three groups are found: each true group is (almost) one cluster
    truth = (df["a"] > 3.5).astype(int) + 2 * (df["b"] > 4.5).astype(int) * (df["a"] < 3.5)
    assert pd.crosstab(truth, labels).max(axis=1).sum() >= 0.99 * len(df)
    # the sample: every drawn row with its label, in table order
    sample = lt.sample_of(ddf, model, 250, seed=4, config=cfg)
    rows = sample[lt.ROW_COLUMN].to_numpy()
    assert len(sample) == 250 and np.all(np.diff(rows) > 0)
    pd.testing.assert_frame_equal(sample[["a", "b", "id"]], df.iloc[rows].reset_index(drop=True),
                                  check_dtype=False)
    np.testing.assert_array_equal(sample[lt.LABEL_COLUMN].to_numpy(), labels[rows])
    everything = lt.sample_of(ddf, model, 10 ** 6, seed=0, config=cfg)  # more than the table: every row
    np.testing.assert_array_equal(everything[lt.ROW_COLUMN].to_numpy(), np.arange(len(df)))
    # the local workers never spill the table's rows to disk
    fractions = lt.client_for(cfg).run(lambda dask_worker: (dask_worker.memory_manager.memory_target_fraction,
                                                            dask_worker.memory_manager.memory_spill_fraction))
    assert fractions and all(f == (False, False) for f in fractions.values()), fractions


def test_stop_keeps_the_last_complete_sweep(local_tables):
    cfg, df = local_tables
    ddf = lt.open_table(cfg, "groups.parquet")
    assert ddf.npartitions == 3 and [t.name for t in lt.list_tables(cfg)] == ["groups.csv", "groups.parquet"]
    stop = threading.Event()

    def progress(step):  # Stop pressed as the first sweep's last part is committed
        if step["phase"] == "sweep" and step["committed"] == step["parts"]:
            stop.set()

    # tol = 0: without Stop the sweeps would go on to max_iter
    model = lt.fit_large(cfg, "groups.parquet", progress, stop, columns=["a", "b"], restart_rows=300, tol=0.0,
                         max_iter=50)
    assert model.partitions_.attrs["stopped"] and not model.converged_ and len(model.partitions_) == 1
    assert len(model.labels_.compute()) == len(df)


def test_a_fit_in_a_thread_stopped_at_once_says_nothing_was_fitted(local_tables):
    cfg, df = local_tables
    job = lt.start_fit(cfg, "groups.parquet", ["a", "b"], restart_rows=300)
    job.request_stop()
    assert job.stopping and job.wait(120)
    assert job.model is None and job.stopped_early and job.error.startswith("Stopped")
    again = lt.start_fit(cfg, "groups.parquet", ["a", "b"], restart_rows=300)  # the slot was given back
    assert again.wait(120) and again.model is not None and again.rounds and again.step["phase"] == "sweep"


def test_the_sample_keeps_its_label_column_apart_from_the_tables(local_tables):
    class Fitted:  # a model whose labels are the row numbers
        def __init__(self, n):
            import dask.array as da
            self.labels_ = da.arange(n, chunks=n // 3 + 1)

    ddf = pd.DataFrame({lt.LABEL_COLUMN: [9, 9, 9], "x": [1.0, 2.0, 3.0]})
    import dask.dataframe as dd
    got = lt.sample_of(dd.from_pandas(ddf, npartitions=2), Fitted(3), 2, seed=1, config=local_tables[0])
    assert list(got[lt.LABEL_COLUMN]) == [9, 9]  # the table's own column is kept as it was
    assert list(got["_" + lt.LABEL_COLUMN]) == list(got[lt.ROW_COLUMN])


def test_an_unreachable_scheduler_is_said_in_a_sentence(tmp_path):
    cfg = lt.LargeTablesConfig(folders=(tmp_path,), scheduler="tcp://127.0.0.1:9")
    t0 = time.time()
    with pytest.raises(lt.LargeTableError, match="could not be reached"):
        lt.client_for(cfg)
    assert time.time() - t0 < 60


# ----------------------------------------------------------------------------- the Data page

def _page(monkeypatch, config_file):
    from apptools import start
    monkeypatch.setenv(lt.CONFIG_ENV, str(config_file))
    at = start(TIMEOUT)
    at.switch_page("pages/data.py").run()
    return at


def test_the_source_shows_only_when_the_operator_configured_it(tmp_path, monkeypatch):
    from apptools import ok
    at = _page(monkeypatch, tmp_path / "absent.toml")
    ok(at)
    assert "A large table on this server" not in at.radio(key="w_data_source").options
    _write(tmp_path / "bad.toml", "[large_tables]\nfolders = ['relative']\n")
    at = _page(monkeypatch, tmp_path / "bad.toml")
    at.radio(key="w_data_source").set_value("A large table on this server").run()
    assert not at.exception
    # visitors learn that the source is off, not the server's paths (those go to the operator's console)
    assert any("settings for large tables have a problem" in e.value for e in at.error)
    assert not any("folders" in e.value or str(tmp_path) in e.value for e in at.error)


def test_the_data_page_fits_a_large_table_and_explores_a_sample(local_tables, monkeypatch, tmp_path):
    from apptools import ok
    cfg, df = local_tables
    folder = cfg.folders[0]
    config_file = _write(tmp_path / "app.toml", f'[large_tables]\nfolders = ["{folder}"]\nworkers = 1\n'
                                               'sample_rows = 400\n')
    at = _page(monkeypatch, config_file)
    at.radio(key="w_data_source").set_value("A large table on this server").run()
    ok(at)
    box = at.selectbox(key="w_large_table")
    assert box.options == ["groups.csv", "groups.parquet"]
    box.set_value("groups.parquet").run()
    ok(at)
    assert any("3,000 rows × 3 columns" in m.value for m in at.markdown)
    columns = [w for w in at.multiselect if w.key.startswith("w_large_columns_")][0]
    assert columns.value == ["a", "b"]
    at.button(key="large_fit_start").click().run()
    ok(at)
    job = at.session_state["large_fit_job"]
    assert job.wait(180) and job.model is not None, job.error
    at.run()
    ok(at)
    done = [s.value for s in at.success]
    assert any("K = 3" in s and "converged" in s for s in done), done
    at.button(key="large_sample").click().run()
    ok(at)
    d = at.session_state["data"]
    assert d.n_rows == 400 and d.features == ["a", "b"] and d.true_k == 3
    assert lt.LABEL_COLUMN in d.table.columns and d.id_column == lt.ROW_COLUMN


def test_the_data_page_shows_progress_and_stop_ends_the_fit(local_tables, monkeypatch, tmp_path):
    from apptools import ok
    folder = local_tables[0].folders[0]
    at = _page(monkeypatch, _write(tmp_path / "app.toml", f'[large_tables]\nfolders = ["{folder}"]\nworkers = 1\n'))
    at.radio(key="w_data_source").set_value("A large table on this server").run()
    at.selectbox(key="w_large_table").set_value("groups.csv").run()
    at.button(key="large_fit_start").click().run()
    ok(at)
    job = at.session_state["large_fit_job"]
    # while it runs: the phase in words, Stop, and no second fit
    assert at.button(key="large_fit_start").disabled and not at.button(key="large_fit_stop").disabled
    assert any("Fitting groups.csv out of core" in c.value for c in at.caption)
    at.button(key="large_fit_stop").click().run()
    ok(at)
    assert job.stopping
    assert job.wait(180)
    at.run()
    ok(at)
    said = [w.value for w in at.warning] + [s.value for s in at.success]
    assert any(s.startswith("Stopped") or "stopped by Stop" in s or "converged" in s for s in said), said
    assert not at.button(key="large_fit_start").disabled  # a new fit may start


def test_a_huge_folder_is_not_read_whole(tmp_path, monkeypatch):
    for i in range(30):
        (tmp_path / f"t{i:02d}.csv").write_text("a\n1\n")
    monkeypatch.setattr(lt, "MAX_ENTRIES", 10)
    assert len(lt.list_tables(lt.LargeTablesConfig(folders=(tmp_path.resolve(),)))) <= 10


def test_a_config_problem_reaches_the_operator_once(capsys):
    lt.tell_operator("key 'folders' of /srv/x.toml: write absolute folders")
    lt.tell_operator("key 'folders' of /srv/x.toml: write absolute folders")
    err = capsys.readouterr().err
    assert err.count("/srv/x.toml") == 1 and "large tables are off" in err
