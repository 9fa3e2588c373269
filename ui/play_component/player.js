// Play in the browser (issue 43): the animation's frames are drawn here, in place, one after the
// other, and each frame shown is reported to the server, which keeps the one position (ui/player.py).
// Mounted by st.components.v2 (no iframe, no shadow root: Plotly's styles live in the page's head).
//
// data.mode "probe": mounted beside the frame controls while the animation rests. It loads plotly.js
//   (the installed plotly package's file, served by the Streamlit server), keeps the theme of the chart
//   Streamlit draws at rest (so the frames played here look the same), and says "ready" once: from then
//   on the server lets this browser play.
// data.mode "play": draws data.figure at frame data.start and plays data.frames from there, one every
//   data.delay_ms, reporting {token, frame} after each frame is drawn; the last frame ends it. Later
//   runs of the page send {mode, token} alone while it plays: nothing is drawn again.

const TYPED = {u1: Uint8Array, i1: Int8Array, u2: Uint16Array, i2: Int16Array, u4: Uint32Array,
               i4: Int32Array, f4: Float32Array, f8: Float64Array};
const live = new WeakMap();  // parentElement -> the player playing there
let loading = null;
let theme = null;  // {template, font, ...}: what Streamlit's theme made of the chart at rest

function loadPlotly(url) {
  if (window.Plotly && window.Plotly.newPlot) return Promise.resolve(window.Plotly);
  if (!loading) {
    loading = new Promise((resolve, reject) => {
      const s = document.createElement("script");
      s.src = url;
      s.async = true;
      s.onload = () => (window.Plotly ? resolve(window.Plotly) : reject(new Error("plotly.js did not load")));
      s.onerror = () => { loading = null; reject(new Error("plotly.js could not be fetched")); };
      document.head.appendChild(s);
    });
  }
  return loading;
}

function typed(v) {  // plotly.py's {dtype, bdata} arrays, decoded for restyle
  if (v && typeof v === "object" && !Array.isArray(v) && typeof v.bdata === "string" && TYPED[v.dtype]) {
    const bin = atob(v.bdata);
    const bytes = new Uint8Array(bin.length);
    for (let i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
    return new TYPED[v.dtype](bytes.buffer);
  }
  return v;
}

function flatten(obj, prefix, out) {  // {marker: {color: a}} -> {"marker.color": a}
  for (const [k, v] of Object.entries(obj)) {
    if (k === "type") continue;
    const name = prefix ? `${prefix}.${k}` : k;
    if (v && typeof v === "object" && !Array.isArray(v) && typeof v.bdata !== "string") flatten(v, name, out);
    else out[name] = typed(v);
  }
  return out;
}

function restChart(key) {
  const root = document.querySelector(`.st-key-${key}`);
  return root ? root.querySelector(".js-plotly-plot") : null;
}

function keepTheme(key) {  // the layout Streamlit's theme gave the chart at rest
  const gd = restChart(key);
  if (gd && gd.layout && gd.layout.template) {
    const l = gd.layout;
    theme = JSON.parse(JSON.stringify({template: l.template, font: l.font, paper_bgcolor: l.paper_bgcolor,
                                       plot_bgcolor: l.plot_bgcolor}));
    for (const k of Object.keys(theme)) if (theme[k] === undefined) delete theme[k];
  }
}

function fallbackTheme(el) {  // no chart seen at rest: the page's own colours
  const css = getComputedStyle(el);
  const text = css.getPropertyValue("--st-text-color").trim() || "#31333F";
  const font = css.getPropertyValue("--st-font").trim() || "sans-serif";
  return {template: {layout: {font: {color: text, family: font}, paper_bgcolor: "rgba(0,0,0,0)",
                              plot_bgcolor: "rgba(0,0,0,0)"}}};
}

function frameUpdate(frame) {
  const traces = frame.traces;
  const update = {};
  frame.data.forEach((d, j) => {
    const flat = flatten(d, "", {});
    for (const [k, v] of Object.entries(flat)) {
      if (!update[k]) update[k] = new Array(traces.length).fill(undefined);
      update[k][j] = v;
    }
  });
  const layout = {};
  (frame.annotations || []).forEach((text, i) => { layout[`annotations[${i}].text`] = text; });
  return [update, layout, traces];
}

function atFrame(figure, frame) {  // the figure drawn first, at the frame Play starts from
  const data = figure.data.map((t) => Object.assign({}, t));
  frame.traces.forEach((trace, j) => {
    for (const [k, v] of Object.entries(flatten(frame.data[j], "", {}))) {
      const path = k.split(".");
      let at = data[trace];
      for (const p of path.slice(0, -1)) at = at[p] = Object.assign({}, at[p]);
      at[path[path.length - 1]] = v;
    }
  });
  const annotations = (figure.layout.annotations || []).map((a, i) =>
    i < (frame.annotations || []).length ? Object.assign({}, a, {text: frame.annotations[i]}) : a);
  return {data, layout: Object.assign({}, figure.layout, {annotations})};
}

async function play(el, data, setStateValue, state) {
  const Plotly = await loadPlotly(data.plotly);
  if (state.stopped) return;
  const div = document.createElement("div");
  div.className = "mapdp-played";
  el.replaceChildren(div);
  const first = atFrame(data.figure, data.frames[data.start]);
  const layout = Object.assign(first.layout, theme || fallbackTheme(el));
  delete layout.width;
  layout.autosize = true;
  await Plotly.newPlot(div, first.data, layout, Object.assign({responsive: true}, data.config || {}));
  const report = (frame, extra) => setStateValue("shown", Object.assign({token: data.token, frame}, extra || {}));
  div.dataset.frame = String(data.start);
  report(data.start);
  const last = data.frames.length - 1;
  const updates = data.frames.map(frameUpdate);
  let due = performance.now();
  const next = async () => {
    if (state.stopped || !div.isConnected) { state.stopped = true; return; }
    const f = state.frame + 1;
    if (f > last) return;
    try {
      await Plotly.update(div, ...updates[f]);
    } catch (err) {
      state.stopped = true;
      report(state.frame, {failed: String(err)});
      return;
    }
    if (state.stopped) return;
    state.frame = f;
    div.dataset.frame = String(f);
    report(f);
    if (f < last) {
      due += data.delay_ms;
      state.timer = setTimeout(next, Math.max(0, due - performance.now()));
    }
  };
  due += data.delay_ms;
  state.timer = setTimeout(next, Math.max(0, due - performance.now()));
}

export default function (component) {
  const {data, parentElement, setStateValue} = component;
  if (!data) return;
  if (data.mode === "probe") {
    keepTheme(data.chart);
    const watch = setInterval(() => keepTheme(data.chart), 1000);  // the chart at rest is drawn after this
    loadPlotly(data.plotly).then(() => { if (!data.ready) setStateValue("ready", true); }).catch(() => {});
    return () => clearInterval(watch);
  }
  if (data.mode !== "play") return;
  // the framework keeps the cleanup of the latest call only, and runs it when the element goes: every
  // call returns one, so that a paused or finished animation never plays on unseen
  const stop = () => {
    const s = live.get(parentElement);
    if (s) { s.stopped = true; clearTimeout(s.timer); }
  };
  const now = live.get(parentElement);
  if (now && now.token === data.token && !now.stopped) return stop;  // playing already: nothing drawn again
  stop();
  if (!data.figure) {  // a light run, and nothing here plays it (the page was redrawn): ask for the frames again
    setStateValue("shown", {token: data.token, frame: -1, lost: true});
    return stop;
  }
  const state = {token: data.token, frame: data.start, timer: null, stopped: false};
  live.set(parentElement, state);
  play(parentElement, data, setStateValue, state).catch((err) => {
    setStateValue("shown", {token: data.token, frame: data.start, failed: String(err)});
  });
  return stop;
}
