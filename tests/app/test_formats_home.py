"""Home (issue 27): it says which N0 its picture runs and that Explore opens at the chosen one,
why the paper's K-means NMI differs from the app's, and its picture is the page's own frame
(no Plotly Play/slider, so the camera's PNG holds no dead controls). Headless (AppTest)."""
from apptools import chart, ok, start

TIMEOUT = 180


def _text(at) -> str:
    return " ".join([m.value for m in at.markdown] + [c.value for c in at.caption])


def test_home_says_its_n0_and_why_the_nmis_differ():
    at = start(TIMEOUT)
    at.switch_page("pages/home.py").run()
    ok(at)
    text = _text(at)
    assert "N0 = 3" in text and "Explore opens at the N0 that MAPDP() chooses" in text
    assert "own sample" in text and "own restarts" in text
    assert text.count("K-means' NMI in the paper") >= 3
    # said once (issue 43: the same caveat stood six times on the page)
    assert text.count("Table 1") == 1 and text.count("own restarts") == 1 and text.count("own sample") == 1
    spec = chart(at, "home_picture")
    layout = spec["layout"]
    assert not layout.get("updatemenus") and not layout.get("sliders") and not spec.get("frames")
    assert "N0 = 3" in layout["annotations"][0]["text"]


def test_home_picture_steps_with_the_pages_own_controls():
    at = start(TIMEOUT)
    at.switch_page("pages/home.py").run()
    ok(at)
    last = chart(at, "home_picture")["layout"]["annotations"][0]["text"]
    at.button(key="home_frame_first").click().run()
    ok(at)
    first = chart(at, "home_picture")["layout"]["annotations"][0]["text"]
    assert first != last and "sweep 1 " in first.replace("<br>", " ").replace("·", " ") + " "
    at.button(key="home_frame_next").click().run()
    ok(at)
    assert chart(at, "home_picture")["layout"]["annotations"][0]["text"] != first
