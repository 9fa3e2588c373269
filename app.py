"""MAP-DP Explorer (minimal start page; the full app is its own piece of work).

Shows MAP-DP beside K-means on PLOS Section 5.2 (unequal densities), where K-means fails.
"""
import numpy as np
import plotly.express as px
import streamlit as st

import mapdp_core

st.set_page_config(page_title="MAP-DP Explorer", layout="wide")


@st.cache_resource(show_spinner="Preparing the clustering engine (once per server)...")
def _warm() -> float:
    return mapdp_core.warm_up()


@st.cache_data
def _demo(n0: float):
    rng = np.random.default_rng(0)
    sizes = [2760, 1160, 80]  # 69 % / 29 % / 2 %, as PLOS Section 5.2
    centres = np.array([[0.0, 0.0], [5.0, 0.0], [2.5, 4.0]])
    X = np.vstack([rng.normal(c, 1.0, (n, 2)) for c, n in zip(centres, sizes)])
    y = np.repeat(np.arange(3), sizes)
    model = mapdp_core.MAPDP(N0=n0, n_init=1, shuffle=False).fit(X)
    return X, y, model.labels_, model.n_clusters_, model.n_iter_


_warm()
st.title("MAP-DP Explorer")
st.write("MAP-DP infers the number of clusters and copes with clusters of unequal size and density.")
n0 = st.slider("N0 (concentration)", 0.1, 30.0, 3.0)
X, y, labels, K, iters = _demo(n0)
st.write(f"MAP-DP found **{K} clusters** in {iters} sweeps.")
fig = px.scatter(x=X[:, 0], y=X[:, 1], color=labels.astype(str), render_mode="webgl",
                 labels={"color": "cluster"})
st.plotly_chart(fig, use_container_width=True)
