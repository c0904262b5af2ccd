"""`python -m dfl_bench.results.compare`: one table's cells under two settings, side by side.

    python -m dfl_bench.results.compare --a results/records:same_symmetric \
        --b results/scope_comparison/records:same_symmetric_formula --labels family,formula \
        --profile quick --out results/scope_comparison/README.md

Each side is `<records folder>:<experiment>[,<experiment>...]`; cells are matched by `row` (a
record without one, the default configuration's, is the row `default`) and
averaged over seeds (ok runs only). Writes a Markdown table (accuracy %, cons, cu_cons, cu_ant
per side and the difference b - a) and a summary: Spearman rho of a vs b over the rows per
column, the mean absolute difference, and the rows whose accuracy differs by more than one point.
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
from dfl_bench.results.agreement import spearman
from dfl_bench.results.load import load_records
from dfl_bench.results.paper import COLUMN_FIELDS
from dfl_bench.schema import TEST_ACCURACY

COLUMNS = {field: column for column, field in COLUMN_FIELDS.items()}  # record field -> column


def cells(records_dir: str | Path, experiments: Sequence[str], profile: str) -> pd.DataFrame:
    """Mean of each metric per row over the ok runs of `experiments` at `profile` (accuracy in
    %); a run without a row is the default configuration's: the row `default`."""
    frame = load_records(records_dir)
    if frame.empty:
        raise ValueError(f"no records under {records_dir}")
    chosen = frame.experiment.isin(experiments) & (frame.profile == profile)
    ok = frame[chosen & (frame.status == "ok")].copy()
    missing = [e for e in experiments if e not in set(ok.experiment)]
    if missing:
        found = sorted(set(frame.experiment.dropna()))
        raise ValueError(
            f"no ok {profile} record of {missing[0]!r} under {records_dir}; has {found}"
        )
    ok["row"] = ok["row"].fillna("default")
    means = ok.groupby("row")[list(COLUMNS)].mean()
    means[TEST_ACCURACY] *= 100
    means["n"] = ok.groupby("row").size()
    return means


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
               f"{sorted(set(b.index) - set(a.index))})."]  # fmt: skip
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
    """`folder:experiment[,experiment...]` -> (folder, experiments)."""
    folder, sep, names = text.rpartition(":")
    experiments = [e for e in names.split(",") if e]
    if not sep or not folder or not experiments:
        raise ValueError(f"expected <records folder>:<experiment>[,<experiment>...], got {text!r}")
    return folder, experiments


def main(argv: Sequence[str] | None = None) -> int:
    """Write (or print) the comparison; exit 2 with one line on bad input."""
    parser = argparse.ArgumentParser(
        prog="python -m dfl_bench.results.compare", description=__doc__
    )
    parser.add_argument("--a", required=True, help="<records folder>:<experiment>[,...]")
    parser.add_argument("--b", required=True, help="<records folder>:<experiment>[,...]")
    parser.add_argument("--labels", default="a,b", help="two comma-separated column labels")
    parser.add_argument("--profile", default="quick")
    parser.add_argument("--out", default=None, help="Markdown file (default: print)")
    parser.add_argument("--title", default=None, help="heading of the written file")
    args = parser.parse_args(argv)
    try:
        labels = args.labels.split(",")
        if len(labels) != 2:
            raise ValueError(f"--labels needs two names, got {args.labels!r}")
        a, b = (cells(*_side(side), args.profile) for side in (args.a, args.b))
    except ValueError as err:
        print(f"[compare] error: {err}", file=sys.stderr)
        return 2
    command = "python -m dfl_bench.results.compare " + " ".join(
        shlex.quote(f"--{k}={v}") for k, v in vars(args).items() if v is not None
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
