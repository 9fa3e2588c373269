"""The checked-in mapdp_core/kernels/dp_mixture.py is what scripts/gen_kernels.py makes of its template."""
import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _generator():
    spec = importlib.util.spec_from_file_location("gen_kernels", ROOT / "scripts" / "gen_kernels.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_checked_in_kernels_are_generated():
    gen = _generator()
    expected = gen.render(gen.TEMPLATE.read_text())
    assert gen.TARGET.read_text() == expected, "run `python scripts/gen_kernels.py` after editing the template or a LAYOUT"


def test_every_family_is_called_with_its_own_slot():
    """Each dispatcher calls every family that defines the function, each with its own tuple."""
    from mapdp_core.kernels import dp_mixture as _kernels
    from mapdp_core.families import KERNEL_SLOTS

    text = Path(_kernels.__file__).read_text()
    gen = _generator()
    for j, module in enumerate(KERNEL_SLOTS):
        p = gen.prefix(module)
        for op, args in (("reset", "k"), ("move", "i, k, sign"), ("nlp", "i, k"), ("nlp_loo", "i, k"),
                         ("logml", "k"), ("pconst", "i")):
            expected = 1 if hasattr(module, op) else 0
            assert text.count(f"_{p}.{op}({args}, fams[{j}])") == expected, (p, op)
        assert module.N_FIXED < len(module.LAYOUT)
    assert "fams[2][0]" in text  # the Normal-Wishart rows, for the sweep's pruning


def test_layout_matches_build():
    """LAYOUT names the arrays that build returns, in order (same count, data first)."""
    import numpy as np

    from mapdp_core.families import poisson, exponential, geometric, normal_gamma, beta_binomial

    X = np.array([[0.0], [1.0], [3.0]])
    for module in (poisson, exponential, geometric, normal_gamma, beta_binomial):
        family = "binomial" if module is beta_binomial else module.NAME
        prior = module.resolve_prior({}, X, ["x"], family)
        fam = module.build(X, prior, 4)
        assert len(fam) == len(module.LAYOUT)
        assert all(a.shape == (4, 1) for a in fam[module.N_FIXED:])
