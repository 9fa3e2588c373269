"""MAP-DP: the per-sweep generator ``map_dp`` and the scikit-learn style ``MAPDP``.

The sweeps themselves are :mod:`mapdp_core.engine.sweeps`; this module validates, chooses
what ``"auto"`` leaves open (:mod:`mapdp_core.selection.auto`), runs the restarts and
predicts.

Raykov, Boukouvalas, Baig & Little (2016), "What to do when K-means clustering fails",
PLOS ONE, Algorithm 3 and Appendices A-C, with the exact semantics of the authors'
reference program (ALGORITHMS.md).
"""
from __future__ import annotations

import copy
import math
import numbers
import os
import threading
import warnings
from typing import Iterator

import numpy as np
from mapdp_core.engine.merging import MERGE_CUTOFF, min_cluster_size_for
from mapdp_core.engine.model_data import ModelData, extend_partition
from mapdp_core.engine.partition_prior import DirichletProcess, PartitionPrior, as_partition_prior, finite_mixture_prior
from mapdp_core.engine.sweeps import check_init, run_sweeps
from mapdp_core.core.validation import (check_bool, check_int, is_dask_collection, make_rng, reject_1d,
                                        restart_plan)
from mapdp_core.families import FAMILIES
from mapdp_core.core.estimator import (Control, Problem, StopFlag, SweepEstimator, best_restart, run_many,
                                       summarize_restart,
                                       until_stopped, warm_up_hook)
from mapdp_core.core.spec import ParsedData, check_table, parse
from mapdp_core.core.labels import relabel_by_first_appearance
from mapdp_core.core.state import SweepState



#: guards the one-time build of a fitted model's prediction statistics (after fitting or
#: unpickling): module-level because a lock cannot be pickled with the estimator
_MODEL_LOCK = threading.Lock()


class _OnFirstUse:
    """What a fitted estimator builds at its first use (the prediction statistics): held here,
    so that building it changes none of the estimator's attributes (scikit-learn's
    ``check_dict_unchanged``); pickled and copied empty (rebuilt at the next use)."""

    __slots__ = ("value",)

    def __init__(self):
        self.value = None

    def __reduce__(self):
        return (_OnFirstUse, ())


class UnseenCategoryWarning(UserWarning):
    """New rows held categories never seen in fitting; prediction scored those cells as
    missing (left out of the row's likelihood). ``cells`` lists them as dicts with the row's
    position, the column and the value; :meth:`MAPDP.unseen_categories` gives the same per row."""

    def __init__(self, message: str, cells: list):
        super().__init__(message)
        self.cells = cells


def _engine_n0(N0):
    """What the engine takes where it takes N0: the concentration as a float, or a prior on partitions."""
    return N0 if isinstance(N0, PartitionPrior) else float(N0)


def _check_params(N0, prior=None) -> None:
    if isinstance(N0, str) and N0 == "auto":
        pass
    elif isinstance(N0, bool) or not isinstance(N0, numbers.Real) or not math.isfinite(N0) or N0 <= 0:
        raise ValueError(f"N0 (the concentration, or prior count) must be 'auto' or a finite number > 0, got {N0!r}.")
    if isinstance(prior, str) and prior != "auto":
        raise ValueError(f"prior must be 'auto', None (the empirical-Bayes defaults) or a dict of hyperparameters, "
                         f"got {prior!r}.")
    if not (prior is None or isinstance(prior, (str, dict))):
        raise TypeError(f"prior must be 'auto', None (the empirical-Bayes defaults) or a dict of hyperparameters, "
                        f"got {prior!r:.80} of type {type(prior).__name__}.")


#: rows above which ``MAPDP(restart_rows="auto")`` runs its restarts on a subsample of this
#: many rows and refines the best on every row: at 50 000 rows a restart costs about an eighth
#: of a full-data one at 400 000 and the six PLOS scenarios keep their K and NMI
#: (benchmarks/bench_scale.py)
RESTART_ROWS = 50_000

#: hyperparameter names of the families (a prior dict keyed by these is for one family)
_HYPERPARAMETER_NAMES = {"m0", "c0", "a0", "b0", "B0", "mu0", "sigma0_2", "sigma2", "Sigma0", "Sigma", "alpha0",
                         "beta0", "n"}


def _every_family_table(n: int = 12):
    """(X, likelihood): a tiny table that uses every likelihood family (MAP-DP's warm-up)."""
    rng = np.random.default_rng(0)
    X = np.column_stack([
        rng.normal(size=n), rng.normal(size=n), rng.normal(size=n), rng.normal(size=n),
        rng.normal(size=n), rng.integers(0, 2, n), rng.integers(0, 3, n), rng.integers(0, 3, n),
        rng.poisson(2.0, n), rng.exponential(1.0, n), rng.geometric(0.5, n) - 1,
        rng.normal(size=n),
    ]).astype(float)
    likelihood = {(0, 1): "normal_wishart", 2: "normal_gamma", 3: "spherical_gaussian", 4: "spherical_gaussian",
                  5: "bernoulli", 6: "binomial", 7: "categorical", 8: "poisson", 9: "exponential",
                  10: "geometric", 11: "gaussian_known_cov"}
    return X, likelihood


def map_dp(X, N0: float = 3.0, likelihood="normal_wishart", prior=None, *, order=None,
           tol: float = 1e-6, max_iter: int = 100) -> Iterator[SweepState]:
    """Run MAP-DP and yield one immutable :class:`SweepState` per sweep.

    Everything is validated before this function returns, so bad input raises here and
    not at the first ``next()``. The generator of :meth:`MAPDP.iter_sweeps` with rows in
    ``order`` (one run, no restarts).

    Parameters
    ----------
    X : array-like of shape (N, D) or DataFrame
        NaN marks a missing value, left out of the row's likelihood exactly (for a Gaussian
        block, the marginal of the observed entries; PLOS Appendix F). Text columns of a
        DataFrame are categorical codes in order of the sorted labels.
    N0 : float > 0, default 3.0
        Concentration (prior count) of the Dirichlet process: a larger N0 opens clusters more
        easily. 3 is the value of the PLOS Section 5 experiments.
    likelihood : str, list or dict
        Family per column or block; see :mod:`mapdp_core.core.spec`. Default: one
        Normal-Wishart block over all columns (PLOS Section 5).
    prior : dict, optional
        Hyperparameters; missing ones take the empirical-Bayes defaults of each family.
    order : sequence of int, optional
        Visiting order of the rows (a permutation); identity by default (PLOS Appendix C
        restarts use random permutations).
    tol : float
        Stop when |E_old - E_new| < tol (Appendix B).
    max_iter : int
        Maximum number of sweeps.

    Yields
    ------
    SweepState
    """
    model = MAPDP(N0=N0, likelihood=likelihood, prior=prior, shuffle=False, tol=tol, max_iter=max_iter)
    return model.iter_sweeps(X, order=order)


def default_prior(likelihood: str, X) -> dict:
    """The empirical-Bayes hyperparameters MAP-DP would use for ``likelihood`` on ``X``."""
    parsed = parse(X, likelihood)
    if len(parsed.blocks) != 1:
        raise ValueError("default_prior takes a single family name applying to all columns.")
    return parsed.blocks[0].prior


class MAPDP(SweepEstimator):
    """MAP-DP clustering: MAP inference in a Dirichlet process mixture.

    With its defaults, one call works on any table: ``MAPDP().fit(df)`` chooses a likelihood
    per column, the prior and N0 from the data (:mod:`mapdp_core.selection.auto`), and records what it
    chose. Any explicit ``likelihood``, ``prior`` or ``N0`` is used exactly as given.

    Parameters
    ----------
    N0 : "auto" or float > 0, default="auto"
        Concentration parameter (prior count). "auto": chosen on
        :data:`mapdp_core.selection.auto.N0_GRID` by the exact joint -ln p(X, z | N0, theta0) of each
        candidate's MAP partition (PLOS Appendix G, approach 2). 3 is the PLOS Section 5 value.
    likelihood : "auto", str, list or dict, default="auto"
        "auto": one family per column by the Data page's rules
        (:func:`mapdp_core.data.loading.suggest_roles_and_families`); identifier, label-named,
        constant and empty columns are left out with a warning (``dropped_columns_``), and the
        real-valued columns may form one Normal-Wishart block when the evidence prefers it.
        Otherwise one family per column, or multivariate blocks (see :mod:`mapdp_core.core.spec`).
    prior : "auto", None or dict, default="auto"
        "auto": the empirical-Bayes defaults with the Gaussian spread and the other families'
        prior weight chosen by the same joint evidence (:func:`mapdp_core.selection.auto.choose_hyperparameters`).
        None: the empirical-Bayes defaults of each family as they are. A dict: hyperparameters;
        missing ones are set from the data (the ``prior`` you pass is never modified).
    %(n_init)s
        Restarts, each with its own random visiting order (PLOS Appendix C). The best is
        the one with the lowest exact -ln p(X, z), which unlike E does not depend on the order.
    %(shuffle)s
        Visit rows in a random order; ``False`` uses the identity order (and one run).
    %(tol)s
        Stop when |E_old - E_new| < tol (PLOS Appendix B).
    %(max_iter)s
    %(random_state)s
    %(n_jobs)s
    restart_rows : "auto", int or None, default="auto"
        On a table of more rows than this, the ``n_init`` restarts run on that many rows drawn
        at random (the same rows for every restart, the priors still from every row); the best,
        by the exact joint on those rows, is extended to every row by the MAP-DP rule without
        moving the clusters (PLOS Appendix E) and refined by one Gauss-Seidel run over all rows,
        which is the fit kept. Restarts that all end in the same basin cost a fraction of a
        full-data sweep each instead of several; the one full run still converges to a fixed
        point of the sweep on every row. "auto": :data:`RESTART_ROWS`. None: every restart on
        every row (the paper's procedure). On a Dask collection: the size of the sample drawn
        to this process (None: :data:`RESTART_ROWS`), on which the automatic choices and the
        restarts run (:mod:`mapdp_core.models.partitioned_fit`).
    merge : "auto", float or None, default="auto"
        Clusters a person reads from MAP-DP's components: the components whose rows the fitted
        model itself cannot tell apart are grouped (Hennig 2010, "DEMP":
        :mod:`mapdp_core.engine.merging`) while a row of one is given to the other with
        probability at least ``merge`` (never into a single cluster when there are several
        components). A Dirichlet-process mixture covers a group that is not of the model's
        shape with several components (Miller & Harrison 2014); on the tuning tables of
        ``benchmarks/defaults.py`` this brought K within a factor 2 of the truth on 20 of 24
        tables (17 without). "auto": :data:`~mapdp_core.engine.merging.MERGE_CUTOFF` when the
        hyperparameter search ran (``N0`` or ``prior`` "auto"), else no merging, so that
        explicit settings give the paper's MAP-DP partition exactly. None: never merge.
        ``component_labels_`` always holds MAP-DP's own partition.
    min_cluster_size : "auto", int or None, default="auto"
        After merging, a cluster of fewer rows is read as part of the large cluster that
        explains its rows best by the exact joint (:func:`~mapdp_core.engine.merging.fold_small_clusters`:
        a few rows far from every large cluster open a component of their own; a K counted with
        a dozen such components is not a dozen subtypes), unless its rows are far outliers
        (:data:`~mapdp_core.engine.merging.FAR_OUTLIER_NATS`), and never into a single cluster.
        "auto": :func:`~mapdp_core.engine.merging.auto_min_cluster_size` (1 % of the rows, at
        least 3) when the hyperparameter search ran, else none. None: never fold. On a Dask
        collection no cluster is folded (the joint of a union needs its rows here).
    wide : "auto", "components" or None, default="auto"
        With ``likelihood="auto"``, how a wide table (at least
        :data:`~mapdp_core.selection.auto.WIDE_COLUMNS` real-valued columns, more than a quarter of
        the rows: omics panels, long questionnaires) is clustered. Hundreds of independent columns
        give one cluster (no column alone pays for a split) or one cluster per row, so "auto"
        keeps the columns correlated with others beyond what noise gives (a screen with a null
        distribution, no tuned threshold) and clusters their principal components above the
        Marchenko-Pastur noise edge (:class:`mapdp_core.selection.auto.WideProjection`, with the
        references); "components" skips the screen (every real-valued column's components);
        None clusters the columns themselves. ``wide_projection_`` shows what was done.
    partition_prior : "dp", "mfm" or MixtureOfFiniteMixtures, default="dp"
        The prior on partitions. "dp": the Dirichlet process's Chinese restaurant process with
        concentration ``N0`` (PLOS eq 7), the papers' MAP-DP. "mfm": Miller & Harrison's (2018)
        mixture of finite mixtures with its defaults, or pass
        :class:`~mapdp_core.engine.partition_prior.MixtureOfFiniteMixtures` (``gamma``,
        ``k_prior``, ``k_mean``): a prior on the number of components K and Dirichlet(gamma)
        weights, so that a row joins cluster k with weight N_k + gamma and a new cluster with
        weight gamma V_N(t+1) / V_N(t) (their restaurant process); the sweep, the joint, the search of the
        likelihood's prior and prediction all use it, and ``N0`` must stay "auto" (it has no N0).
        Unlike the Dirichlet process's (Miller & Harrison, JMLR 2014), its posterior on K does
        not keep growing with N; see :mod:`mapdp_core.engine.partition_prior` and, for what it
        changed on labelled tables, ``benchmarks/mfm_prior.py``. Tables in memory only.
    init : array-like of N labels, optional
        A starting partition for every restart instead of one cluster holding every row (any
        integer labels; each distinct value is one cluster). With the automatic search and no
        ``init``, every restart starts from the best partition the search found (extended to all
        rows when the search used a subsample), so the fit is never worse, by the exact joint,
        than what the search saw; then the rows' visiting orders still differ per restart.

    Attributes
    ----------
    %(labels_)s
        The clusters: MAP-DP's components, grouped when ``merge`` applies.
    %(n_clusters_)s
    component_labels_ : ndarray of shape (n_samples,)
        MAP-DP's partition (its components); equals ``labels_`` unless components were merged.
        The joints, ``cluster_summaries_``, ``k_evidence`` and prediction's densities are the
        components'.
    n_components_ : int
    component_sizes_ : ndarray of shape (n_components_,)
    cluster_of_component_ : ndarray of shape (n_components_,)
        The cluster of each component.
    merges_ : DataFrame
        The groupings made, in order (step, rule, merged, misclassification, nats, clusters:
        :func:`~mapdp_core.engine.merging.group_components`); empty if none.
    merge_cutoff_ : float or None
        The cutoff ``merge`` applied to this fit (None: components were not grouped).
    min_cluster_size_ : int or None
        The size ``min_cluster_size`` applied to this fit (None: no cluster was folded).
    wide_projection_ : WideProjection or None
        With ``likelihood="auto"`` on a wide table (at least
        :data:`~mapdp_core.selection.auto.WIDE_COLUMNS` real-valued columns, more than a quarter
        of the rows), the principal components above the noise level, of the columns that pass
        its screen, that were clustered in place of those columns
        (:class:`mapdp_core.selection.auto.WideProjection`; ``informative`` lists the screened
        columns, ``loadings()`` says which columns drive the clusters); None otherwise.
    %(objective_history_)s
        Here the objective is E (PLOS Algorithm 3).
    neg_log_joint_history_ : list of float
    neg_log_joint_ : float
    %(n_iter_)s
    %(cluster_sizes_)s
    cluster_summaries_ : dict
    restart_neg_log_joints_ : ndarray of shape (n_init,)
        Each restart's exact joint; with restarts on a subsample (``restart_rows``), on those rows.
    restart_rows_ : int
        The rows each restart ran on (all of them unless ``restart_rows`` applied).
    prior_ : list of dict
        Resolved hyperparameters per block.
    N0_ : float
        The N0 used (NaN under a mixture of finite mixtures, which has none).
    partition_prior_ : PartitionPrior
        The prior on partitions the fit used: ``DirichletProcess(N0_)`` or the mixture of finite
        mixtures.
    likelihood_ : DataFrame
        One row per block column: column, family, reason (why ``"auto"`` chose it, or "given").
    dropped_columns_ : DataFrame
        Columns left out by ``likelihood="auto"``: column, role, reason (empty otherwise).
    hyperparameter_search_ : DataFrame or None
        Every candidate the automatic search compared (stage, structure, spread, weight, N0,
        K, neg_log_joint, seconds, chosen); None when nothing was searched.
    hyperparameters_ : dict
        The chosen knobs: structure ("independent", "joint" or "shared", with its ``shape`` in
        words: :data:`mapdp_core.selection.auto.SHAPES`; "+categorical scales" when the
        binomial columns read best as categorical), spread and weight (relative to the
        empirical-Bayes defaults), N0, the rows the search used, and the rows on which the
        structure was checked again (large tables; 0 otherwise).
    %(n_features_in_)s
    partitions_ : DataFrame
        Only after fitting a Dask collection: per sweep over the parts, the rounds it took, the
        rows it moved, K, the joint and the seconds since the sweeps began; ``attrs`` hold the
        parts, rows, sample rows, seed and seconds.
    """

    name = "MAP-DP"
    restart_key = "neg_log_joint"  # exact and order-free, unlike E
    monotone = "neg_log_joint"  # from the second sweep on (the first replaces a count, Appendix B)
    ui = {
        "N0": Control("N0, the concentration", "float", 3.0, 1e-2, 1e3, log=True, short="N0",
                      help="The prior count of a new cluster: larger N0, more clusters a priori (PLOS eq 7)."),
    }

    def __init__(self, N0="auto", likelihood="auto", prior="auto", n_init=3, shuffle=True,
                 tol=1e-6, max_iter=100, random_state=None, n_jobs=None, restart_rows="auto", init=None,
                 merge="auto", wide="auto", partition_prior="dp", min_cluster_size="auto"):
        self._init_params(locals())

    def _n_restarts(self) -> int:
        n_init = check_int(self.n_init, "n_init", 1)
        return n_init if check_bool(self.shuffle, "shuffle") else 1  # in input order every restart would be the same

    warm_up = warm_up_hook({"N0": 1.0, "prior": None, "max_iter": 3, "shuffle": False}, data=_every_family_table)

    def _validate(self, X) -> Problem:
        _check_params(self.N0, self.prior)
        mfm = finite_mixture_prior(self.partition_prior, self.N0)
        self._merge_cutoff(None)  # a bad ``merge``, ``min_cluster_size`` or ``wide`` is said before any work
        self._min_cluster_size(None, 0)
        from mapdp_core.selection.auto import check_wide

        check_wide(self.wide)
        check_table(X)  # before the automatic choices: no rows, no columns or repeated names, in plain words
        data, likelihood, prior, N0, auto, choice = X, self.likelihood, self.prior, self.N0, None, None
        if isinstance(likelihood, str) and likelihood == "auto":
            from mapdp_core.selection.auto import auto_likelihood

            if isinstance(prior, dict) and any(k in prior for k in _HYPERPARAMETER_NAMES):
                raise ValueError(
                    f"prior= gives hyperparameters {sorted(k for k in prior if k in _HYPERPARAMETER_NAMES)} for one "
                    "family, but likelihood='auto' may choose several; pass likelihood= too (e.g. "
                    "likelihood='normal_wishart'), or key the prior by column.")
            auto = auto_likelihood(X, wide=self.wide)
            data, likelihood = auto.X, auto.likelihood
        if mfm is not None:
            N0 = mfm  # the engine takes a prior on partitions where it takes N0
        if (isinstance(prior, str) and prior == "auto") or (isinstance(N0, str) and N0 == "auto"):
            from mapdp_core.selection.auto import choose_hyperparameters

            search_prior = isinstance(prior, str)
            search_N0 = isinstance(N0, str)
            if not search_prior:  # a searched prior is built from every row first, which checks them all
                parse(data, likelihood, prior)  # the engine's messages before any search
            choice = choose_hyperparameters(
                data, likelihood, search_prior=search_prior, search_N0=search_N0,
                N0=1.0 if search_N0 else _engine_n0(N0), prior=None if search_prior else prior,
                allow_joint=auto is not None, random_state=self.random_state, n_jobs=self.n_jobs,
                allow_shared=not getattr(self, "_partitioned_sample", False))
            likelihood, prior, N0 = choice.likelihood, choice.prior, choice.N0
        parsed = parse(data, likelihood, prior)
        N = parsed.X.shape[0]
        if self.init is not None:
            given = check_init(self.init, N)
            start_on = lambda rows=None: given if rows is None else relabel_by_first_appearance(given[rows])  # noqa: E731
        elif choice is not None:
            start_on = lambda rows=None: choice.start_on(parsed.X, rows)  # noqa: E731
        else:
            start_on = lambda rows=None: None  # noqa: E731
        settings = {"N0": _engine_n0(N0), "input": X, "auto": auto, "choice": choice, "staged": None}
        rows = self._restart_rows()
        if rows is not None and N > rows and self._n_restarts() > 1:
            settings["init"], settings["staged"] = self._restarts_on_rows(parsed, settings["N0"], start_on, rows)
        else:
            settings["init"] = start_on()
        return Problem(parsed, N, settings)

    def _restart_rows(self) -> int | None:
        value = self.restart_rows
        if isinstance(value, str) and value == "auto":
            return RESTART_ROWS
        return None if value is None else check_int(value, "restart_rows", 2)

    def _restarts_on_rows(self, parsed: ParsedData, N0, start_on, n_rows: int):
        """The ``n_init`` restarts on ``n_rows`` random rows (see ``restart_rows``), each from
        ``start_on(rows)`` (None: one cluster): returns the best partition extended to every
        row, the full run's start, and what was run."""
        seed = self.random_state
        if isinstance(seed, (np.random.Generator, np.random.RandomState)):  # one draw: the plan below is fixed by it
            seed = int(make_rng(seed).integers(0, 2**63 - 1))
        n = self._n_restarts()
        N = parsed.X.shape[0]
        rows = np.sort(np.random.default_rng(np.random.SeedSequence(seed).spawn(n + 1)[n])
                       .choice(N, n_rows, replace=False))
        sub = ParsedData(np.ascontiguousarray(parsed.X[rows]), parsed.names, parsed.blocks, parsed.categories)
        sub_init = start_on(rows)
        tol, max_iter = float(self.tol), int(self.max_iter)
        stop = StopFlag()

        def one(task):
            order = task[0] if task[0] is not None else np.arange(n_rows, dtype=np.int64)
            return summarize_restart(until_stopped(run_sweeps(sub, N0, order, tol, max_iter, init=sub_init), stop),
                                     self.restart_key, self.keep)

        runs = run_many(one, restart_plan(seed, n, n_rows, shuffle=True), self.n_jobs, stop)
        values = np.array([r.value for r in runs])
        best = runs[best_restart(values)].state
        labels = np.asarray(best.labels)
        start = extend_partition(sub, labels, parsed.X, N0, keep=(rows, labels))
        return start, {"seed": seed, "rows": n_rows, "values": values}

    def _plan_for(self, problem: Problem):
        staged = problem.settings.get("staged")
        if staged is None:
            return super()._plan_for(problem)
        return restart_plan(staged["seed"], 1, problem.n_rows, shuffle=True)  # the one run over every row

    def _sweeps(self, problem: Problem, order, rng) -> Iterator[SweepState]:
        N = problem.n_rows
        order = np.arange(N, dtype=np.int64) if order is None else order
        return run_sweeps(problem.data, problem.settings["N0"], order, float(self.tol), int(self.max_iter),
                    init=problem.settings.get("init"), threads=self._sweep_threads(problem))

    def _sweep_threads(self, problem: Problem) -> int:
        """Threads that share each sweep: every core allowed by ``n_jobs`` when one run is all
        there is (restarts on a subsample before it, or ``n_init=1``); otherwise the restarts
        themselves fill the cores."""
        if problem.settings.get("staged") is None and self._n_restarts() > 1:
            return 1
        cores = os.cpu_count() or 1
        n_jobs = self.n_jobs
        if n_jobs is None:
            return cores
        return max(1, min(cores, n_jobs) if n_jobs > 0 else cores + 1 + n_jobs)

    def _store(self, problem: Problem, state: SweepState, history) -> None:
        parsed = problem.data
        self.neg_log_joint_history_ = history.neg_log_joints
        self.neg_log_joint_ = state.neg_log_joint
        self.cluster_summaries_ = state.summaries
        staged = problem.settings.get("staged")
        self.restart_neg_log_joints_ = self.restart_values_ if staged is None else staged["values"]
        self.restart_rows_ = problem.n_rows if staged is None else staged["rows"]
        self.prior_ = [{"family": b.family, "columns": b.names, **b.prior} for b in parsed.blocks]
        self.partition_prior_ = as_partition_prior(problem.settings["N0"])
        self.N0_ = self.partition_prior_.N0 if isinstance(self.partition_prior_, DirichletProcess) else math.nan
        auto, choice = problem.settings["auto"], problem.settings["choice"]
        self._auto = auto
        self.wide_projection_ = None if auto is None else auto.projection
        self._record_choices(parsed, auto, choice)
        self.n_features_in_ = len(auto.columns) if auto is not None else parsed.X.shape[1]
        if hasattr(problem.settings["input"], "columns"):
            self.feature_names_in_ = np.asarray(auto.columns if auto is not None else parsed.names, dtype=object)
        # the fitted statistics, for prediction (Appendix E): built at the first prediction (a
        # fit that is never asked to predict does not pay for them: 6 % of a default fit at
        # 400 000 rows), and again after unpickling
        self._parsed = parsed
        self._model = _OnFirstUse()
        self._k_evidence_of = None  # k_evidence() of this fit, per (more, of), computed when first asked
        self._group_components(parsed, self._merge_cutoff(choice), self._min_cluster_size(choice, len(parsed.X)))

    def _fixed_seed(self) -> int:
        """The seed of what a fit derives after its restarts (the merge sample, ``k_evidence``'s
        splits): ``random_state`` when it is an integer, else 0, so that the same fitted
        partition always gives the same clusters and the same table."""
        return int(self.random_state) if isinstance(self.random_state, numbers.Integral) else 0

    def _merge_cutoff(self, choice) -> float | None:
        """The DEMP cutoff that ``merge`` asks for this fit, or None (see the class docstring)."""
        value = self.merge
        if value is None or value is False:
            return None
        if isinstance(value, str):
            if value != "auto":
                raise ValueError(f"merge={value!r}: pass 'auto', a cutoff between 0 and 1, or None.")
            return MERGE_CUTOFF if choice is not None else None
        cutoff = float(value)
        if not 0.0 < cutoff < 1.0:
            raise ValueError(f"merge={value!r}: a cutoff must lie between 0 and 1 (0.05 merges components whose "
                             "rows are given to each other at least 5 % of the time).")
        return cutoff

    def _min_cluster_size(self, choice, n_rows: int) -> int | None:
        """The size under which ``min_cluster_size`` folds a cluster in this fit, or None."""
        return min_cluster_size_for(self.min_cluster_size, choice is not None, n_rows)

    def _group_components(self, parsed, cutoff: float | None, min_size: int | None) -> None:
        """labels_, n_clusters_ and cluster_sizes_ become the clusters (merged components);
        component_labels_, n_components_ and component_sizes_ keep MAP-DP's partition."""
        from mapdp_core.engine import merging

        self.component_labels_ = self.labels_
        self.n_components_ = self.n_clusters_
        self.component_sizes_ = self.cluster_sizes_
        cluster_of, merges = merging.group_components(
            parsed, np.asarray(self.labels_, dtype=np.int64), cutoff, min_size, self._fitted_prior(),
            rows=merging.sample_rows(len(self.labels_), self._fixed_seed(), merging.MERGE_ROWS))
        self.cluster_of_component_ = cluster_of
        self.merges_ = merges
        self.merge_cutoff_ = cutoff
        self.min_cluster_size_ = min_size
        if len(merges):
            self.labels_ = cluster_of[self.component_labels_]
            self.n_clusters_ = int(cluster_of.max()) + 1
            self.cluster_sizes_ = np.bincount(self.labels_, minlength=self.n_clusters_)

    def sweep_steps(self, X, *, restart: int = 0, sweep: int = 1, steps: int = 40) -> list:
        """Sweep ``sweep`` (from 1) of restart ``restart`` watched part-way, for teaching: the
        partition after every ceil(N / ``steps``) rows of the visiting order, as
        :class:`~mapdp_core.engine.sweeps.RowStep` records (rows visited so far, the rows of the
        step, every row's cluster, K, rows moved, clusters opened). The restart is run as ``fit``
        runs it up to the sweep before, and the sweep itself by the same kernel in pieces, so
        the last step is that sweep's partition (PLOS Algorithm 3; the first sweep from one
        cluster uses Appendix B's count). With ``restart_rows`` applying, the restarts are those
        of the subsample plan; pass ``restart_rows=None`` to watch a sweep over every row."""
        from mapdp_core.engine.sweeps import sweep_in_steps

        problem, planned, seed = self._restart_of(X, restart)
        sweep = check_int(sweep, "sweep", 1)
        steps = check_int(steps, "steps", 1)
        order = np.arange(problem.n_rows, dtype=np.int64) if planned is None else planned
        start = problem.settings.get("init")
        if sweep > 1:
            last = None
            for last in self._sweeps(problem, order, np.random.default_rng(seed)):
                if last.iteration == sweep - 1 or last.converged:
                    break
            if last is None or last.iteration != sweep - 1 or last.converged or sweep > int(self.max_iter):
                done = 0 if last is None else last.iteration
                raise ValueError(f"restart {restart} stops after {done} sweep{'s' if done != 1 else ''}: ask for a "
                                 f"sweep from 1 to {done}.")
            start = last.labels
        return list(sweep_in_steps(problem.data, problem.settings["N0"], order, start, steps))

    def k_evidence(self, more: int = 2, of: str = "components"):
        """How sure the fitted K is: the fitted partition beside the best partitions found with
        every smaller K (greedy merges) and ``more`` larger K (greedy splits), each with its exact
        -ln p(X, z | N0, theta0) and ``delta``, nats above the fit (exp(-delta): its posterior odds
        against the fit); :func:`mapdp_core.engine.k_evidence.k_evidence`, in words by
        :func:`~mapdp_core.engine.k_evidence.k_sentence`. ``of="components"``: MAP-DP's partition
        (``component_labels_``); ``of="clusters"``: the clusters reported (``labels_``), named by
        their own numbers. Computed at the first call and kept; returns a copy."""
        from sklearn.utils.validation import check_is_fitted

        from mapdp_core.engine.k_evidence import k_evidence

        check_is_fitted(self, "labels_")
        self._need_rows_here("k_evidence()")
        more = check_int(more, "more", 0)
        if of not in ("components", "clusters"):
            raise ValueError(f"of must be 'components' or 'clusters' (the clusters reported), got {of!r}.")
        store = self._k_evidence_of = getattr(self, "_k_evidence_of", None) or {}
        if (more, of) not in store:
            labels = self.labels_ if of == "clusters" else self.component_labels_
            store[(more, of)] = k_evidence(self._parsed, np.asarray(labels, dtype=np.int64), self._fitted_prior(),
                                           more=more, seed=self._fixed_seed())
        kept = store[(more, of)]
        table = kept.copy()
        table.attrs = {"partitions": {k: v.copy() for k, v in kept.attrs["partitions"].items()}, "of": of}
        return table

    def row_costs(self, row: int):
        """Why row ``row`` of the fitted table is in its component: the costs of PLOS Algorithm 3
        at the fitted partition and N0, one line per component it could join and one for a new
        cluster (-ln predictive - ln size, or - ln N0), the least marked ``chosen``; see
        :func:`mapdp_core.engine.decisions.row_costs`. At a converged fit the chosen line is
        the row's own component (``component_labels_``)."""
        from sklearn.utils.validation import check_is_fitted

        from mapdp_core.engine.decisions import row_costs

        check_is_fitted(self, "labels_")
        self._need_rows_here("row_costs()")
        row = check_int(row, "row", 0)
        return row_costs(self._parsed, np.asarray(self.component_labels_, dtype=np.int64), row, self._fitted_prior())

    def partition_arguments(self) -> dict:
        """The constructor arguments that refit under this fit's prior on partitions: ``N0`` for
        the Dirichlet process, ``partition_prior`` for the mixture of finite mixtures."""
        prior = self._fitted_prior()
        if isinstance(prior, DirichletProcess):
            return {"N0": prior.N0}
        return {"partition_prior": prior}

    def _fitted_prior(self):
        """The fit's prior on partitions (a model fitted before it was recorded: the DP of ``N0_``)."""
        return getattr(self, "partition_prior_", None) or DirichletProcess(float(self.N0_))

    def _need_rows_here(self, what: str) -> None:
        """Refuse, in words, what needs every fitted row in this process after a Dask fit."""
        if getattr(self, "_fitted_stats", None) is not None:
            raise ValueError(f"{what} reads every fitted row, and this model was fitted on a Dask collection whose "
                             "rows stay on the workers; fit MAPDP in memory on a sample of the rows to use it (the "
                             "model's predict, predict_proba and score_samples work on Dask collections).")

    def impute(self):
        """The training data with each missing entry filled from its row's cluster (for
        display; the clustering itself marginalises missing values exactly).

        Real-valued columns get the cluster's predictive mean, discrete ones its predictive
        mode (PLOS Appendix F); text columns get the category label. Returns a DataFrame
        with every input row in input order, and a boolean DataFrame marking what was filled.
        """
        import pandas as pd
        from sklearn.utils.validation import check_is_fitted

        check_is_fitted(self, "labels_")
        self._need_rows_here("impute()")
        X = self._parsed.X
        missing = np.isnan(X)
        filled = np.where(missing, self._fitted_model().imputation_values(self.n_components_)[self.component_labels_],
                          X)
        frame = pd.DataFrame(filled, columns=self._parsed.names)
        categories = dict(self._parsed.categories)
        auto = getattr(self, "_auto", None)
        if auto is not None:  # back to the table's own values: category labels, unshifted scales
            for name, enc in auto.encodings.items():
                if "codes" in enc:
                    categories[name] = enc["codes"]
                else:  # a binomial scale: its levels back to the table's values (level * step + shift)
                    frame[name] = frame[name] * enc.get("step", 1.0) + enc.get("shift", 0.0)
        for name, labels in categories.items():
            frame[name] = pd.Categorical.from_codes(frame[name].astype(int), categories=labels).astype(object)
        return frame, pd.DataFrame(missing, columns=self._parsed.names)

    def _record_choices(self, parsed, auto, choice) -> None:
        """likelihood_, dropped_columns_, hyperparameter_search_ and hyperparameters_ (see the class docstring)."""
        import pandas as pd

        from mapdp_core.selection.auto import is_block, shape_words

        reasons = dict(zip(auto.table["column"], auto.table["reason"])) if auto is not None else {}
        rows = []
        for b in parsed.blocks:
            joint = len(b.names) > 1 and FAMILIES[b.family].kind == "block"
            for name in b.names:
                why = reasons.get(name, "given")
                if joint and choice is not None and is_block(choice.structure):
                    why = (f"{why}; with the other real-valued columns as one correlated block, "
                           f"{shape_words(choice.structure)} (chosen by the evidence)")
                elif b.family == "categorical" and auto is not None and auto.likelihood.get(name) == "binomial":
                    why = f"{why}; each level its own probability (categorical), chosen over binomial by the evidence"
                rows.append({"column": name, "family": b.family, "reason": why})
        self.likelihood_ = pd.DataFrame(rows, columns=["column", "family", "reason"])
        self.dropped_columns_ = (auto.dropped.copy() if auto is not None
                                 else pd.DataFrame(columns=["column", "role", "reason"]))
        self.hyperparameter_search_ = choice.table.copy() if choice is not None else None
        self.hyperparameters_ = ({"structure": choice.structure, "shape": shape_words(choice.structure),
                                  "spread": choice.spread, "weight": choice.weight, "N0": choice.N0,
                                  "rows_searched": choice.rows_searched, "rows_checked": choice.rows_checked}
                                 if choice is not None else {"N0": self.N0_})

    #: label that ``predict`` gives a row for which a new cluster is the most probable
    NEW_CLUSTER = -1

    def _check_width(self, X) -> None:
        """scikit-learn's wording for a 1-D X or a wrong number of columns in new rows."""
        if X is None or isinstance(X, (str, bytes, numbers.Number)):
            raise TypeError(f"X must hold the new rows as a 2-D array of shape (n_rows, {self.n_features_in_}) or a "
                            f"DataFrame, got {X!r:.40} of type {type(X).__name__}.")
        if isinstance(X, (np.ndarray, list, tuple)):  # a pandas Series is one row by name, as parse_rows reads it
            try:
                one_dimensional = np.ndim(X) == 1
            except ValueError:  # ragged rows: to_matrix words that
                one_dimensional = False
            if one_dimensional:
                reject_1d(np.shape(X))
        if getattr(self, "_auto", None) is not None:
            return  # encode_rows checks the columns of new rows itself
        if not hasattr(X, "columns") and np.ndim(X) == 2 and np.shape(X)[1] != self.n_features_in_:
            raise ValueError(f"X has {np.shape(X)[1]} features, but MAPDP is expecting {self.n_features_in_} "
                             f"features as input (new rows have {np.shape(X)[1]} columns; the model was "
                             f"fitted on {self.n_features_in_}).")

    def __getstate__(self):
        # the kernel buffers are rebuilt after unpickling: a read-only (memory-mapped) copy
        # of them cannot be written by the numba kernels
        state = dict(super().__getstate__())  # a copy: object.__getstate__ returns __dict__ itself
        if "_model" in state:
            state["_model"] = _OnFirstUse()
        return state

    def _fitted_model(self) -> ModelData:
        """The fitted statistics that prediction reads, built once (at the first prediction,
        after fitting or unpickling) and published only when complete, with room for
        the prior slot, so that prediction never writes to them. Without the lock, threads
        making the first calls at once read statistics not yet loaded, or arrays that another
        thread was growing (wrong probabilities, IndexError)."""
        holder = self._model
        if holder.value is None:
            with _MODEL_LOCK:
                if holder.value is None:
                    parsed = self._parsed
                    if not parsed.X.flags.writeable:  # e.g. a memory-mapped joblib load
                        parsed = copy.deepcopy(parsed)
                    model = ModelData(parsed)
                    stats = getattr(self, "_fitted_stats", None)
                    if stats is None:
                        model.start(np.array(self.component_labels_, dtype=np.int64))  # leaves capacity > K
                    else:  # fitted in parts (a Dask collection): the statistics, not the rows, came here
                        from mapdp_core.engine.partitioned import install

                        install(model, stats)
                    holder.value = model
        return holder.value

    def _encode_new(self, X, unseen: list | None = None) -> np.ndarray:
        """New rows as the fitted numeric matrix; categories never seen in fitting are coded
        missing and recorded in ``unseen`` (see :func:`mapdp_core.core.encoding.codes_of`)."""
        from mapdp_core.core.spec import parse_rows

        self._check_width(X)
        auto = getattr(self, "_auto", None)
        if auto is not None:  # new rows as the table was given: encoded as the fitted columns were
            from mapdp_core.selection.auto import encode_rows

            X = encode_rows(auto, X, unseen=unseen)
        return parse_rows(X, self._parsed, unseen=unseen)

    def unseen_categories(self, X):
        """The cells of new rows ``X`` holding a category never seen in fitting, one row per
        cell: ``row`` (0-based position in X), ``column``, ``value``, and ``note``, the row's
        note in words. Prediction scores such a cell as missing, i.e. the row without that
        feature (its likelihood marginalised, as for any gap), and warns with
        :class:`UnseenCategoryWarning`; an empty table means nothing was left out."""
        import pandas as pd
        from sklearn.utils.validation import check_is_fitted

        from mapdp_core.core.encoding import unseen_notes

        check_is_fitted(self, "labels_")
        unseen: list = []
        M = self._encode_new(X, unseen)
        notes = unseen_notes(unseen, len(M))
        return pd.DataFrame([{**cell, "note": notes[cell["row"]]} for cell in unseen],
                            columns=["row", "column", "value", "note"])

    def _log_weights(self, X):
        """ln N_k - (-ln f(x | theta_k)) for the K clusters and, last, ln N0 + ln f(x | theta0).

        A row so far from every cluster that each density underflows float64 even in logs
        (a Gaussian exponent beyond 1.8e308: |x - mean| above about 1e154 standard deviations)
        goes to the new cluster, whose prior predictive is the widest and so dominates in that
        limit, with the lowest finite log weight; everything else is exact in logs."""
        from sklearn.utils.validation import check_is_fitted

        check_is_fitted(self, "labels_")
        unseen: list = []
        M = self._encode_new(X, unseen)
        if unseen:
            from mapdp_core.core.encoding import unseen_notes

            notes = [f"row {row}: {note}" for row, note in enumerate(unseen_notes(unseen, len(M))) if note]
            warnings.warn(UnseenCategoryWarning(
                f"{len(unseen)} cell(s) of the new rows hold categories never seen in fitting and were scored as "
                f"missing: {'; '.join(notes[:5])}{' ...' if len(notes) > 5 else ''} (MAPDP.unseen_categories lists "
                "them all).", unseen), stacklevel=3)
        model = self._fitted_model()
        nlp, nlp_prior = model.score_rows(M, self.n_components_)
        logw = np.empty((len(M), self.n_components_ + 1))
        existing, new, _ = self._fitted_prior().mixture_log_weights(self.component_sizes_)
        logw[:, :-1] = existing[None, :] - nlp
        logw[:, -1] = new - nlp_prior
        beyond = np.all(logw == -np.inf, axis=1)
        if beyond.any():
            logw[beyond, -1] = -np.finfo(float).max
        return logw

    def predict_proba(self, X) -> np.ndarray:
        """Posterior probability of each fitted cluster and, in the last column, of a new
        cluster, for each new row: p(z = k | x) proportional to N_k f(x | theta_k) and
        N0 f(x | theta0) (PLOS Appendix E). Missing values are marginalised; so is a category
        never seen in fitting, with an :class:`UnseenCategoryWarning` (see
        :meth:`unseen_categories`). Every row gets a distribution, however far out it lies."""
        if is_dask_collection(X):  # lazily, part by part
            from .partitioned_fit import lazily

            return lazily(self, "predict_proba", X)
        logw = self._log_weights(X)  # checks first that the model is fitted
        logw -= logw.max(axis=1, keepdims=True)
        w = np.exp(logw)
        w /= w.sum(axis=1, keepdims=True)
        if self.n_clusters_ == self.n_components_:
            return w
        out = np.zeros((len(w), self.n_clusters_ + 1))  # a cluster's probability: its components' sum
        np.add.at(out.T, self.cluster_of_component_, w[:, :-1].T)
        out[:, -1] = w[:, -1]
        return out

    def predict(self, X) -> np.ndarray:
        """MAP cluster of each new row (PLOS Appendix E, eq 34; with merged components, the
        cluster of highest summed probability); ``NEW_CLUSTER`` (-1) where a new cluster is the
        most probable."""
        if is_dask_collection(X):  # lazily, part by part
            from .partitioned_fit import lazily

            return lazily(self, "predict", X)
        from sklearn.utils.validation import check_is_fitted

        check_is_fitted(self, "labels_")
        if self.n_clusters_ != self.n_components_:
            best = np.argmax(self.predict_proba(X), axis=1)
        else:
            best = np.argmax(self._log_weights(X), axis=1)  # in logs: exact however far out a row lies
        return np.where(best == self.n_clusters_, self.NEW_CLUSTER, best)

    def score_samples(self, X) -> np.ndarray:
        """ln p(x | X, z, N0): the mixture predictive density of eq 33, sum_k N_k/(N0+N)
        f(x | theta_k) + N0/(N0+N) f(x | theta0), for each new row."""
        if is_dask_collection(X):  # lazily, part by part
            from .partitioned_fit import lazily

            return lazily(self, "score_samples", X)
        logw = self._log_weights(X)
        top = logw.max(axis=1)
        return (top + np.log(np.exp(logw - top[:, None]).sum(axis=1))
                - self._fitted_prior().mixture_log_weights(self.component_sizes_)[2])

    def score(self, X, y=None) -> float:
        """Mean held-out log predictive density (for cross-validation of N0 and priors)."""
        return float(np.mean(self.score_samples(X)))

    def fit(self, X, y=None):
        """Fit to ``X``: a table in memory (any array or DataFrame), or a Dask array or DataFrame,
        fitted exactly on the ``dask.distributed`` cluster its client runs
        (:mod:`mapdp_core.models.partitioned_fit`: the rows stay on the workers, ``labels_`` is
        then a Dask array, and ``partitions_`` says how the sweeps ran). ``y`` is ignored."""
        if is_dask_collection(X):
            from .partitioned_fit import fit_partitioned

            if finite_mixture_prior(self.partition_prior, self.N0) is not None:
                raise ValueError("partition_prior='mfm' fits a table in memory only: the mixture of finite mixtures' "
                                 "weights depend on every row at once. Compute the Dask collection first, or use "
                                 "partition_prior='dp'.")
            return fit_partitioned(self, X, RESTART_ROWS)
        return super().fit(X, y)

    def fit_predict(self, X, y=None):
        return self.fit(X).labels_

