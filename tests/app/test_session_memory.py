"""Issue 43, item 6: several students uploading large tables at once against a per-session memory
bound. A table over the bound (the operator's ``[server] session_memory_mb``, passed on by
scripts/serve.py) is refused with a sentence naming its size, the bound and what to do, never a
traceback, and the session keeps none of it; a table under the bound is read as before. A bound of
1 MB set here stands for the server's, so that the tables are small."""
import importlib.util
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from apptools import APP
from apptools import ok as _ok
from explorer import session_memory

ROOT = Path(__file__).resolve().parents[2]
TIMEOUT = 240


def _csv(rows: int, seed: int) -> bytes:
    rng = np.random.default_rng(seed)
    table = pd.DataFrame({"a": rng.normal(size=rows), "b": rng.normal(size=rows),
                          "group": rng.choice(["north", "south", "east", "west"], size=rows)})
    return table.to_csv(index=False).encode()


def test_a_table_over_the_bound_is_refused_in_a_sentence_naming_its_size_and_the_bound(monkeypatch):
    monkeypatch.setenv(session_memory.ENV, "1")
    table = pd.DataFrame({"a": np.zeros(200_000)})  # 1.6 MB of numbers
    with pytest.raises(session_memory.TableTooLarge) as refused:
        session_memory.check_table(table, "big.csv")
    said = str(refused.value)
    assert "'big.csv' takes 1.5 MB" in said and "the 1.0 MB each session may hold" in said
    assert "session_memory_mb" in said and "fewer rows or columns" in said
    session_memory.check_table(table.iloc[:1000], "small.csv")  # under the bound: nothing said
    with pytest.raises(session_memory.TableTooLarge, match="'big.csv' is 2.0 MB"):
        session_memory.check_file(2 * 1024 * 1024, "big.csv")  # refused before it is read
    # text cells count at their size in memory, not as pointers
    words = pd.DataFrame({"w": ["a longer piece of text in every cell"] * 20_000})
    assert session_memory.table_bytes(words) > 20_000 * 36


def test_the_bound_defaults_and_ignores_a_bad_value(monkeypatch):
    monkeypatch.delenv(session_memory.ENV, raising=False)
    assert session_memory.bound_bytes() == session_memory.DEFAULT_MB * 1024 * 1024
    for bad in ("lots", "0", "-5"):
        monkeypatch.setenv(session_memory.ENV, bad)
        assert session_memory.bound_bytes() == session_memory.DEFAULT_MB * 1024 * 1024
    monkeypatch.setenv(session_memory.ENV, "300")
    assert session_memory.bound_bytes() == 300 * 1024 * 1024


def _upload(name: str, body: bytes) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.run()
    at.switch_page("pages/data.py").run()
    at.radio(key="w_data_source").set_value("Upload a table").run()
    at.file_uploader(key="w_upload").upload(name, body, "text/csv").run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def test_several_students_uploading_tables_over_the_bound_are_each_refused_and_keep_nothing(monkeypatch):
    monkeypatch.setenv(session_memory.ENV, "1")
    big = [_csv(30_000, seed) for seed in range(3)]  # each about 1.3 MB as a file, more once read
    assert all(len(b) < 2 * 1024 * 1024 for b in big)
    students = [_upload(f"student{i}.csv", body) for i, body in enumerate(big)]
    for i, at in enumerate(students):
        said = " ".join(e.value for e in at.error)
        assert f"student{i}.csv" in said and "each session may hold on this server" in said, said
        size = float(re.search(r"(?:takes|is) ([\d.]+) MB", said).group(1))
        assert size > 1.0, said  # the size named is over the 1 MB bound
        assert not any(b.key == "use_upload" for b in at.button), "the table was offered anyway"
        assert at.session_state["data"].name != f"student{i}.csv"  # the session's data did not change
        assert "upload_table" not in at.session_state["data_origin"]
    # a table under the bound is read as before, in the same server, at the same time
    small = _upload("small.csv", _csv(2_000, 9))
    _ok(small)
    assert any("Read **2,000 rows × 3 columns**" in m.value for m in small.markdown)
    assert any(b.key == "use_upload" for b in small.button)


def _serve_module():
    spec = importlib.util.spec_from_file_location("serve_for_test", ROOT / "scripts" / "serve.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_bound_comes_from_the_servers_config(tmp_path):
    serve = _serve_module()
    config = tmp_path / "app.toml"
    config.write_text("[server]\nsession_memory_mb = 300\n")
    settings = serve.server_settings(config)
    assert settings["session_memory_mb"] == 300
    assert serve.environment(settings)[session_memory.ENV] == "300"
    assert serve.server_settings(tmp_path / "none.toml")["session_memory_mb"] == session_memory.DEFAULT_MB
    config.write_text("[server]\nsession_memory_mb = 0\n")
    with pytest.raises(serve.ConfigProblem, match="session_memory_mb"):
        serve.server_settings(config)
