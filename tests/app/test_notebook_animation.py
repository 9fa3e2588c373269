"""explorer.notebook.animate: the Explore page's animation as the value of a notebook cell (issue 44).

A table: MAP-DP as MAPDP() chooses, K-means at its K, DP-means at the λ giving it. A fitted
estimator of the registry: its winning restart replayed, the last frame its fitted partition.
The Back/Step buttons are checked in Chromium (skipped without it, as tests/app/test_app_play.py).
"""
import html
import re
import shutil

import numpy as np
import pandas as pd
import pytest

from mapdp_core import MAPDP, KMeans, DPMeans, CollapsedGibbs, MAPIHMM
from mapdp_core.synthetic import plos_scenario

from explorer.notebook import Animation, animate


def _same_partition(a, b) -> bool:
    pairs = np.unique(np.column_stack([a, b]), axis=0)
    return len(pairs) == len(np.unique(a)) == len(np.unique(b))


@pytest.fixture(scope="module")
def scenario():
    X, y = plos_scenario("5.2", n=300, seed=1)
    return pd.DataFrame(X, columns=["x", "y"]), y


@pytest.fixture(scope="module")
def table_animation(scenario):
    df, y = scenario
    return animate(df, truth=y)


def test_table_runs_mapdp_beside_kmeans_and_dpmeans_at_its_k(table_animation, scenario):
    a = table_animation
    table_animation_table = scenario[0]
    assert a.frames.algorithms == ["MAP-DP", "K-means", "DP-means"]
    k = int(a.runs[0].final.n_clusters)
    assert a.runs[1].params["n_clusters"] == k
    assert a.runs[1].final.n_clusters == k
    summary = a.summary()
    assert list(summary["algorithm"]) == a.frames.algorithms
    assert {"nmi", "ari"} <= set(summary.columns)
    # MAP-DP's last frame is the partition MAPDP() itself fits on the table (its components)
    model = MAPDP(random_state=0).fit(table_animation_table)
    assert _same_partition(np.asarray(a.runs[0].final.labels), model.component_labels_)


def test_figure_has_a_frame_per_step_play_pause_back_step_and_a_slider(table_animation):
    fig = table_animation.figure
    n = table_animation.frames.n_frames
    assert len(fig.frames) == n and n >= 2
    labels = [b.label for b in fig.layout.updatemenus[0].buttons]
    assert labels == ["▶ Play", "❚❚ Pause", "◀ Back", "Step ▶"]
    assert len(fig.layout.sliders[0].steps) == n
    # three algorithms and the true groups: points and two ellipse traces per algorithm, as in the app
    assert len(fig.data) == 3 * 4
    titles = [ann.text for ann in fig.layout.annotations]
    assert any("True groups" in t for t in titles) and any(t.startswith("<b>K-means</b> (K = ") for t in titles)


def test_inline_html_is_a_self_contained_iframe_with_the_step_script(table_animation):
    page = table_animation._repr_html_()
    assert page.startswith("<iframe srcdoc=") and 'sandbox="allow-scripts"' in page
    inner = html.unescape(re.search(r'srcdoc="(.*?)" style=', page, re.S).group(1))
    assert "plotly_buttonclicked" in inner and "Plotly.animate" in inner
    assert len(inner) > 3_000_000  # plotly.js inlined: plays with no server and no network


@pytest.mark.parametrize("make", [
    lambda: MAPDP(random_state=0),
    lambda: MAPDP(N0=1.0, prior=None, likelihood="normal_wishart", n_init=3, random_state=2),
    lambda: KMeans(n_clusters=4, n_init=3, random_state=0),
    lambda: DPMeans(lam=8.0, random_state=0),
    lambda: CollapsedGibbs(N0=1.0, n_sweeps=15, random_state=0),
], ids=["MAPDP-auto", "MAPDP-restarts", "KMeans", "DPMeans", "Gibbs"])
def test_a_fitted_estimator_is_replayed_to_its_fitted_partition(scenario, make):
    df, y = scenario
    model = make().fit(df)
    a = animate(model, df, truth=y, beside=("K-means",) if type(model).name != "K-means" else ("DP-means",))
    own = a.runs[0]
    assert a.frames.algorithms[0] == type(model).name
    # the replayed restart is the one fit kept; its reported step is the fitted partition
    shown = own.shown.labels
    fitted = getattr(model, "component_labels_", model.labels_)
    assert _same_partition(np.asarray(shown), np.asarray(fitted))
    assert a.runs[1].final.n_clusters == model.n_clusters_ or a.runs[1].algorithm == "DP-means"


def test_a_structured_estimator_is_replayed_with_its_fit_arguments():
    rng = np.random.default_rng(0)
    states = np.repeat([0, 1, 0, 2], 40)
    X = pd.DataFrame({"v": np.array([0.0, 5.0, 10.0])[states] + rng.normal(0, 0.5, states.size)})
    model = MAPIHMM(random_state=0).fit(X, lengths=[80, 80])
    a = animate(model, X, beside=(), lengths=[80, 80])
    assert a.frames.algorithms == ["MAP-iHMM"]
    assert _same_partition(np.asarray(a.runs[0].shown.labels), model.labels_)


def test_a_dataframe_with_text_and_gaps_is_animated():
    rng = np.random.default_rng(3)
    n = 240
    g = rng.integers(0, 2, n)
    df = pd.DataFrame({"age": rng.normal(40 + 20 * g, 5), "bmi": rng.normal(22 + 8 * g, 2),
                       "smoker": np.where(rng.random(n) < 0.2 + 0.6 * g, "yes", "no")})
    df.loc[rng.choice(n, 30, replace=False), "bmi"] = np.nan
    a = animate(df, max_points=100)
    assert len(a.rows) == 100 and a.notes and "100 of 240 rows" in a.notes[0]
    assert a.figure.layout.xaxis.title.text.startswith("PC1")


def test_mistakes_are_said_in_words(scenario):
    df, y = scenario
    with pytest.raises(ValueError, match="not fitted"):
        animate(KMeans(n_clusters=3), df)
    with pytest.raises(ValueError, match="give the table"):
        animate(KMeans(n_clusters=3).fit(df))
    with pytest.raises(ValueError, match="only for a fitted estimator"):
        animate(df, df)
    with pytest.raises(ValueError, match="one label per row"):
        animate(df, truth=y[:10])
    with pytest.raises(ValueError, match="start"):
        animate(df, start="anywhere")


@pytest.mark.slow
@pytest.mark.skipif(not shutil.which("chromium"), reason="needs the system Chromium (TESTING.md)")
def test_back_and_step_move_the_slider_in_a_browser(table_animation, tmp_path):
    sync = pytest.importorskip("playwright.sync_api")
    args = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
            "--disable-background-networking", "--disable-component-update", "--disable-sync"]
    path = tmp_path / "animation.html"
    table_animation.save(path)
    last = table_animation.frames.n_frames - 1
    with sync.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=shutil.which("chromium"), args=args)
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 720})
            page.goto(path.as_uri())
            page.wait_for_selector(".updatemenu-button")
            # the buttons are drawn before the script that acts on Back and Step is attached
            page.wait_for_function("document.querySelector('.js-plotly-plot').getAttribute('data-steps') === 'ready'")
            active = "document.querySelector('.js-plotly-plot').layout.sliders[0].active"
            assert page.evaluate(active) == last
            page.locator(".updatemenu-button", has_text="Back").click()
            page.wait_for_function(f"{active} === {last - 1}")
            page.locator(".updatemenu-button", has_text="Step").click()
            page.wait_for_function(f"{active} === {last}")
            page.locator(".updatemenu-button", has_text="Step").click()  # stays on the last frame
            page.wait_for_timeout(300)
            assert page.evaluate(active) == last
            title = page.locator(".annotation-text", has_text="MAP-DP").first.text_content()
            assert "K = " in title
        finally:
            browser.close()


def test_plain_text_is_one_short_line(table_animation):
    text = repr(table_animation)
    assert text.startswith("<Animation of MAP-DP, K-means, DP-means:") and "\n" not in text and len(text) < 120


@pytest.mark.slow
@pytest.mark.skipif(not shutil.which("chromium"), reason="needs the system Chromium (TESTING.md)")
def test_back_works_in_the_inline_frame_whatever_the_page_s_encoding(table_animation, tmp_path):
    """The notebook's output frame inside a page that declares no encoding (read as windows-1252):
    the button labels (◀, ▶) must still match the script's."""
    sync = pytest.importorskip("playwright.sync_api")
    args = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
            "--disable-background-networking", "--disable-component-update", "--disable-sync"]
    path = tmp_path / "cell.html"
    path.write_text(f"<html><body>{table_animation._repr_html_()}</body></html>", encoding="utf-8")
    last = table_animation.frames.n_frames - 1
    with sync.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=shutil.which("chromium"), args=args)
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            page.goto(path.as_uri())
            page.frame_locator("iframe").locator(".updatemenu-button").first.wait_for()
            inner = next(f for f in page.frames if f.url.startswith("about:srcdoc"))
            inner.wait_for_function("document.querySelector('.js-plotly-plot').getAttribute('data-steps') === 'ready'")
            page.frame_locator("iframe").locator(".updatemenu-button", has_text="Back").click()
            inner.wait_for_function(f"document.querySelector('.js-plotly-plot').layout.sliders[0].active === {last - 1}")
        finally:
            browser.close()
