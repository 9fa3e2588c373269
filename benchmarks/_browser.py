"""What the browser benchmarks share (``bench_browser_loop.py``, ``class_load.py``): the system
Chromium, the page probes they wait on, and a free port for the server they start."""
from __future__ import annotations

import os
import socket

CHROMIUM = os.environ.get("MAPDP_CHROMIUM", "/usr/bin/chromium")
TITLES = ".js-plotly-plot .annotation-text"
# true once a subplot title reads "MAP-DP (N0 = <wanted>)"
SHOWS_N0 = """(wanted) => [...document.querySelectorAll('.js-plotly-plot .annotation-text')].some(e => {
    const m = e.textContent.match(/^MAP-DP \\(N0 = ([^)]+)\\)/);
    return m !== null && Math.abs(parseFloat(m[1]) - wanted) <= 1e-9 * Math.max(1, wanted);
})"""
# the animation's frame slider ("<frame> of <frames>"), read in the page, so that a change is seen at once
FRAME_TEXT = """() => { const e = document.querySelector('input[type="range"][aria-label="Frame"]');
    return e ? e.getAttribute('aria-valuetext') : null; }"""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]
