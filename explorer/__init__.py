"""The MAP-DP Explorer's services: what the app computes and draws, kept free of Streamlit so a
notebook can call it too. The flow is the library's (data -> spec -> arrays -> kernel -> state).

Each module holds one job; import the one you need (``from explorer import runner``), this
package re-exports nothing:

* :mod:`explorer.sources`: the data sets as the app holds them (:class:`~explorer.sources.AppData`):
  PLOS scenarios, shipped and simulated sets, a user's table, a new likelihood per column, new
  rows encoded, and the views drawn or read by K-means (numeric matrix, 2-D projection, sample).
* :mod:`explorer.runner`: runs of any registered algorithm with every step recorded over restarts
  (:class:`~explorer.runner.Run`), the estimator built for a data set, MAP-DP's automatic
  settings, a run's fitted model and DP-means' lambda for a K.
* :mod:`explorer.comparison`: algorithms compared over restarts, with the time it may take
  estimated before it runs, and the summary per algorithm.
* :mod:`explorer.report`: the tables the pages show (assignments, cluster heatmap, feature tests
  and p-values as text, imputed rows, the prior's expected clusters, K-means on the PLOS scenarios).
* :mod:`explorer.animation`: runs turned into animation frames (colours matched across frames and
  algorithms, ellipses, K, objective and scores per frame).
* :mod:`explorer.sharing`: the app's settings checked, saved to JSON and shared in a link.
* :mod:`explorer.figures`: the Plotly figures of all of the above.
* :mod:`explorer.notebook`: the Explore page's animation inline in Jupyter (``animate(table)`` or
  ``animate(fitted_model, X)``), with Play, Pause, Back, Step and the frame slider.
* :mod:`explorer.sequences`: time series, longitudinal and grouped data (sequence runs,
  trajectory and group clustering, demos).
"""
