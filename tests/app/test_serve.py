"""Issue 43, item 5: `make serve` (scripts/serve.py) serves the app from a fresh clone, headless,
with the operator's [server] settings from the config file (port, base path behind a proxy,
upload limit). The test reuses this test run's environment (``--python``) and skips filling
numba's cache (``--no-precompile``: on a fresh clone that compiles every kernel, about a minute on
2 cores); `make serve` and the Dockerfile's build do fill it."""
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def clone(tmp_path_factory):
    target = tmp_path_factory.mktemp("fresh") / "mapdp"
    subprocess.run(["git", "clone", "--quiet", "--local", str(ROOT), str(target)], check=True)
    return target


def _serve(clone, config: Path, *extra):
    env = {**os.environ, "MAPDP_APP_CONFIG": str(config)}
    return subprocess.Popen([sys.executable, str(clone / "scripts" / "serve.py"), "--python", sys.executable,
                             "--no-precompile", *extra], cwd=clone, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, start_new_session=True)


def test_the_class_server_serves_the_app_from_a_fresh_clone(clone, tmp_path):
    port = _free_port()
    config = tmp_path / "mapdp_app.toml"
    config.write_text(f'[server]\nport = {port}\naddress = "127.0.0.1"\nbase_path = "class"\nmax_upload_mb = 50\n')
    server = _serve(clone, config)
    try:
        deadline, health = time.monotonic() + 120, None
        while time.monotonic() < deadline and server.poll() is None:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/class/_stcore/health", timeout=2) as r:
                    health = r.read().decode()
                    break
            except OSError:
                time.sleep(0.5)
        assert health == "ok", server.stdout.read() if server.poll() is not None else "no answer"
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/class/", timeout=5) as r:
            assert "<!doctype html>" in r.read().decode().lower()
        command = Path(f"/proc/{server.pid}/cmdline").read_bytes().split(b"\0")
        words = [w.decode() for w in command if w]
        assert str(clone / "app.py") in words  # the clone's app, not this checkout's
        assert words[words.index("--server.maxUploadSize") + 1] == "50"
        assert words[words.index("--server.headless") + 1] == "true"
        assert words[words.index("--server.baseUrlPath") + 1] == "class"
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        server.wait(20)


def test_a_mistake_in_the_config_stops_the_server_with_a_sentence(clone, tmp_path):
    config = tmp_path / "mapdp_app.toml"
    config.write_text('[server]\nport = "eighty"\n')
    server = _serve(clone, config)
    out, _ = server.communicate(timeout=60)
    assert server.returncode == 2 and "key 'port'" in out and "whole number" in out
    config.write_text('[large_tables]\nfolders = ["/no/such/folder"]\n')
    server = _serve(clone, config)
    out, _ = server.communicate(timeout=60)
    assert server.returncode == 2 and "folders" in out
