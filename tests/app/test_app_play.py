"""▶ Play goes on from the frame shown (ui.common.play_from), checked in a real browser on the
figure alone: Plotly's Play is client-side, so only a browser can say which frames it plays.

Plotly's own Play and slider remain where no page owns the frame: the Sequences page's ribbons and
the Explore page's self-contained HTML download. The Explore page itself draws one frame at the
position its own First, Back, Play, Step, Last and slider share (ui.player, issue 27:
tests/app/test_animation_player.py). Needs the system Chromium and Playwright (see TESTING.md);
skipped without them.
"""
import shutil

import pytest

from explorer import animation, figures, runner, sources
from ui.common import play_from

playwright = pytest.importorskip("playwright.sync_api")
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(not shutil.which("chromium"), reason="needs the system Chromium (TESTING.md)")]
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync"]
RECORD = ("() => { window.played = []; document.getElementById('g')"
          ".on('plotly_animatingframe', e => window.played.push(e.name)); }")


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


def _open(page, tmp_path, frames, start: int, render: int = 1):
    f, coords, names = frames
    fig = play_from(figures.animation_figure(f, coords, names, start=start), start, render)
    path = tmp_path / f"animation_{start}.html"
    # auto_play off: Streamlit's chart does not play by itself either
    path.write_text(fig.to_html(include_plotlyjs=True, full_html=True, div_id="g", auto_play=False))
    page.goto(path.as_uri())
    page.wait_for_selector(".updatemenu-button")
    page.evaluate(RECORD)


def _play(page, ms: int) -> list:
    page.locator(".updatemenu-button", has_text="Play").first.click()
    page.wait_for_timeout(ms)
    page.locator(".updatemenu-button", has_text="Pause").first.click()
    played = page.evaluate("() => window.played.slice()")
    page.evaluate("() => { window.played = []; }")
    return [int(name.split("-")[1]) for name in played]


def test_play_starts_at_the_frame_shown_and_goes_on_after_pause(page, tmp_path, frames):
    _open(page, tmp_path, frames, start=5)
    first = _play(page, 1300)
    assert first[0] == 5 and first == list(range(5, 5 + len(first))), first
    again = _play(page, 500)
    assert again and again[0] == first[-1] + 1, (first, again)


def test_play_from_the_last_frame_plays_from_the_start(page, tmp_path, frames):
    _open(page, tmp_path, frames, start=frames[0].n_frames - 1)
    played = _play(page, 900)
    assert played and played[0] == 0, played


def test_the_downloaded_animation_counts_frames_and_each_panel_its_own_steps(page, tmp_path, frames):
    """Issue 27: the slider read one algorithm's sweeps (e.g. "sweep 46", DP-means' passes)."""
    f, coords, names = frames
    _open(page, tmp_path, frames, start=f.n_frames - 1)
    assert page.locator(".slider-container text.slider-label").first.text_content() == f"frame {f.n_frames}"
    titles = page.locator(".annotation-text").all_text_contents()
    assert titles[0].startswith("K-means") and f"iteration {f.sweeps[0][-1]} (" in titles[0]
    assert titles[1].startswith("Gibbs") and f"sweep {f.sweeps[1][-1]} (" in titles[1]


def test_play_goes_on_from_a_frame_chosen_on_the_slider(page, tmp_path, frames):
    _open(page, tmp_path, frames, start=2, render=3)
    page.evaluate("() => Plotly.animate('g', ['3-8'], {mode: 'immediate', frame: {duration: 0, redraw: true}, "
                  "transition: {duration: 0}})")
    page.wait_for_timeout(200)
    page.evaluate("() => { window.played = []; }")
    played = _play(page, 500)
    assert played and played[0] == 9, played
