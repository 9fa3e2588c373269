"""Prediction for the algorithms that find a partition of MAP-DP's own model (SUGS, the DP
search): they hold their partition as a fitted :class:`~mapdp_core.models.mapdp.MAPDP`."""
from __future__ import annotations

from mapdp_core.core.estimator import Problem

from .mapdp import MAPDP

__all__ = ["PredictsAsMAPDP"]


class PredictsAsMAPDP:
    """Prediction for an algorithm that finds a partition of MAP-DP's own model (SUGS, the DP
    search): the partition is held as a fitted :class:`MAPDP` with the same likelihood, prior
    and N0, so ``predict``, ``predict_proba`` and ``score_samples`` are MAP-DP's (PLOS
    Appendix E), and so are ``prior_``, ``likelihood_`` and ``dropped_columns_``."""

    def _hold_as_mapdp(self, problem: Problem, history, N0: float) -> None:
        mapdp = MAPDP(N0=N0, likelihood=self.likelihood, prior=self.prior, n_init=1, shuffle=False, merge=None)
        self._mapdp = mapdp._set_fitted(Problem(problem.data, problem.n_rows, {**problem.settings, "N0": N0}),
                                        history, self.restart_values_)
        for name in ("prior_", "likelihood_", "dropped_columns_", "n_features_in_", "feature_names_in_"):
            if hasattr(self._mapdp, name):
                setattr(self, name, getattr(self._mapdp, name))

    def predict(self, X):
        """MAP cluster of each new row given the fitted partition (-1 where a new cluster is the
        most probable), as :meth:`MAPDP.predict` with the same N0 and prior."""
        from sklearn.utils.validation import check_is_fitted

        check_is_fitted(self, "labels_")
        return self._mapdp.predict(X)

    def predict_proba(self, X):
        """As :meth:`MAPDP.predict_proba`: each fitted cluster's probability, a new one's last."""
        from sklearn.utils.validation import check_is_fitted

        check_is_fitted(self, "labels_")
        return self._mapdp.predict_proba(X)

    def score_samples(self, X):
        """As :meth:`MAPDP.score_samples`: the log mixture predictive density of each new row."""
        from sklearn.utils.validation import check_is_fitted

        check_is_fitted(self, "labels_")
        return self._mapdp.score_samples(X)
