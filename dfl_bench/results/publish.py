"""Write results/tables/<experiment>.md and .tex, the figures and the index tables/README.md."""

from __future__ import annotations

import platform
import re
from collections.abc import Sequence
from datetime import datetime, timezone
from pathlib import Path

import pandas as pd

from dfl_bench import markdown, outputs
from dfl_bench.results import figures, render_beyond, render_paper, stats
from dfl_bench.results.agreement import WITHIN, Agreement, agreement
from dfl_bench.results.cell_configs import SPREAD
from dfl_bench.results.cells import Table, build_table, collapse_threshold
from dfl_bench.results.load import pooled
from dfl_bench.results.paper import COLUMN_FIELDS, ORDERS, Paper, main_tables, paper_noise
from dfl_bench.results.profile_results import Rendered
from dfl_bench.results.report import PLAIN, Report
from dfl_bench.schema import BEST_TEST_ACCURACY, TEST_ACCURACY
from dfl_bench.untrusted import read_json, read_text, unlinked

INDEX_HEADER = [
    "table",
    "records (ok)",
    "seeds",
    "commits",
    "finished",
    "wall time",
    *WITHIN,
    "rho acc",
]


def build(
    paper: Paper,
    frame: pd.DataFrame,
    profile: str,
    selected: Sequence[str],
    repo: Path,
    report: Report = PLAIN,
) -> Rendered:
    """Tables (in the order each is compared), agreement (both orders of a swapped table) of one
    profile (`selected`: the tables whose files are written), then `report`'s decisions on them
    (a report sees every table)."""
    below = collapse_threshold(frame, profile)
    tables = {
        name: build_table(table.compared(), frame, profile, repo, below)
        for name, table in paper.tables.items()
    }
    agreements = {name: agreement(table) for name, table in tables.items()}
    orders = {
        name: {
            order: agreement(
                build_table(paper.tables[name].in_order(order), frame, profile, repo, below)
            )
            for order in ORDERS
        }
        for name in paper.tables
        if paper.tables[name].order != "header"
    }
    noise = paper_noise(paper.baseline_std)
    rendered = Rendered(profile, tables, agreements, tuple(selected), orders, noise)
    return report.decide(rendered, paper, frame, repo)


SECTION = re.compile(r"^## .*, profile `([^`]+)`$", re.M)
RECORDS_LINE = re.compile(r"^Records: \d+ \((\d+) ok\)", re.M)


def ok_runs(text: str) -> dict[str, int]:
    """The ok runs a rendered table file holds, per profile section (its `Records:` lines)."""
    out: dict[str, int] = {}
    sections = list(SECTION.finditer(text))
    for i, section in enumerate(sections):
        end = sections[i + 1].start() if i + 1 < len(sections) else len(text)
        counted = RECORDS_LINE.search(text, section.end(), end)
        profile = section.group(1)
        out[profile] = out.get(profile, 0) + int(counted.group(1) if counted else 0)
    return out


def losses(path: Path, results: Sequence[Rendered], name: str) -> list[str]:
    """What the table file at `path` would lose if `results` replaced it: each profile whose
    ok runs it holds exceed the new rendering's."""
    try:
        before = ok_runs(read_text(path))  # no link, pipe or folder: UntrustedFile
    except OSError:
        return []
    after: dict[str, int] = {}
    for r in results:
        records = r.tables[name].records
        after[r.profile] = after.get(r.profile, 0) + int((records["status"] == "ok").sum())
    return [
        f"{profile}: {n} ok runs, the new rendering {after.get(profile, 0)}"
        for profile, n in before.items()
        if n > after.get(profile, 0)
    ]


def write(
    results: Sequence[Rendered],
    frame: pd.DataFrame,
    out: Path,
    command: str,
    force: bool = False,
    shared: bool = True,
    report: Report = PLAIN,
) -> tuple[list[Path], list[str]]:
    """Every output file under `out` (tables/, figures/): the paths written, and one line per
    table kept because the new rendering has fewer ok runs in one of its profiles (never
    replaced unless `force`; the files that sum every table are then kept too). The files that
    sum every profile (the index, then `report`'s own) are written only when `shared`: a
    rendering of every profile present (then a figure of ours it no longer draws goes). Every
    file it writes is `outputs.files`-checked first: a refused one leaves them all unwritten."""
    tables_dir, figures_dir = unlinked(out / "tables"), unlinked(out / "figures")
    names = list(dict.fromkeys(name for r in results for name in r.selected))
    kept = {}
    if not force:
        for name in names:
            lost = losses(tables_dir / f"{name}.md", results, name)
            if lost:
                kept[name] = f"{tables_dir / name}.md ({'; '.join(lost)})"
    names, shared = [n for n in names if n not in kept], shared and not kept
    drawn = {}  # every figure with what draws it
    for r in results:
        selected = {name: r.tables[name] for name in r.selected if name not in kept}
        drawn |= figures.all_figures(selected, frame, r.profile, figures_dir, r.noise.sigma)
    texts = [tables_dir / f"{n}{suffix}" for n in names for suffix in (".md", ".tex")]
    texts += [tables_dir / "README.md"] * shared
    planned = {p: outputs.RENDERED[p.suffix] for p in texts} | dict.fromkeys(drawn, outputs.PNG)
    outputs.files(planned | (report.files(results, out) if shared else {}))  # before any write
    written = [p for n in names for p in _write_table(results, n, tables_dir, command, report)]
    written += [draw(path) for path, draw in drawn.items()]
    if shared and set(names) == set(results[0].tables):  # every table at every profile
        for path in figures.stale(figures_dir, drawn):  # one it no longer draws goes
            path.unlink()
    if shared:
        written.append(_write(tables_dir / "README.md", index(results, command, frame, report)))
        written += report.write(results, out, command)
    return written, list(kept.values())


def _write_table(
    results: Sequence[Rendered], name: str, tables_dir: Path, command: str, report: Report
) -> list[Path]:
    """tables/<name>.md and .tex: the table at each profile that has its records (the first
    alone when it has none yet)."""
    md, tex = [], []
    shown = [r for r in results if not r.tables[name].records.empty] or results[:1]
    for r in shown:
        table = r.tables[name]
        md.append(
            render_beyond.markdown(table)
            if table.paper.beyond
            else render_paper.markdown(
                table, r.agreements[name], r.orders.get(name), report.under_table(r, name)
            )
        )
        tex.append(render_paper.latex(table))
    title = f"# {name}: the paper beside this reproduction\n\nGenerated by `{command}`.\n\n"
    return [
        _write(tables_dir / f"{name}.md", title + "\n".join(md)),
        _write(tables_dir / f"{name}.tex", "\n".join(tex)),
    ]


def index(
    results: Sequence[Rendered], command: str, frame: pd.DataFrame, report: Report = PLAIN
) -> str:
    """tables/README.md: every table with agreement and provenance (and `report`'s words)."""
    now = datetime.now(timezone.utc).isoformat(timespec="seconds")
    lines = [
        "# The paper's tables, reproduced",
        "",
        f"Generated by `{command}` on {now} ({platform.node()}, {platform.machine()}, "
        f"Python {platform.python_version()}); rendering trains nothing. Each table file holds "
        "one section per profile (profiles are never mixed in one cell); figures are in "
        f"`../figures/`. Accuracy in %, ratios in [0, 1].{report.index_opening()}",
    ]
    for r in results:
        lines += [
            "",
            f"## Profile `{r.profile}`",
            "",
            f"Evaluations: {_cadence(frame, r.profile)}. Distinct cells (each configuration "
            f"once) with {stats.MIN_SEEDS} or more ok seeds: {r.seeded()}.",
            "",
            *markdown.table(
                [*INDEX_HEADER, *report.columns],
                ([*_index_row(n, t, r), *report.index_cells(r, n)] for n, t in r.tables.items()),
            ),
        ]
        for name, orders in r.orders.items():
            compared = r.tables[name].paper.order
            other = {o: a for o, a in orders.items() if o != compared}
            lines += [
                "",
                f"Table `{name}` is compared with the paper's halves `{compared}` (why: "
                f"[{name}]({name}.md)); "
                + "; ".join(
                    f"in the `{o}` order: accuracy rho "
                    f"{render_paper.signed(a.spearman['accuracy'])}, "
                    f"cu_ant rho {render_paper.signed(a.spearman['cu_ant'])}, {WITHIN[1]} "
                    f"{Agreement.share(a.ratio_within)}"
                    for o, a in other.items()
                )
                + ".",
            ]
        lines += report.index_sections(r)
        if set(main_tables()) & set(figures.with_runs(r.tables)):  # as figures.all_figures
            lines += ["", f"Figure: `../figures/analyze_measures_{r.profile}.png`."]
        lines += seed_spread(frame, r.profile)
        lines += report.index_closing(r)
    return "\n".join(lines) + "\n"


SPREAD_METRICS = {  # record field -> its label: the two accuracies, then the column map's ratios
    TEST_ACCURACY: "final accuracy",
    BEST_TEST_ACCURACY: "best accuracy",
    **{field: column for column, field in COLUMN_FIELDS.items() if field != TEST_ACCURACY},
}


def seed_spread(frame: pd.DataFrame, profile: str) -> list[str]:
    """Mean ± sample std over seeds of the seed-spread runs (the baseline and the default
    configuration; one line per configuration, every run of it pooled from any folder, a seed
    once, as every table counts it), so a table's difference can be told from seed noise."""
    if frame.empty:
        return []
    runs = frame[
        frame.experiment.isin(SPREAD) & (frame.profile == profile) & (frame.status == "ok")
    ]
    if runs.empty:
        return []
    body = []
    per_row = runs.groupby(["experiment", "row"], dropna=False)["configuration"]
    per_row = per_row.transform("nunique")
    keys = ["experiment", "row", "configuration"]
    for (experiment, row, digest), own in runs.groupby(keys, dropna=False):
        group = pooled(frame, digest, profile, experiment)
        group = group[group["status"] == "ok"] if not group.empty else own
        name = f"{experiment}" + ("" if pd.isna(row) else f" / {row}")
        name += f" (config {digest})" if per_row[own.index[0]] > 1 else ""
        cells = [name, str(len(group))]
        cells.append(", ".join(str(int(s)) for s in sorted(group.seed.dropna())))
        for column in SPREAD_METRICS:
            accuracy = column in (TEST_ACCURACY, BEST_TEST_ACCURACY)
            values = group[column].dropna() * (100 if accuracy else 1)
            digits = 2 if accuracy else 3
            std = values.std(ddof=1) if len(values) > 1 else 0.0
            cells.append(
                "undef." if values.empty else f"{values.mean():.{digits}f} ± {std:.{digits}f}"
            )
        body.append(cells)
    header = ["run", "n", "seeds", *SPREAD_METRICS.values()]
    return [
        "",
        "### Seed spread",
        "",
        "Mean ± sample std over seeds (accuracy in %: the final one, as the tables, and the best "
        "of each run's evaluations, selected on the test set) of the baseline and the default "
        "configuration: how much one "
        "configuration moves between seeds. No claim borrows this spread: each comparison uses "
        "its two cells' own seeds.",
        "",
        *markdown.table(header, body),
    ]


def _cadence(frame: pd.DataFrame, profile: str) -> str:
    """How often the profile's records evaluated (their configs' `profile.eval_every`), read
    from the record files; the best accuracy is the best of those evaluations."""
    if frame.empty:
        return "no records"
    paths = frame.loc[frame["profile"] == profile, "path"].dropna()
    every: dict[int, int] = {}
    for path in paths:
        config = read_json(path).get("config") or {}
        step = (config.get("profile") or {}).get("eval_every")
        if step is not None:
            every[int(step)] = every.get(int(step), 0) + 1
    if not every:
        return "no records"
    return ", ".join(f"every {k:,} steps ({n} records)" for k, n in sorted(every.items()))


def _index_row(name: str, table: Table, r: Rendered) -> list[str]:
    """One row of the index (INDEX_HEADER's cells)."""
    records = table.records
    ok = int((records["status"] == "ok").sum())
    seeds = sorted(records["seed"].dropna().astype(int).unique().tolist())
    finished = records["finished"].dropna().astype(str).sort_values()
    span = f"{finished.iloc[0][:10]} .. {finished.iloc[-1][:10]}" if len(finished) else "-"
    wall = records["wall_time_s"].sum()
    commits = ", ".join(f"`{c[:10]}`" for c in table.commits()) or "-"
    if table.mixed_commits:
        commits += " (WARNING: mixed in a cell)"
    a = r.agreements[name]
    rho = a.spearman["accuracy"]
    return [
        f"[{name}]({name}.md) ([tex]({name}.tex))",
        f"{len(records)} ({ok})",
        ", ".join(map(str, seeds)) or "-",
        commits,
        span,
        f"{wall / 60:.1f} min",
        Agreement.share(a.accuracy_within),
        Agreement.share(a.ratio_within),
        "-" if rho is None else f"{rho:+.2f}",
    ]


def _write(path: Path, text: str) -> Path:
    """Write a table's text file: new, or one a rendering wrote (`outputs.RENDERED`)."""
    return outputs.write_text(path, text, outputs.RENDERED[path.suffix])
