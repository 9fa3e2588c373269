"""The Explore page's self-contained HTML download, checked in a real browser: the one place
left with Plotly's own Play and slider (every page draws one frame at the position its own First,
Back, Play, Step, Last and slider share: ui.player, issue 27, tests/app/test_animation_player.py).
Needs the system Chromium and Playwright (see TESTING.md); skipped without them.
"""
import shutil

import pytest

from explorer import animation, figures, runner, sources

playwright = pytest.importorskip("playwright.sync_api")
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(not shutil.which("chromium"), reason="needs the system Chromium (TESTING.md)")]
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync"]


@pytest.fixture(scope="module")
def frames():
    d = sources.scenario_data("5.2", n=300)
    runs = [runner.run(d, "K-means", {"n_clusters": 3}), runner.run(d, "Gibbs", {"N0": 1.0, "n_sweeps": 12})]
    coords, names = sources.projection(d)
    return animation.animation_frames(runs, coords, None, d.truth), coords, names


@pytest.fixture(scope="module")
def page():
    with playwright.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        try:
            yield browser.new_page()
        finally:
            browser.close()


def _open(page, tmp_path, frames, start: int):
    f, coords, names = frames
    fig = figures.animation_figure(f, coords, names, start=start)
    path = tmp_path / f"animation_{start}.html"
    # auto_play off: Streamlit's chart does not play by itself either
    path.write_text(fig.to_html(include_plotlyjs=True, full_html=True, div_id="g", auto_play=False))
    page.goto(path.as_uri())
    page.wait_for_selector(".updatemenu-button")


def test_the_downloaded_animation_counts_frames_and_each_panel_its_own_steps(page, tmp_path, frames):
    """Issue 27: the slider read one algorithm's sweeps (e.g. "sweep 46", DP-means' passes)."""
    f, coords, names = frames
    _open(page, tmp_path, frames, start=f.n_frames - 1)
    assert page.locator(".slider-container text.slider-label").first.text_content() == f"frame {f.n_frames}"
    titles = page.locator(".annotation-text").all_text_contents()
    assert titles[0].startswith("K-means") and f"iteration {f.sweeps[0][-1]} (" in titles[0]
    assert titles[1].startswith("Gibbs") and f"sweep {f.sweeps[1][-1]} (" in titles[1]

