"""Run the MAP-DP Explorer as a class server, in one command (``make serve``; the Dockerfile's
build and start steps call this same script).

1. Reads the operator's settings from the app's config file (``$MAPDP_APP_CONFIG``, else
   ``mapdp_app.toml`` in the repository root; ``mapdp_app.example.toml`` shows every key), section
   ``[server]``: ``port``, ``address``, ``base_path`` (the path behind a reverse proxy, e.g.
   ``"mapdp"`` for ``https://host/mapdp/``), ``max_upload_mb`` (an upload's size limit),
   ``numba_threads`` (threads the kernels' parallel parts may use, per run) and ``run_slots`` (how
   many runs compute at once, the others waiting in line: :data:`explorer.shared_runs.RUN_SLOTS`;
   0, one per core) and ``session_memory_mb`` (the most an uploaded table may take in one
   session's memory: :mod:`explorer.session_memory`). It also checks the
   ``[large_tables]`` section (its folders and Dask ``workers``), which the app itself reads, so a
   mistake stops the server here with a sentence instead of turning the source off for visitors.
2. Fills numba's disk cache (``python -m mapdp_core._precompile``), so the first visitor loads
   compiled kernels instead of waiting for the compiler (seconds when the cache is already full).
3. Starts Streamlit headless on ``app.py``, usage statistics off, with those settings.

``--prepare`` does steps 1 and 2 only (a container's build step); ``--dry-run`` prints the
command step 3 would run; ``--python`` names the interpreter (default: the repository's
``.venv``, else the one running this script); ``--no-precompile`` skips step 2 (a test on a
fresh clone that reuses an installed environment).
"""
from __future__ import annotations

import argparse
import os
import shlex
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CONFIG_ENV = "MAPDP_APP_CONFIG"
DEFAULTS = {"port": 8501, "address": "0.0.0.0", "base_path": "", "max_upload_mb": 200, "numba_threads": 0,
            "run_slots": 0, "session_memory_mb": 1024}  # the last as explorer.session_memory.DEFAULT_MB


class ConfigProblem(ValueError):
    """A mistake in the operator's config file, said in a sentence."""


def config_path() -> Path:
    named = os.environ.get(CONFIG_ENV, "").strip()
    return Path(named) if named else ROOT / "mapdp_app.toml"


def server_settings(path: Path | None = None) -> dict:
    """The ``[server]`` section with its defaults; ConfigProblem names a bad key."""
    path = config_path() if path is None else Path(path)
    settings = dict(DEFAULTS)
    try:
        doc = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return settings
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise ConfigProblem(f"The config file ({path}) cannot be read as TOML: {exc}.") from None
    section = doc.get("server", {})
    if not isinstance(section, dict):
        raise ConfigProblem(f"The config file ({path}): 'server' must be a section ([server] on its own line).")
    unknown = sorted(set(section) - set(DEFAULTS))
    if unknown:
        raise ConfigProblem(f"The config file ({path}), section [server]: unknown key(s) {unknown}; the keys are "
                            f"{sorted(DEFAULTS)}.")
    for key, value in section.items():
        if key in ("port", "max_upload_mb", "numba_threads", "run_slots", "session_memory_mb"):
            least = {"port": 1, "max_upload_mb": 1, "numba_threads": 0, "run_slots": 0, "session_memory_mb": 1}[key]
            if isinstance(value, bool) or not isinstance(value, int) or value < least or (key == "port" and value > 65535):
                raise ConfigProblem(f"The config file ({path}), section [server], key '{key}': write a whole number "
                                    f"of at least {least}{' and at most 65535' if key == 'port' else ''}, not {value!r}.")
        elif not isinstance(value, str) or any(c.isspace() for c in value) or "?" in value or "#" in value:
            raise ConfigProblem(f"The config file ({path}), section [server], key '{key}': write text without spaces, "
                                f"'?' or '#', not {value!r}.")
        settings[key] = value
    settings["base_path"] = settings["base_path"].strip("/")
    return settings


def check_large_tables(python: str) -> None:
    """The app's own reading of ``[large_tables]`` (explorer.large_tables.load_config), in ``python``."""
    code = ("import sys\nfrom explorer import large_tables\ntry:\n    large_tables.load_config()\n"
            "except large_tables.ConfigProblem as exc:\n    sys.exit(str(exc))\n")
    done = subprocess.run([python, "-c", code], cwd=ROOT, capture_output=True, text=True)
    if done.returncode:
        raise ConfigProblem(done.stderr.strip().splitlines()[-1] if done.stderr.strip() else "[large_tables] failed")


def default_python() -> str:
    venv = ROOT / ".venv" / "bin" / "python"
    return str(venv) if venv.exists() else sys.executable


def streamlit_command(python: str, settings: dict) -> list[str]:
    command = [python, "-m", "streamlit", "run", str(ROOT / "app.py"), "--server.headless", "true",
               "--server.fileWatcherType", "none",  # a class server's code does not change under it
               "--browser.gatherUsageStats", "false", "--server.port", str(settings["port"]),
               "--server.address", str(settings["address"]), "--server.maxUploadSize", str(settings["max_upload_mb"])]
    if settings["base_path"]:
        command += ["--server.baseUrlPath", settings["base_path"]]
    return command


def environment(settings: dict) -> dict:
    env = dict(os.environ)
    if settings["numba_threads"]:
        env["NUMBA_NUM_THREADS"] = str(settings["numba_threads"])
    if settings["run_slots"]:
        env["MAPDP_RUN_SLOTS"] = str(settings["run_slots"])  # explorer.shared_runs.RUN_SLOTS
    env["MAPDP_SESSION_MEMORY_MB"] = str(settings["session_memory_mb"])  # explorer.session_memory.ENV
    return env


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--python", default=None, help="the interpreter with the app's packages (default: .venv)")
    parser.add_argument("--port", type=int, default=None, help="overrides [server] port")
    parser.add_argument("--prepare", action="store_true", help="check the config and fill numba's cache, then stop")
    parser.add_argument("--no-precompile", action="store_true", help="skip filling numba's cache")
    parser.add_argument("--dry-run", action="store_true", help="print the server command instead of running it")
    args = parser.parse_args(argv)
    python = args.python or default_python()
    try:
        settings = server_settings()
        if args.port is not None:
            settings["port"] = args.port
        check_large_tables(python)
    except ConfigProblem as exc:
        print(f"serve: {exc}", file=sys.stderr)
        return 2
    env = environment(settings)
    if not args.no_precompile:
        print("serve: filling numba's cache (seconds when it is full; about a minute on 2 cores when it is empty)...",
              flush=True)
        subprocess.run([python, "-W", "ignore", "-m", "mapdp_core._precompile"], cwd=ROOT, env=env, check=True)
    command = streamlit_command(python, settings)
    if args.prepare:
        print("serve: ready; start with: " + shlex.join(command), flush=True)
        return 0
    if args.dry_run:
        print(shlex.join(command), flush=True)
        return 0
    where = f"http://{settings['address']}:{settings['port']}/{settings['base_path'] + '/' if settings['base_path'] else ''}"
    print(f"serve: the class server starts at {where} (upload limit {settings['max_upload_mb']} MB, a table in a "
          f"session's memory at most {settings['session_memory_mb']} MB)", flush=True)
    os.chdir(ROOT)  # .streamlit/config.toml is read from here
    os.execve(python, command, env)
    return 0  # not reached


if __name__ == "__main__":
    sys.exit(main())
