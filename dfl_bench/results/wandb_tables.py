"""Log each rendered table (paper and ours side by side) as a wandb.Table (project dfl_bench)."""

from __future__ import annotations

from collections.abc import Sequence

from dfl_bench.lifecycle.loggers import wandb_mode
from dfl_bench.results.paper import COLUMNS
from dfl_bench.results.profile_results import Rendered

PROJECT = "dfl_bench"


def rows(rendered: Rendered, name: str) -> tuple[list[str], list[list]]:
    """Columns and rows of one table: row, group, then paper/ours/std/n per column."""
    columns = ["row", "group", "label", "n_ok", "n_failed"]
    for column in COLUMNS:
        columns += [f"paper_{column}", f"ours_{column}", f"ours_{column}_std"]
    data = []
    for row in rendered.tables[name].rows:
        for paper, ours in row.cells:
            if paper is not None and paper.key is None:
                continue
            line = [
                paper.key if paper else row.label,
                paper.group if paper else "not in the paper",
                paper.label if paper else row.label,
                ours.n_ok if ours else 0,
                ours.n_failed if ours else 0,
            ]
            for column in COLUMNS:
                line += [
                    paper.number(column) if paper else None,
                    ours.mean[column] if ours else None,
                    ours.std[column] if ours else None,
                ]
            data.append(line)
    return columns, data


def log_tables(results: Sequence[Rendered], mode: str = "auto") -> str:
    """One W&B run (job_type tables) logging `tables/<experiment>/<profile>`; returns its mode."""
    import wandb

    resolved = wandb_mode(mode)
    run = wandb.init(project=PROJECT, job_type="tables", name="paper-tables", mode=resolved)
    try:
        for rendered in results:
            for name in rendered.selected:
                columns, data = rows(rendered, name)
                run.log(
                    {f"tables/{name}/{rendered.profile}": wandb.Table(columns=columns, data=data)}
                )
    finally:
        run.finish()
    return f"logged {sum(len(r.selected) for r in results)} tables ({resolved})"
