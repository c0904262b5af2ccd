"""The headline plan: the seeds per cell that the paper's own gap at its budget needs, planned from
the records and committed before any planned run trains (the second seed plan).

The paper's headline (Section 10.2): `both` 98.0 against `sum9` 97.7, "more knowledge increases
performance", a gap of +0.3 points at `profile=paper` (70,000 iterations). With the seed sds the
cells show now, `seeds_needed` gives the seeds per cell for an 80% chance that Welch's 95%
interval of both - sum9 excludes 0 if the true gap is the paper's. The decision rule, declared
with the plan (results/headline.py, `DECISION`, which the write-up reads too), reads the final
interval of both - sum9 against the gap's own size, not against a generic margin wider than it:
holds when it lies above 0, fails when its upper end lies below the paper's +0.3, else
inconclusive.

`python -m campaign.headline_plan` writes results/headline_plan/ (plan.json in the
seed plan's form, so `seed_plan run --out results/headline_plan` trains exactly it, and its
README.md); `make headline-plan` trains it in the background from a frozen checkout.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from campaign import power
from campaign.headline import CELLS, DECISION, PAPER
from campaign.seed_plan import write_plan
from dfl_bench import markdown, outputs
from dfl_bench.paths import REPO_DIR
from dfl_bench.results import cell_configs, stats
from dfl_bench.results.cells import row_runs
from dfl_bench.schema import TEST_ACCURACY
from dfl_bench.untrusted import UntrustedFile

FOLDER = REPO_DIR / "results" / "headline_plan"
OWN = {  # what a headline plan's files carry (seed_plan.PLAN_FILES: a seed plan's)
    "plan.json": outputs.Mark(b'{\n "profile": ', (b'\n "decision": ',)),  # a top-level key
    "README.md": outputs.generated_by(
        "python -m campaign.headline_plan",
        "python -m dfl_bench.reproduction.headline_plan",
        said="Written by",
    ),  # its command whole, or the older name the committed plan names
}
PROFILE = "paper"
MIN_SEEDS = 6  # the least a cell gets, whatever the power calculation says


def cell_runs(records_dir: Path) -> dict[str, Any]:
    """Each planned cell's records at PROFILE (a frame each): the runs of its row's
    configuration there, as its table's cell counts them (cells.row_runs)."""
    from dfl_bench.results.load import load_records

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        frame = load_records(records_dir)
    return {cell: row_runs(frame, *cell.split("/", 1), PROFILE) for cell in CELLS}


def build_plan(records_dir: Path) -> dict:
    """The plan: the cells' accuracies and sds now, the seeds per cell for the paper's gap."""
    runs = cell_runs(records_dir)
    values = {
        cell: [100.0 * float(v) for v in r[r["status"] == "ok"][TEST_ACCURACY]]
        for cell, r in runs.items()
    }
    for cell, v in values.items():
        if len(v) < 2:
            raise ValueError(f"{cell} has {len(v)} ok run(s) at {PROFILE}: no sd to plan from")
    first, second = CELLS
    sds = {cell: statistics.stdev(v) for cell, v in values.items()}
    needed = power.seeds_needed(sds[first], sds[second], DECISION["gap"], None, False)
    seeds = max(MIN_SEEDS, needed or power.MAX_SEEDS)
    wall = {cell: round(float(r["wall_time_s"].mean()), 1) for cell, r in runs.items()}
    return {
        "profile": PROFILE,
        "power": power.POWER,
        "alpha": stats.ALPHA,
        "max_seeds": power.MAX_SEEDS,
        "decision": DECISION,
        "paper": PAPER,
        "now": {
            c: {"n": len(v), "mean": round(statistics.mean(v), 3), "sd": round(sds[c], 3)}
            for c, v in values.items()
        },  # fmt: skip
        "seeds_needed": needed,
        "cells": {c: {"seeds": seeds, "override": CELLS[c], "wall_time_s": wall[c]} for c in CELLS},
    }


def readme(p: dict) -> str:
    """The plan in words: the claim, the rule, the inputs and the cells."""
    d, first, second = p["decision"], *p["cells"]
    now = p["now"]
    runs = sum(max(0, spec["seeds"] - now[c]["n"]) for c, spec in p["cells"].items())
    hours = sum(
        max(0, spec["seeds"] - now[c]["n"]) * spec["wall_time_s"] for c, spec in p["cells"].items()
    )
    return "\n".join(
        [
            "# The headline plan (the second seed plan)",
            "",
            "Written by `python -m campaign.headline_plan` before any planned run "
            "trained; `make headline-plan` trains exactly it (`seed_plan run --out "
            "results/headline_plan`, the seeds 0..n-1 of each cell without an ok record).",
            "",
            f"The claim `{d['claim']}`: the paper's `both` {p['paper'][first]} against `sum9` "
            f"{p['paper'][second]} at `profile={p['profile']}`, a gap of +{d['gap']:g} points "
            '(Section 10.2, "more knowledge increases performance").',
            "",
            f"Decision, declared with the plan: the difference {d['difference']}, {d['test']}. "
            f"**holds**: {d['holds']}; **fails**: {d['fails']}; **inconclusive**: "
            f"{d['inconclusive']}. The margin is the claim's own size: an equivalence margin "
            "wider than the gap could not refute it.",
            "",
            "Inputs (the records at the plan's writing): "
            + "; ".join(
                f"`{c}` n = {v['n']}, mean {v['mean']:.2f}, sd {v['sd']:.3f}"
                for c, v in now.items()
            )
            + f". Seeds per cell for a {p['power']:.0%} chance that the interval excludes 0 if "
            f"the true gap is +{d['gap']:g} (Welch, two-sided {p['alpha']:g}): "
            f"{p['seeds_needed'] if p['seeds_needed'] is not None else 'more than the maximum'}"
            f"; planned: {p['cells'][first]['seeds']} (at least {MIN_SEEDS}).",
            "",
            f"Runs to add: {runs}, about {hours / 3600:.1f} h on one thread at the cells' "
            "recorded wall times.",
            "",
            *markdown.table(
                ["cell", "override", "seeds (planned)", "seeds now", "wall time per run (s)"],
                [
                    [
                        f"`{c}`",
                        f"`{s['override']}`",
                        str(s["seeds"]),
                        str(now[c]["n"]),
                        f"{s['wall_time_s']:.0f}",
                    ]
                    for c, s in p["cells"].items()
                ],  # fmt: skip
            ),
            "",
        ]
    )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m campaign.headline_plan")
    parser.add_argument("--records-dir", "--records", dest="records", default=cell_configs.RECORDS)
    parser.add_argument("--out", type=Path, default=FOLDER)
    args = parser.parse_args(argv)
    if not Path(args.records).is_dir():
        parser.error(f"--records-dir {args.records} is no folder: a plan is made from records")
    try:
        p = build_plan(Path(args.records))
    except ValueError as err:
        parser.error(str(err))
    try:
        write_plan(args.out, p, readme(p), OWN)
    except UntrustedFile as err:
        print(f"[headline_plan] {err}", file=sys.stderr)
        return 2
    print(f"[headline_plan] {p['cells']} written to {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
