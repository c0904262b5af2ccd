"""The table a multirun ends with (printed by the checked sweeper, hydra_plugins/dfl_bench_sweeper):
the experiment's rows at the sweep's profile from the records there are (the rows it ran and those
recorded before), with accuracy and the Section 9.1 ratios beside the paper's numbers where the
paper has them, and where the full table lives (`make tables`)."""

from __future__ import annotations

import warnings
from pathlib import Path

from dfl_bench import markdown
from dfl_bench.paths import REPO_DIR
from dfl_bench.results.cells import build_table
from dfl_bench.results.load import load_records
from dfl_bench.results.paper import COLUMNS, load_paper
from dfl_bench.results.render_paper import HEADERS, ours_value, paper_value, plain


def sweep_table(records_dir: str | Path, experiment: str, profile: str) -> str:
    """The experiment's table at `profile` from the records under `records_dir`, as Markdown
    (rows without records left out), or a line saying there is none."""
    paper = load_paper().tables.get(experiment)
    if paper is None:
        return f"[dfl_bench] no table for {experiment}: not an experiment of conf/experiment/"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        frame = load_records(Path(records_dir))
    if frame.empty:
        return f"[dfl_bench] no table for {experiment} at profile {profile}: no records"
    table = build_table(paper, frame, profile, REPO_DIR)
    has_paper = not paper.beyond
    header = ["row", "n", *(HEADERS[c] for c in COLUMNS)]
    body = []
    for row in table.rows:
        for cell, ours in row.cells:
            if ours is None:
                continue
            label = plain(cell.label) if cell is not None else row.label
            if cell is not None and len(paper.groups) > 1:
                label += f" ({cell.group})"
            values = []
            for column in COLUMNS:
                text = ours_value(ours, column)
                if has_paper and cell is not None:
                    text += f" (paper {paper_value(cell, column) or '-'})"
                values.append(text)
            body.append([label, str(ours.n_ok), *values])
    if not body:
        return f"[dfl_bench] no finished rows of {experiment} at profile {profile}"
    return "\n".join(
        [
            f"[dfl_bench] {experiment} at profile {profile}: {len(body)} row(s) with records "
            f"in {records_dir} (mean ± sd over seeds; accuracy %, final; undef.: a ratio no run "
            "defines)",
            *markdown.table(header, body),
            f"The full table (every row, the comparisons, the claims): `make tables "
            f"RECORDS_DIR={records_dir}` writes {experiment}.md (results/tables/ for the "
            "committed records, else beside RECORDS_DIR)",
        ]
    )
