"""Predict: assign new rows to the fitted MAP-DP clusters, with probabilities and the new-cluster option."""
import numpy as np
import pandas as pd
import streamlit as st

from explorer import sources
from mapdp_core.core.encoding import unseen_notes
from mapdp_core.data.loading import DataLoadError, read_table
from mapdp_core.data.loading.export import csv_bytes
from ui import common

d = common.data()
st.title("Predict")
params, _, model = common.fitted_mapdp()
st.caption(f"{common.escape_markdown(d.name, 200)}: MAP-DP with {common.prior_words(params)} found {model.n_clusters_} clusters. A new row "
           "goes to the cluster of highest posterior probability, N_k f(x | cluster k), or to a new cluster, N0 f(x | prior), "
           "when that is higher (PLOS Appendix E). Missing values are allowed: they are left out.")

FORM_COLUMNS = 200  # beyond this a form is no way to type a row: a wide table's new rows come as a file
wide_form = len(sources.input_columns(d)) > FORM_COLUMNS
how = st.radio("New rows from", ["a form", "a CSV file"], horizontal=True, key="w_predict_source",
               index=1 if wide_form else 0, disabled=wide_form)
if wide_form:
    st.caption(f"The model reads {len(sources.input_columns(d)):,} columns, too many to type in a form: upload the new "
               "rows as a file with the same columns.")
    how = "a CSV file"
new = None
if how == "a form":
    st.caption("Leave a cell empty for a missing value. The first row starts as the first row of the data.")
    start = d.X.head(1).copy() if d.encodings == {} and d.wide is None else d.table[sources.input_columns(d)].head(1).copy()
    new = st.data_editor(start, num_rows="dynamic", key="w_predict_form", width="stretch")
else:
    up = st.file_uploader("CSV with the same feature columns", type=["csv", "tsv", "txt", "xlsx"],
                          key="w_predict_upload")
    if up is not None:
        try:
            new, _ = read_table(up.getvalue(), name=up.name, min_rows=1)
        except DataLoadError as exc:
            common.plain_error(exc, f"'{up.name}' could not be read")
            st.stop()
if new is None or len(new) == 0:
    st.info("Add at least one row.")
    st.stop()
needed = sources.input_columns(d)
missing_cols = [c for c in needed if c not in new.columns]
if missing_cols:
    shown = missing_cols[:10] + ([f"... ({len(missing_cols):,} in all)"] if len(missing_cols) > 10 else [])
    st.error(f"The new rows lack the column(s) {common.escape_markdown(str(shown), 2000)}; the model needs every feature column "
             "(leave a value empty if it is unknown).")
    st.stop()
unseen = []  # categories never seen in training: scored as missing, said per row below
try:
    rows = sources.encode_new_rows(d, new[needed], unseen=unseen)
    proba = model.predict_proba(rows)
    labels = model.predict(rows)
    density = model.score_samples(rows)
except (ValueError, DataLoadError) as exc:
    common.plain_error(exc, "These rows could not be scored")
    st.stop()
names = [f"cluster {k}" for k in range(model.n_clusters_)] + ["new cluster"]
out = new.reset_index(drop=True).copy()
out.insert(0, "assigned", [names[-1] if z == model.NEW_CLUSTER else names[z] for z in labels])
out.insert(1, "probability", proba.max(axis=1).round(3))
out.insert(2, "log density", np.round(density, 3))
if unseen:
    out.insert(3, "note" if "note" not in out.columns else "prediction note", unseen_notes(unseen, len(out)))
    st.warning(f"{len({c['row'] for c in unseen})} row(s) hold a category never seen in training; each such value "
               "was left out (scored as missing), as the 'note' column says.")
# "new cluster" drawn in full: the grid sized the column to "cluster 0" and cut it to "new cluste"
st.dataframe(out, hide_index=True, width="stretch", key="predict_result",
             column_config={"assigned": st.column_config.TextColumn("assigned", width="medium")})
if d.zeros_missing:
    st.caption("A 0 in " + ", ".join(common.escape_markdown(c, 80) for c in d.zeros_missing)
               + " is read as 'not measured' (a missing value), as it was when the clusters were found.")
with st.expander("Probability of every cluster"):
    st.dataframe(pd.DataFrame(proba, columns=names).round(4), hide_index=True, width="stretch",
                 key="predict_proba", column_config={n: st.column_config.NumberColumn(n, width="medium")
                                                     for n in names})
st.download_button("Download the predictions (CSV)", csv_bytes(out), "predictions.csv",
                   "text/csv", key="predict_download")
