"""Issue 43, Play in a real browser (system Chromium, Playwright; skipped as test_browser.py is): the
browser plays the frames in ONE chart, restyled in place (before, every frame was a new chart drawn
from scratch: 1.7 frames a second), and Pause stops on the frame on screen, with the slider, the
caption under it and the panel titles on that same frame. Structural, not timed: the frames a second
are benchmarks/bench_browser_loop.py's."""
import re

import pytest

from test_browser import SHOTS, _idle, _no_exception, _open_explore, app_url, browser  # noqa: F401

pytestmark = pytest.mark.slow
PLAYED = "document.querySelector('.mapdp-played')"


def _frame(pg) -> int:
    return int(pg.get_by_role("slider", name="Frame").get_attribute("aria-valuetext").split(" of ")[0])


def test_play_restyles_one_chart_and_pause_stops_on_the_frame_shown(browser, app_url):
    from playwright.sync_api import expect

    context, pg = _open_explore(browser, app_url, 1280, 720)
    slider = pg.get_by_role("slider", name="Frame")
    n = int(slider.get_attribute("aria-valuetext").split(" of ")[1])
    assert n >= 8
    pg.get_by_role("button", name="First").click()
    expect(slider).to_have_attribute("aria-valuetext", f"1 of {n}", timeout=60_000)
    _idle(pg)
    pg.wait_for_timeout(1500)  # the probe beside the buttons has said the browser can play
    rest_titles = pg.locator(".st-key-animation .annotation-text").all_text_contents()
    pg.get_by_role("button", name="Play").click()
    pg.wait_for_function(f"() => {PLAYED} !== null", timeout=60_000)
    pg.evaluate(f"() => {{ window.__played = {PLAYED}; }}")
    pg.wait_for_function(f"() => Number({PLAYED}.dataset.frame) >= 3", timeout=60_000)
    # the same chart element, its titles moved on: restyled in place, not drawn anew
    assert pg.evaluate(f"() => window.__played === {PLAYED} && window.__played.isConnected")
    played_titles = pg.locator(".mapdp-played .annotation-text").all_text_contents()
    assert len(played_titles) == len(rest_titles) and played_titles != rest_titles
    # the slider follows the frames drawn
    expect(slider).not_to_have_attribute("aria-valuetext", f"1 of {n}", timeout=30_000)
    pg.screenshot(path=str(SHOTS / "issue43_playing_in_browser.png"))
    # the frame on screen at the moment of the click (read in the page, as the click happens)
    pg.evaluate(f"""() => document.addEventListener('click', e => {{
        const b = e.target.closest('button');
        if (b && b.textContent.includes('Pause')) window.__atClick = Number({PLAYED}.dataset.frame); }}, true)""")
    pg.get_by_role("button", name="Pause").click()
    pg.get_by_role("button", name="Play").wait_for(timeout=60_000)
    _idle(pg)
    pg.locator(".st-key-animation .annotation-text").first.wait_for()
    at = _frame(pg) - 1
    shown = pg.evaluate("() => window.__atClick")
    assert at == shown, (at, shown)  # Pause stops on the frame on screen when it was clicked
    # one frame everywhere: the caption under the controls and the chart drawn at rest
    caption = pg.get_by_text(re.compile(rf"^frame {at + 1} of {n}:"))
    expect(caption).to_be_visible(timeout=30_000)
    steps = dict(re.findall(r"(MAP-DP|K-means|DP-means) (?:sweep|iteration|pass) (\d+)", caption.text_content()))
    titles = pg.locator(".st-key-animation .annotation-text").all_text_contents()
    for name, step in steps.items():
        assert any(t.startswith(name) and re.search(rf"(sweep|iteration|pass) {step}\b", t) for t in titles), (
            name, step, titles)
    # and Step goes on from there
    pg.get_by_role("button", name="Step").click()
    expect(slider).to_have_attribute("aria-valuetext", f"{at + 2} of {n}", timeout=60_000)
    _idle(pg)
    pg.wait_for_timeout(1000)
    # Play again starts from that frame: the chart the browser draws first shows it (the frames sent once
    # serve any starting frame)
    here = pg.locator(".st-key-animation .annotation-text").all_text_contents()
    pg.evaluate("""() => { window.__first = null; new MutationObserver((ms, obs) => { for (const m of ms)
        if (m.attributeName === 'data-frame' && window.__first === null) {
            window.__first = [m.target.dataset.frame,
                              [...m.target.querySelectorAll('.annotation-text')].map(e => e.textContent)];
            obs.disconnect(); } })
        .observe(document.body, {subtree: true, attributes: true, attributeFilter: ['data-frame']}); }""")
    pg.get_by_role("button", name="Play").click()
    pg.wait_for_function("() => window.__first !== null", timeout=60_000)
    frame, titles = pg.evaluate("() => window.__first")
    assert int(frame) == at + 1 and titles == here, (frame, at + 1, titles, here)
    pg.get_by_role("button", name="Pause").click()
    pg.get_by_role("button", name="Play").wait_for(timeout=60_000)
    _no_exception(pg)
    context.close()
