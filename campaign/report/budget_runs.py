"""The runs of one profile, each once (a run reused for another table is its original's), with
every table cell it fills: the index's "Run by run" section and the write-up's line at the
paper's budget (70,000 iterations)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import pandas as pd

from dfl_bench import markdown
from dfl_bench.schema import BEST_TEST_ACCURACY, TEST_ACCURACY
from dfl_bench.untrusted import read_json

if TYPE_CHECKING:
    from dfl_bench.results.profile_results import Rendered

# The paper's wall times for its budget (Section 10): the baseline, and a run with the DFL loss.
PAPER_MINUTES = {"baseline": 35, "DFL": 112}


@dataclass(frozen=True)
class Run:
    """One ok run of a profile, counted once (a reused record is its original's): the table
    cells it fills with the paper's accuracy there, ours (best and final, %), its wall time."""

    origin: str  # `<experiment>/<config-hash>.json` under the records folder
    seed: int
    cells: dict[str, float | None]  # `table/row` -> the paper's accuracy (None: not printed)
    best: float
    final: float
    wall_s: float
    resumed: bool
    threads: int | None
    every: int | None  # evaluation cadence (steps); the best is the best of those evaluations
    commit: str


def runs(r: Rendered) -> list[Run]:
    """Every ok run that fills a cell of a table at `r.profile`, once, in record order."""
    found: dict[str, tuple[pd.Series, dict[str, float | None]]] = {}
    for name, table in r.tables.items():
        pairs = table.pairs()
        ok = table.records[table.records["status"] == "ok"]
        for row in table.rows:
            for cell, ours in row.cells:
                if ours is None or not ours.n_ok:
                    continue
                label = cell.key if cell is not None and cell.key else row.label
                paper = cell or pairs.get(row.label.split(", ")[0], (None, None))[0]
                number = None if paper is None else paper.number("accuracy")
                for _, record in ok[ok["configuration"] == ours.configuration].iterrows():
                    reused = record["reused_from"]
                    origin = (
                        reused
                        if isinstance(reused, str)
                        else f"{record['experiment']}/{record['run']}.json"
                    )
                    found.setdefault(origin, (record, {}))[1][f"{name}/{label}"] = number
    out = []
    for origin, (record, cells) in sorted(found.items()):
        config = record["config"]
        raw = read_json(record["path"])
        out.append(
            Run(
                origin=origin,
                seed=int(record["seed"]),
                cells=cells,
                best=100 * float(record[BEST_TEST_ACCURACY]),
                final=100 * float(record[TEST_ACCURACY]),
                wall_s=float(record["wall_time_s"]),
                resumed=bool(raw.get("resumed")),
                threads=raw.get("torch_threads", config.get("threads")),
                every=(config.get("profile") or {}).get("eval_every"),
                commit=str(record["git_commit"]),
            )
        )
    return out


def printed(value: float) -> str:
    """A paper's accuracy as it prints it: one decimal, two where it has two (98.0, 95.18)."""
    return f"{value:.1f}" if round(value, 1) == value else f"{value:.2f}"


def runs_in_words(r: Rendered) -> str:
    """The runs of `runs` in one line: each cell it fills, ours beside the paper's, wall time."""
    parts = []
    for run in runs(r):
        cells = ", ".join(
            f"`{cell}`" + ("" if paper is None else f" (paper {printed(paper)})")
            for cell, paper in run.cells.items()
        )
        parts.append(f"{cells}: {run.final:.2f} (best {run.best:.2f}), {run.wall_s / 60:.0f} min")
    return "; ".join(parts) or "none yet"


def runs_table(r: Rendered) -> list[str]:
    """The index's section of `runs` (tables/README.md): one row per run, each cell it fills."""
    body = []
    seeds: dict[str, int] = {}
    for run in runs(r):
        for cell in run.cells:
            seeds[cell] = seeds.get(cell, 0) + 1
    for run in runs(r):
        for i, (cell, paper) in enumerate(run.cells.items()):
            delta = "" if paper is None else f"{run.final - paper:+.2f}"
            ours = f"{run.final:.2f} ({run.best:.2f})"
            first = [
                f"`{run.origin}`",
                str(run.seed),
                f"every {run.every:,}" if run.every else "-",
                f"{run.wall_s / 60:.1f}" + (" (resumed)" if run.resumed else ""),
                "-" if run.threads is None else str(run.threads),
                f"`{run.commit[:10]}`",
            ]
            shown = "-" if paper is None else printed(paper)
            body.append([*(first if i == 0 else [""] * len(first)), cell, shown, ours, delta])
    if not body:
        return []
    header = ["run", "seed", "evaluations", "wall time (min)", "threads", "commit"]
    header += ["cell", "paper", "ours: final (best)", "final - paper"]
    return [
        "",
        "### Run by run",
        "",
        f"Each run of profile `{r.profile}` once (a run reused for another table is listed "
        "once, with every cell it fills). Seeds per cell: "
        + ", ".join(f"{cell} {n}" for cell, n in sorted(seeds.items()))
        + " (a cell of fewer than 3 seeds decides nothing). Wall "
        "time: the training time summed over the run's segments (a run stopped and resumed "
        "from its checkpoint counts each segment), on this project's 2-core CPU beside other "
        "jobs; the paper reports about "
        f"{PAPER_MINUTES['DFL']} min for a run with the DFL loss and {PAPER_MINUTES['baseline']} "
        "min for the supervised baseline (Section 10).",
        "",
        *markdown.table(header, body),
    ]
