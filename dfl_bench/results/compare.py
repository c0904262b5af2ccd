"""`python -m dfl_bench.results.compare`: one table's cells under two settings, side by side.

    python -m dfl_bench.results.compare --a results/records:same_symmetric \
        --b results/scope_comparison/records:same_symmetric --b-set kb.scope=formula \
        --labels family,formula --profile quick --out results/scope_comparison/README.md

Each side is `<records folder>:<table>[,<table>...]` (a paper table, or `default`: the default
configuration, its row `default`) with the overrides its runs took (`--a-set`, `--b-set`). A
row counts the runs of its configuration as its jobs train it with those overrides, one a seed
(ok runs only), whatever their experiment's name; a run of another configuration is left out
and counted. Writes a Markdown table (accuracy %, cons, cu_cons, cu_ant per side and the
difference b - a) and a summary: Spearman rho of a vs b over the rows per column, the mean
absolute difference, and the rows whose accuracy differs by more than one point.
"""

from __future__ import annotations

import argparse
import math
import shlex
import sys
from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from dfl_bench import markdown
from dfl_bench.lifecycle.declared import DECLARED
from dfl_bench.lifecycle.override_gate import setting_refusal
from dfl_bench.lifecycle.records import cell_hash
from dfl_bench.results.agreement import spearman
from dfl_bench.results.cell_configs import DEFAULT, cell_config
from dfl_bench.results.load import load_records, pooled
from dfl_bench.results.paper import COLUMN_FIELDS, load_paper
from dfl_bench.schema import TEST_ACCURACY

# what names a cell (and what an experiment declares: its rows, ...), never a side's setting
CELL_NAMES = ("row", "seed", "profile", "experiment", *DECLARED, "hydra")
COLUMNS = {field: column for column, field in COLUMN_FIELDS.items()}  # record field -> column


def cells(
    records_dir: str | Path, tables: Sequence[str], profile: str, also: Sequence[str] = ()
) -> pd.DataFrame:
    """Mean of each metric per row of `tables` over the ok runs of the row's configuration at
    `profile` with `also` beside (`cell_config`; one a seed, `pooled`), accuracy in %; `n` the
    runs a row counts, and `attrs["left_out"]` the ok runs at `profile` of the experiments
    counted (or named) that no row counts."""
    frame = load_records(records_dir)
    if frame.empty:
        raise ValueError(f"no records under {records_dir}")
    try:
        ok = pd.concat([_table_runs(frame, table, profile, tuple(also)) for table in tables])
    except ValueError as err:
        raise ValueError(f"{records_dir}: {err}") from None
    shared = ok.groupby("row")["table"].nunique() > 1  # a row name two tables give: per table
    ok["row"] = [f"{t}/{r}" if shared[r] else r for t, r in zip(ok.table, ok.row, strict=True)]
    means = ok.groupby("row")[list(COLUMNS)].mean()
    means[TEST_ACCURACY] *= 100
    means["n"] = ok.groupby("row").size()
    mine = frame.experiment.isin({*tables, *ok.experiment}) & (frame.profile == profile)
    means.attrs["left_out"] = int((mine & (frame.status == "ok") & ~frame.path.isin(ok.path)).sum())
    return means


def _table_runs(frame: pd.DataFrame, table: str, profile: str, also: tuple) -> pd.DataFrame:
    """The ok runs each row of `table` counts at `profile` with `also` (`row` set to its row)."""
    known = load_paper().tables
    if table != DEFAULT and table not in known:
        raise ValueError(f"no table {table!r}; choose from {[DEFAULT, *known]}")
    key, rows = (None, [DEFAULT]) if table == DEFAULT else (known[table].key, known[table].keys())
    for line in also:
        name = line.lstrip("+~").split("=", 1)[0]
        if name.split(".")[0] in CELL_NAMES or name in (key, str(key).split(".")[0]):
            raise ValueError(f"{line} names a cell (its table, row, seed or --profile do) or "
                             "what its table declares, not a setting beside the rows")  # fmt: skip
    configs = {row: cell_config(table, profile, key, row, also) for row in rows}
    row = next((r for r, c in configs.items() if c), rows[0])  # the row a job's refusal names
    job = (None, None) if table == DEFAULT else (table, row if key == "row" else None)
    why = setting_refusal(*job, also, configs[row]) if also else None
    if why:
        raise ValueError(f"{list(also)}: {why}")
    if configs[row] is None:
        raise ValueError(f"table {table!r} does not compose at {profile} with {list(also)}")
    runs = [pooled(frame, cell_hash(c), profile, table).assign(row=r, table=table)
            for r, c in configs.items() if c]  # fmt: skip
    ok = pd.concat(runs).query("status == 'ok'")
    if ok.empty:
        raise ValueError(f"no ok {profile} record of table {table!r} with {list(also)}")
    return ok


def _fmt(value: float, column: str) -> str:
    """Accuracy with 2 decimals, ratios with 3; `undef.` for an undefined ratio."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "undef."
    return f"{value:.2f}" if column == TEST_ACCURACY else f"{value:.3f}"


def compare(a: pd.DataFrame, b: pd.DataFrame, labels: Sequence[str]) -> list[str]:
    """The Markdown lines of the side-by-side table and its summary."""
    rows = [r for r in a.index if r in b.index]
    header = ["row", "n"]
    for name in COLUMNS.values():
        header += [f"{name} {labels[0]}", f"{name} {labels[1]}", f"Δ {name}"]
    body = []
    for r in rows:
        line = [r, f"{int(a.n[r])}/{int(b.n[r])}"]
        for column in COLUMNS:
            x, y = a.at[r, column], b.at[r, column]
            diff = y - x if not (math.isnan(x) or math.isnan(y)) else float("nan")
            sign = "" if math.isnan(diff) else "+" if diff >= 0 else ""
            line += [_fmt(x, column), _fmt(y, column), sign + _fmt(diff, column)]
        body.append(line)
    summary = ["", f"Rows in both: {len(rows)} (only in {labels[0]}: "
               f"{sorted(set(a.index) - set(b.index))}; only in {labels[1]}: "
               f"{sorted(set(b.index) - set(a.index))}); left out as of another configuration "
               f"than their row's: {a.attrs.get('left_out', 0)} {labels[0]} and "
               f"{b.attrs.get('left_out', 0)} {labels[1]} runs."]  # fmt: skip
    for column, name in COLUMNS.items():
        pairs = [(a.at[r, column], b.at[r, column]) for r in rows]
        pairs = [(x, y) for x, y in pairs if not (math.isnan(x) or math.isnan(y))]
        rho = spearman([x for x, _ in pairs], [y for _, y in pairs])
        mad = sum(abs(y - x) for x, y in pairs) / len(pairs) if pairs else float("nan")
        summary.append(
            f"- {name}: Spearman rho {labels[0]} vs {labels[1]} "
            f"{'n/a' if rho is None else f'{rho:+.2f}'} over {len(pairs)} rows; mean |Δ| "
            f"{_fmt(mad, column)}"
        )
    moved = [r for r in rows if abs(b.at[r, TEST_ACCURACY] - a.at[r, TEST_ACCURACY]) > 1.0]
    summary.append(f"- rows whose accuracy differs by more than 1 point: {moved or 'none'}")
    return [*markdown.table(header, body), *summary]


def _side(text: str) -> tuple[str, list[str]]:
    """`folder:table[,table...]` -> (folder, tables)."""
    folder, sep, names = text.rpartition(":")
    tables = [e for e in names.split(",") if e]
    if not sep or not folder or not tables:
        raise ValueError(f"expected <records folder>:<table>[,<table>...], got {text!r}")
    return folder, tables


def main(argv: Sequence[str] | None = None) -> int:
    """Write (or print) the comparison; exit 2 with one line on bad input."""
    parser = argparse.ArgumentParser(
        prog="python -m dfl_bench.results.compare", description=__doc__
    )
    for side in ("a", "b"):
        parser.add_argument(f"--{side}", required=True, help="<records folder>:<table>[,...]")
        parser.add_argument(f"--{side}-set", action="append", default=[], help="KEY=VALUE")
    parser.add_argument("--labels", default="a,b", help="two comma-separated column labels")
    parser.add_argument("--profile", default="quick")
    parser.add_argument("--out", default=None, help="Markdown file (default: print)")
    parser.add_argument("--title", default=None, help="heading of the written file")
    args = parser.parse_args(argv)
    try:
        labels = args.labels.split(",")
        if len(labels) != 2:
            raise ValueError(f"--labels needs two names, got {args.labels!r}")
        a = cells(*_side(args.a), args.profile, args.a_set)
        b = cells(*_side(args.b), args.profile, args.b_set)
    except ValueError as err:
        print(f"[compare] error: {err}", file=sys.stderr)
        return 2
    given = [(k.replace("_", "-"), v) for k, v in vars(args).items() if v is not None]
    given = [(k, w) for k, v in given for w in (v if isinstance(v, list) else [v])]
    command = "python -m dfl_bench.results.compare " + " ".join(
        shlex.quote(f"--{k}={v}") for k, v in given
    )
    lines = [f"# {args.title or 'Comparison'}", "", f"Generated by `{command}`.", "",
             *compare(a, b, labels), ""]  # fmt: skip
    if args.out:
        markdown.write(args.out, "\n".join(lines))
    else:
        print("\n".join(lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
