"""Issue 27, cold start: on a freshly started server the page stood blank for about 10 s while
app.py imported the library (scikit-learn, SciPy, pandas, numba) before drawing anything. app.py
now draws the page frame (title, the sidebar's pages, a status line saying what the wait is for)
first and imports the library after it.

Checked two ways: in app.py's source, no import of the library comes before the first drawing
calls; and in a fresh process (nothing imported yet, as on a new server), what the page had sent
when the library began to import (benchmarks/bench_app_loop.py --cold-child, which also times it).
"""
import ast
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
HEAVY = ("mapdp_core", "explorer", "numba", "sklearn", "scipy", "pandas", "ui.common")


def _imports(node) -> list[str]:
    if isinstance(node, ast.Import):
        return [a.name for a in node.names]
    if isinstance(node, ast.ImportFrom):
        return [f"{node.module}.{a.name}" for a in node.names]
    return []


def test_app_draws_the_page_frame_before_importing_the_library():
    tree = ast.parse((ROOT / "app.py").read_text())
    heavy_at = None
    drawn = []
    for node in tree.body:  # module level, in order
        names = _imports(node)
        if any(n == h or n.startswith(h + ".") for n in names for h in HEAVY):
            heavy_at = node.lineno
            break
        drawn += [ast.unparse(call.func) for call in ast.walk(node) if isinstance(call, ast.Call)]
    assert heavy_at is not None, "app.py imports the library somewhere (lazily, after the frame)"
    for call in ("st.set_page_config", "st.navigation", "st.sidebar.page_link", "st.info", "st.title"):
        assert call in drawn, f"{call} is not drawn before line {heavy_at}, where the library is imported"


def test_a_fresh_server_shows_the_frame_and_a_truthful_status_before_the_imports():
    done = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "bench_app_loop.py"), "--cold-child"],
                          cwd=ROOT, capture_output=True, text=True, timeout=600,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 0, done.stderr[-3000:]
    found = json.loads(done.stdout.strip().splitlines()[-1])
    assert not found["errors"] and found["title_after"] == ["Explore"]
    for module in ("mapdp_core", "numba"):
        seen = found["seen"][module]  # what the page had drawn when it began to import the module
        assert seen["titles"] == ["MAP-DP Explorer"] and seen["page_links"] == 8, seen
        assert len(seen["info"]) == 1 and "importing the numerical libraries" in seen["info"][0]
