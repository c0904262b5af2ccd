"""One profile's verdicts: the framework's rendering of a profile (`Rendered`) with the paper's
claims decided on its tables, on the paper's numbers and on ours (after Benjamini-Hochberg
across claims), ours on the best-of-evaluations accuracy, before the correction and paired by
seed, and at the profile the write-up decides at the sensitivity table's variations."""

from __future__ import annotations

from dataclasses import dataclass, fields
from pathlib import Path

import pandas as pd

from campaign.report import claims, sensitivity
from dfl_bench.lifecycle.records import cell_hash
from dfl_bench.results.cell_configs import DEFAULT, cell_config
from dfl_bench.results.load import pooled
from dfl_bench.results.paper import COLUMN_FIELDS, SELECTED_ACCURACY, Paper
from dfl_bench.results.profile_results import Rendered

DECIDED_AT = "long"  # the profile whose decided claims the write-up lists with their intervals


@dataclass(frozen=True)
class Decided(Rendered):
    """One profile's tables, agreements and claim verdicts."""

    verdicts: list[tuple[claims.Claim, claims.Verdict, claims.Verdict]]  # after BH
    on_best: dict[str, claims.Verdict]  # ours decided on the best-of-evaluations accuracy
    before_fdr: dict[str, claims.Verdict]  # ours before Benjamini-Hochberg across claims
    on_paired: dict[str, claims.Verdict]  # ours with two cells compared over their common seeds
    # ours under each variation of the sensitivity table (sensitivity.py; at DECIDED_AT only):
    # (its label, verdicts by claim name)
    sensitivity: tuple[tuple[str, dict[str, claims.Verdict]], ...] = ()


def decide(r: Rendered, paper: Paper, frame: pd.DataFrame, repo: Path) -> Decided:
    """The claims on `r`'s tables (claims see every table), in each view (`claims.views`)."""
    views = claims.views(
        r.tables,
        paper.baseline,
        r.noise,
        default_run(frame, r.profile),
        default_run(frame, r.profile, SELECTED_ACCURACY),
    )

    def verdicts(view: claims.View) -> list[claims.Verdict]:
        return claims.one_reading(view, claims.CLAIMS)

    paper_verdicts, ours_raw, best_raw, paired_raw = (verdicts(view) for view in views)
    ours = claims.across_claims(ours_raw)
    names = [item.name for item in claims.CLAIMS]
    return Decided(
        **{field.name: getattr(r, field.name) for field in fields(Rendered)},
        verdicts=list(zip(claims.CLAIMS, claims.across_claims(paper_verdicts), ours, strict=True)),
        on_best=dict(zip(names, claims.across_claims(best_raw), strict=True)),
        before_fdr=dict(zip(names, ours_raw, strict=True)),
        on_paired=dict(zip(names, claims.across_claims(paired_raw), strict=True)),
        sensitivity=sensitivity.table(
            paper, frame, r.profile, repo, default_run, (r.tables, ours_raw)
        )
        if r.profile == DECIDED_AT
        else (),
    )


def default_run(
    frame: pd.DataFrame, profile: str, field: str = COLUMN_FIELDS["accuracy"]
) -> claims.Sample | None:
    """The default configuration's final accuracies (or `field`'s) over its ok seeds at
    `profile` (Section 10.2's fixed operators); None when it has no ok run."""
    if frame.empty:
        return None
    config = cell_config(DEFAULT, profile, None, "")
    own = (  # every run of the default configuration, in any folder, once a seed: the record
        # every table counts for it (`pooled`: of a seed trained twice, the one git added first)
        frame[(frame["experiment"] == DEFAULT) & (frame["profile"] == profile)]
        if config is None
        else pooled(frame, cell_hash(config), profile, DEFAULT)
    )
    runs = own[own["status"] == "ok"].sort_values("seed")
    values = pd.to_numeric(runs[field], errors="coerce") * 100
    seeds = runs["seed"][values.notna()].dropna().astype(int).sort_values().tolist()
    values = values.dropna()
    if values.empty:
        return None
    return claims.Sample(tuple(float(x) for x in values), f"n={len(values)}, seeds {seeds}")
