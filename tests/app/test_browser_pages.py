"""Every page besides Explore in a real browser, at a phone's width (390×844) and a laptop's
(1280×720): no label of a chart overlaps another or sticks out, no button, pill or chip label is
cut short, the page does not scroll sideways, and no exception box (issue 27: the layout checks
of ``test_browser.py``, which cover Explore, run on Home, Data, Compare, Tune, Subtypes, Predict
and Sequences too). Each page opens in a fresh session on the default data (PLOS 5.2), at its
own address. Screenshots go to ``$MAPDP_SCREENSHOTS`` (default tests/artifacts/)."""
import pytest

from test_browser import (CHART_LABEL_PROBLEMS, CONTROL_LABEL_PROBLEMS, SHOTS, _idle,  # noqa: F401
                          _no_exception, app_url, browser)

pytestmark = pytest.mark.slow

PAGES = [("home", "MAP-DP Explorer"), ("data", "Data"), ("compare", "Compare"), ("tune", "Tune"),
         ("subtypes", "Subtypes"), ("predict", "Predict"), ("sequences", "Sequences, groups and subjects")]


@pytest.mark.parametrize("width,height", [(390, 844), (1280, 720)])
def test_every_page_reads_at_a_phones_and_a_laptops_width(browser, app_url, width, height):  # noqa: F811
    context = browser.new_context(viewport={"width": width, "height": height})
    pg = context.new_page()
    pg.set_default_timeout(360_000)  # the first page of a cold server may still be loading kernels
    problems = {}
    for path, heading in PAGES:
        pg.goto(f"{app_url}/{path}")
        pg.get_by_role("heading", name=heading, exact=True).first.wait_for()
        _idle(pg)
        pg.wait_for_timeout(1000)  # Plotly lays the labels out once more after the chart is attached
        pg.screenshot(path=str(SHOTS / f"layout_{path}_{width}x{height}.png"), full_page=True)
        _no_exception(pg)
        found = pg.evaluate(CHART_LABEL_PROBLEMS) + pg.evaluate(CONTROL_LABEL_PROBLEMS)
        if found:
            problems[path] = found
    context.close()
    assert problems == {}, problems
