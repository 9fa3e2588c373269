"""One position for an animation: First, Back, ▶ Play / ❚❚ Pause, Step, Last and a frame slider
that all move the same frame index, kept in ``st.session_state`` (issue 27).

Before, the chart carried Plotly's own Play button and slider, which moved the frame in the
browser only: after Play to the end, Back went to frame 1; after a click on the middle of
Plotly's slider, Step went to frame 2. Here the server owns the position and the chart is drawn
at it; Plotly's controls are left out of the chart.

▶ Play is a Streamlit fragment that reruns itself every :data:`PLAY_DELAY` seconds
(``st.fragment(run_every=...)``) while playing: each of its runs moves one frame on from the
frame last drawn and draws it, so the slider, the buttons and the chart move together and Pause,
Back or Step after Play start from the frame on screen. Play and Pause rerun the whole page once,
to start or stop the fragment's timer; a frame change by button or slider reruns the fragment
alone (the chart and its controls, not the page).

Every run of the fragment while playing counts as one tick, except the run of the Play click
itself; a headless test plays by running the page again (``AppTest.run``) once per frame.

**Playing in the browser** (issue 43: a new chart drawn from scratch at every tick kept Play under
two frames a second). A page whose chart can play in the browser says so (``player(...,
in_browser=True)``) and, while :func:`browser_plays`, draws :func:`browser_chart` instead of its
chart: a small component (``ui/play_component/player.js``) that gets the frames once, draws the first
and restyles the same chart in place for the next ones, reporting each frame it has drawn. Each
report moves the position here (the slider, the caption and the buttons follow it), so Pause, Back,
Step or the slider stop on the frame on screen; the last frame ends playback as before. The browser
plays only after the component said it can (a probe beside the buttons loads plotly.js, from the
installed plotly package, and says "ready"); until then, and in a headless test, which runs no
JavaScript, Play ticks on the server as above.
"""
from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import streamlit as st

__all__ = ["PLAY_DELAY", "BROWSER_DELAY", "Keys", "player", "position", "playing", "browser_plays", "browser_chart"]

#: Seconds between frames while playing (on the server: a headless test, or a browser not ready yet).
PLAY_DELAY = 0.5
#: Seconds between frames while the browser plays (each frame is a restyle of the same chart there).
BROWSER_DELAY = 0.4
_SCRIPT = (Path(__file__).parent / "play_component" / "player.js").read_text(encoding="utf-8")


@dataclass(frozen=True)
class Keys:
    """The session-state and widget keys of one player (``prefix`` "frame": the Explore page's)."""

    prefix: str = "frame"

    @property
    def position(self) -> str:  # the frame shown (an int), the one source of truth
        return f"{self.prefix}_position"

    @property
    def playing(self) -> str:
        return f"{self.prefix}_playing"

    @property
    def fresh(self) -> str:  # set by the Play click: its own run draws the frame it starts from
        return f"{self.prefix}_play_fresh"

    @property
    def results(self) -> str:  # what the frames show: new results start at their last frame
        return f"{self.prefix}_results"

    @property
    def last(self) -> str:
        return f"{self.prefix}_last_index"

    @property
    def drawn(self) -> str:  # the frame last drawn whole: a tick goes on from there
        return f"{self.prefix}_drawn"

    @property
    def moves(self) -> str:  # how many times the page moved the position itself (buttons, Play's ticks)
        return f"{self.prefix}_moves"

    def slider(self, moves: int) -> str:
        """The slider's widget key: a new one whenever the page moves the position, so that a value the
        browser sent for an older slider (a request already on its way, e.g. Play's next tick, when the
        page moved on) is never taken for a move of the slider."""
        return f"w_{self.prefix}_{moves}"

    def button(self, name: str) -> str:
        return f"{self.prefix}_{name}"

    @property
    def browser(self) -> str:  # True once this session's browser said it can play (the probe's "ready")
        return f"{self.prefix}_browser_ready"

    @property
    def token(self) -> str:  # which press of Play the browser plays (its reports name it)
        return f"{self.prefix}_browser_token"

    @property
    def chart(self) -> str:  # the widget key of the chart the browser plays
        return f"{self.prefix}_browser_chart"

    @property
    def plays(self) -> str:
        return f"{self.prefix}_plays"

    @property
    def sent(self) -> str:  # the token whose frames the browser has: later runs send it alone
        return f"{self.prefix}_browser_sent"


def position(keys: Keys = Keys()) -> int:
    """The frame shown (0-based)."""
    return int(st.session_state.get(keys.position, 0))


def playing(keys: Keys = Keys()) -> bool:
    return bool(st.session_state.get(keys.playing, False))


def browser_plays(keys: Keys = Keys()) -> bool:
    """Playing, and in the browser: the page draws :func:`browser_chart` instead of its chart."""
    ss = st.session_state
    return bool(ss.get(keys.playing)) and bool(ss.get(keys.browser)) and keys.token in ss


def _component():
    from streamlit.components.v2 import component
    return component("mapdp_explorer.player", js=_SCRIPT, isolate_styles=False)


_PLOTLY = "ui.player.plotlyjs"  # declare_component names it after this module


def _plotly_url() -> str:
    """Where the browser fetches plotly.js: the installed plotly package's own file, served by this
    Streamlit server as a (never drawn) component's folder; nothing from outside. Registered once per
    server; without a server (a test's sessions in threads) nothing is served and the URL is unused."""
    try:
        from streamlit.runtime import Runtime
        if Runtime.instance().component_registry.get_component_path(_PLOTLY) is None:
            import plotly
            from streamlit.components.v1 import declare_component
            declare_component("plotlyjs", path=os.path.join(os.path.dirname(plotly.__file__), "package_data"))
    except RuntimeError:
        pass
    base = (st.get_option("server.baseUrlPath") or "").strip("/")
    return f"{'/' + base if base else ''}/component/{_PLOTLY}/plotly.min.js"


def _shown(keys: Keys, widget: str):
    """A report of the browser: the frame it has drawn (``{token, frame}``) becomes the position."""
    def callback():
        ss = st.session_state
        said = (ss.get(widget) or {}).get("shown") or {}
        if not ss.get(keys.playing) or said.get("token") != ss.get(keys.token):
            return  # an earlier Play's report, or one sent after Pause: the position stays
        if said.get("lost"):
            ss.pop(keys.sent, None)  # the browser has not got the frames: the next run sends them
            return
        frame = int(said.get("frame", -1))
        if 0 <= frame <= int(ss.get(keys.last, 0)) and frame != int(ss.get(keys.position, -1)):
            _moved(keys, frame)
        ss[keys.drawn] = int(ss.get(keys.position, 0))
        ss[keys.sent] = said.get("token")
        if said.get("failed"):  # it could not draw: stop here; Play again plays on the server
            ss[keys.browser] = False
            ss[keys.playing] = False
    return callback


def _ready(keys: Keys, widget: str):
    def callback():
        if ((st.session_state.get(widget) or {}).get("ready")):
            st.session_state[keys.browser] = True
    return callback


def browser_chart(build: Callable[[], dict], keys: Keys = Keys(), config: dict | None = None) -> None:
    """The chart while the browser plays: ``build()`` gives :func:`explorer.playback.browser_frames`'
    payload (the browser draws its figure at the position first), sent once per press of Play; the
    runs its reports cause send the token alone."""
    ss = st.session_state
    token = ss[keys.token]
    data = {"mode": "play", "token": token}
    if ss.get(keys.sent) != token:
        start = int(ss[keys.position])
        data.update(build(), start=start, delay_ms=int(BROWSER_DELAY * 1000), plotly=_plotly_url(),
                    config=config or {})
    _component()(key=keys.chart, data=data, on_shown_change=_shown(keys, keys.chart))


def _catch_up(keys: Keys) -> None:
    """Before a click acts on the position while the browser plays: the browser's latest report (it
    came with the click, whichever callback Streamlit calls first), so that Pause, Back or Step start
    from the frame on screen, not from the last report the server had run."""
    if browser_plays(keys) and keys.chart in st.session_state:
        _shown(keys, keys.chart)()


def _moved(keys: Keys, frame: int) -> None:
    """The page moves the position to ``frame`` (the slider is drawn anew at it)."""
    ss = st.session_state
    ss[keys.position] = int(frame)
    ss[keys.moves] = int(ss.get(keys.moves, 0)) + 1


def _move(keys: Keys, to: Callable[[int, int], int]):
    """A button's callback: move the position (``to(position, last)``); a move pauses Play
    (:func:`_pause`)."""
    def callback():
        ss = st.session_state
        _catch_up(keys)
        last = int(ss.get(keys.last, 0))
        _moved(keys, min(max(to(int(ss.get(keys.position, last)), last), 0), last))
        if ss.get(keys.playing):
            _pause(keys)
    return callback


def _slid(keys: Keys, key: str):
    def callback():
        ss = st.session_state
        if key != keys.slider(int(ss.get(keys.moves, 0))):
            return  # an older slider's value, sent before the page moved on: not a move of the slider
        ss[keys.position] = int(ss[key])  # the slider already shows it: the same slider stays
        if ss.get(keys.playing):
            _pause(keys)
    return callback


def _pause(keys: Keys) -> None:
    """Play stops. Playing on the server, the page reruns so that the fragment's timer stops; the
    browser's play has no timer here: the fragment's own rerun draws the chart at rest, sooner."""
    in_browser = browser_plays(keys)
    st.session_state[keys.playing] = False
    if not in_browser:
        st.rerun()


def _play_or_pause(keys: Keys, pause: bool):
    """Play's or Pause's callback. Each has its own button key, so that a click on a Pause the
    browser still showed after playback ended (a slow server) is not read as Play (issue 43: it
    restarted from frame 1); Pause stops on the frame last drawn whole, the one on screen, not
    on one a tick cut short had moved to."""
    def callback():
        ss = st.session_state
        if pause:
            if not ss.get(keys.playing):
                return  # playback had ended: nothing to pause, nothing to start
            _catch_up(keys)
            if keys.drawn in ss and int(ss[keys.drawn]) != int(ss.get(keys.position, 0)):
                _moved(keys, int(ss[keys.drawn]))
            _pause(keys)
        else:
            if ss.get(keys.playing):
                return
            last = int(ss.get(keys.last, 0))
            ss[keys.playing] = True
            ss[keys.fresh] = True
            ss[keys.plays] = int(ss.get(keys.plays, 0)) + 1
            ss[keys.token] = f"{keys.prefix}:{ss[keys.plays]}"  # the browser's reports name this press
            ss.pop(keys.sent, None)
            if int(ss.get(keys.position, last)) >= last:  # at the end: play it again from the start
                _moved(keys, 0)
            if not browser_plays(keys):  # the browser plays without a timer here: the fragment's rerun starts it
                st.rerun()  # the whole page: the fragment's timer starts
    return callback


def player(n_frames: int, results, draw: Callable[[int], None], describe: Callable[[int], str] | None = None,
           keys: Keys = Keys(), delay: float = PLAY_DELAY, unit: str = "Frame", in_browser: str | None = None) -> None:
    """Draw an animation's frame (``draw(frame)``) with its controls below it, all sharing one position.

    ``results`` identifies what the frames show: the first results open on their last frame (where
    the runs ended); when they change, the position stays (the nearest frame the new results have;
    at the end it stays at the end) and Play stops. ``describe(frame)`` is a caption under the
    controls (each algorithm's own step). Call it where the chart belongs; it draws inside a
    fragment, so a frame change reruns only the chart and its controls.

    ``in_browser``: the key of ``draw``'s chart, when ``draw`` draws :func:`browser_chart` while
    :func:`browser_plays` (the browser then plays, with the theme of that chart at rest).
    """
    ss = st.session_state
    last = max(int(n_frames) - 1, 0)
    if keys.position not in ss:  # the first results drawn: where the runs ended
        ss[keys.results] = results
        _moved(keys, last)
        ss[keys.playing] = False
    elif ss.get(keys.results) != results:
        # new results (N0, the prior, an algorithm changed; issue 43): the same frame, or the nearest
        # one the new runs have; a position at the old last frame stays at the end. A position given
        # before any results (a link's frame) is kept as it is.
        before = ss.get(keys.last)
        at_end = before is not None and int(ss[keys.position]) >= int(before)
        ss[keys.results] = results
        _moved(keys, last if at_end else min(max(int(ss[keys.position]), 0), last))
        ss[keys.playing] = False
    ss[keys.last] = last
    if not 0 <= int(ss[keys.position]) <= last:
        _moved(keys, min(max(int(ss[keys.position]), 0), last))
    if last == 0:
        ss[keys.playing] = False

    in_the_browser = browser_plays(keys)

    @st.fragment(run_every=delay if ss.get(keys.playing) and not in_the_browser else None)
    def panel():
        if ss.get(keys.playing) and not browser_plays(keys) and not ss.pop(keys.fresh, False):
            # one tick: the frame after the one last drawn whole (a tick that cut the previous run
            # short, before its frame was drawn, skips no frame)
            _moved(keys, min(int(ss.get(keys.drawn, ss[keys.position])) + 1, last))
        ss.pop(keys.fresh, None)
        frame = int(ss[keys.position])
        draw(frame)
        ss[keys.drawn] = frame
        if last > 0:
            key = keys.slider(int(ss.get(keys.moves, 0)))  # the slider shows the position, whoever moved it
            st.select_slider(unit, options=list(range(last + 1)), value=frame, key=key, on_change=_slid(keys, key),
                             format_func=lambda f: f"{f + 1} of {last + 1}",
                             help="The frame shown; First, Back, Play, Step and Last move this same frame.")
            row = st.container(horizontal=True, vertical_alignment="center", gap="small")
            row.button("First", icon=":material/first_page:", key=keys.button("first"),
                       on_click=_move(keys, lambda p, n: 0), help="The first frame")
            row.button("Back", icon=":material/chevron_left:", key=keys.button("back"),
                       on_click=_move(keys, lambda p, n: p - 1), help="Back one frame")
            now_playing = bool(ss.get(keys.playing))
            row.button("Pause" if now_playing else "Play", key=keys.button("pause" if now_playing else "play"),
                       icon=":material/pause:" if now_playing else ":material/play_arrow:",
                       on_click=_play_or_pause(keys, now_playing),
                       help="Pause here" if now_playing else
                       f"Show the frames one after the other, at most {1 / delay:g} a second (fewer while a busy server "
                       "or browser draws them), from the frame shown "
                       "(from the first when the last is shown)")
            row.button("Step", icon=":material/chevron_right:", key=keys.button("next"),
                       on_click=_move(keys, lambda p, n: p + 1), help="On one frame")
            row.button("Last", icon=":material/last_page:", key=keys.button("last"),
                       on_click=_move(keys, lambda p, n: n), help="The last frame, where the runs ended")
            if in_browser and not ss.get(keys.playing):  # can this browser play? (draws nothing)
                probe = f"{keys.prefix}_browser_probe"
                with row:
                    _component()(key=probe, width="content", on_ready_change=_ready(keys, probe),
                                 data={"mode": "probe", "plotly": _plotly_url(), "chart": in_browser,
                                       "ready": bool(ss.get(keys.browser))})
        if describe is not None:
            st.caption(describe(frame))
        if ss.get(keys.playing) and frame >= last:
            ss[keys.playing] = False
            st.rerun()  # the whole page: the timer stops and Play reads Play again

    panel()
