"""The shared argument checks in mapdp_core.core.validation: one test per rule, and the restart plan."""
import numpy as np
import pytest

from mapdp_core.core.validation import (check_choice, check_int, check_order, check_positive_values,
                                    check_real, check_seed, make_rng, restart_plan)
from mapdp_core.evaluation.model_selection import cross_validate
from mapdp_core.selection.priors import scaled_prior


def test_check_int_rules():
    assert check_int(np.int32(3), "n", 1) == 3 and type(check_int(np.int64(3), "n", 1)) is int
    with pytest.raises(ValueError, match=r"n must be a whole number >= 1, got True"):
        check_int(True, "n", 1)
    with pytest.raises(ValueError, match=r"n must be a whole number >= 1, got 2.0"):
        check_int(2.0, "n", 1)
    with pytest.raises(ValueError, match=r"k must be a whole number from 1 to 5, got 6"):
        check_int(6, "k", 1, 5)
    assert check_int(1e6, "N", 0, whole_floats=True) == 1_000_000
    with pytest.raises(ValueError, match="N must be a whole number >= 0"):
        check_int(2.5, "N", 0, whole_floats=True)


def test_check_real_rules():
    assert check_real(np.float32(0.5), "r") == 0.5
    with pytest.raises(ValueError, match=r"r must be a finite number, got 'a' of type str"):
        check_real("a", "r")
    with pytest.raises(ValueError, match=r"r must be a finite number, got nan"):
        check_real(float("nan"), "r")
    with pytest.raises(ValueError, match=r"sigma must be a finite number > 0, got 0"):
        check_real(0, "sigma", positive=True)
    with pytest.raises(ValueError, match=r"p must be a finite number >= 0 and <= 1, got 1.5"):
        check_real(1.5, "p", low=0, high=1)
    assert check_real(0.0, "p", low=0, high=1, inclusive="left") == 0.0
    with pytest.raises(ValueError, match=r"p must be a finite number >= 0 and < 1, got 1"):
        check_real(1, "p", low=0, high=1, inclusive="left")
    with pytest.raises(ValueError, match=r"p must be a finite number > 0 and <= 1, got 0"):
        check_real(0, "p", low=0, high=1, inclusive="right")
    with pytest.raises(ValueError, match="inclusive must be one of"):
        check_real(0, "p", inclusive="open")


def test_check_positive_values_rules():
    assert check_positive_values([1, 2.5], "grid") == [1.0, 2.5]
    with pytest.raises(ValueError, match="grid must hold at least one value"):
        check_positive_values([], "grid")
    with pytest.raises(ValueError, match=r"every value in grid must be a finite number > 0"):
        check_positive_values([1, -1], "grid")


def test_check_choice_rules():
    assert check_choice("b", "mode", ["a", "b"]) == "b"
    with pytest.raises(ValueError, match=r"mode must be one of 'a', 'b'; got 'c'"):
        check_choice("c", "mode", ["a", "b"])
    with pytest.raises(ValueError, match="mode must be one of"):
        check_choice(["a"], "mode", {"a", "b"})  # unhashable: not an option, no TypeError


def test_check_seed_rules():
    g = np.random.default_rng(1)
    assert check_seed(g) is g
    assert check_seed(3).integers(1000) == np.random.default_rng(3).integers(1000)
    assert isinstance(check_seed(np.random.RandomState(0)), np.random.Generator)
    assert check_seed(np.random.SeedSequence(4)).integers(1000) == np.random.default_rng(4).integers(1000)
    for bad in (-1, True, 1.5, "1"):
        with pytest.raises(ValueError, match="seed must be None, a whole number >= 0 or a numpy Generator"):
            check_seed(bad)
    with pytest.raises(ValueError, match="^random_state must be"):
        make_rng(-1)


def test_check_order_rules():
    assert check_order(None, 3).tolist() == [0, 1, 2]
    assert check_order(np.array([2, 0, 1], dtype=np.int32), 3).dtype == np.int64
    with pytest.raises(ValueError, match="order must be a permutation of 0..2.*repeated or missing"):
        check_order([0, 0, 1], 3)
    with pytest.raises(ValueError, match=r"order must be a permutation of 0..2.*shape \(2,\)"):
        check_order([0, 1], 3)


def test_weight_errors_name_weight_not_the_scale():
    X = np.array([[0.0], [1.0], [2.0]])
    with pytest.raises(ValueError, match=r"^weight must be a finite number > 0, got -1"):
        scaled_prior(X, "normal_gamma", 1.0, weight=-1)
    with pytest.raises(ValueError, match=r"^weight must be a finite number > 0"):
        cross_validate(X, [1.0], [1.0], "normal_gamma", n_folds=2, weight=0)
    with pytest.raises(ValueError, match=r"^the prior scale s must be a finite number > 0"):
        scaled_prior(X, "normal_gamma", -1.0)


# ----------------------------------------------------------------------------- restart_plan

def _same(a, b):
    return all((x is None and y is None) or np.array_equal(x, y) for (x, _), (y, _) in zip(a, b)) and \
        [s for _, s in a] == [s for _, s in b]


def test_restart_plan_is_reproducible_and_orders_are_permutations():
    a, b = restart_plan(7, 4, 50), restart_plan(7, 4, 50)
    assert len(a) == 4 and _same(a, b)
    for order, seed in a:
        assert order.dtype == np.int64 and sorted(order.tolist()) == list(range(50))
        assert isinstance(seed, int)
    assert not _same(a, restart_plan(8, 4, 50))
    assert len({tuple(o) for o, _ in a}) == 4  # restarts differ from one another


def test_restart_plan_restart_r_does_not_depend_on_how_many_or_where_they_run():
    # each restart is its own SeedSequence child: the plan of restart r is the same whether
    # 2 or 5 restarts are asked for, so running them in any number of jobs changes nothing
    assert _same(restart_plan(3, 5, 20)[:2], restart_plan(3, 2, 20))
    from joblib import Parallel, delayed
    serial = restart_plan(3, 5, 20)
    for n_jobs, backend in ((1, "sequential"), (2, "threading")):
        rows = Parallel(n_jobs=n_jobs, backend=backend)(delayed(lambda r: restart_plan(3, 5, 20)[r])(r)
                                                         for r in range(5))
        assert _same(rows, serial)


def test_restart_plan_first_in_input_order_and_no_shuffle():
    plan = restart_plan(0, 3, 10, first_in_input_order=True)
    assert plan[0][0] is None and all(o is not None for o, _ in plan[1:])
    # the other restarts and every seed are those of the plain plan
    assert _same(plan[1:], restart_plan(0, 3, 10)[1:]) and plan[0][1] == restart_plan(0, 3, 10)[0][1]
    assert all(o is None for o, _ in restart_plan(0, 3, 10, shuffle=False))


def test_restart_plan_takes_generators_and_rejects_bad_arguments():
    assert _same(restart_plan(np.random.default_rng(5), 2, 6), restart_plan(np.random.default_rng(5), 2, 6))
    with pytest.raises(ValueError, match="n_restarts must be a whole number >= 1"):
        restart_plan(0, 0, 5)
    with pytest.raises(ValueError, match="random_state must be"):
        restart_plan(-3, 2, 5)
