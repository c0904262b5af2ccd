"""`python -m dfl_bench.results` (= make tables): the paper's tables from existing records."""

from __future__ import annotations

import argparse
import shlex
import sys
import warnings
from pathlib import Path

from dfl_bench.results import plan, report
from dfl_bench.results.load import RecordWarning, load_records
from dfl_bench.results.paper import load_paper

REPO_DIR = Path(__file__).resolve().parents[2]
PROFILES = tuple(sorted(p.stem for p in (REPO_DIR / "conf" / "profile").glob("*.yaml")))


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    """Command-line options; an unknown table or profile is a one-line error naming the choices."""
    names = list(load_paper().tables)
    parser = argparse.ArgumentParser(prog="python -m dfl_bench.results", description=__doc__)
    parser.add_argument(
        "--records", type=Path, default=Path(plan.RECORDS), help="run records folder"
    )
    parser.add_argument(
        "--out", type=Path, default=Path("results"), help="writes tables/, figures/"
    )
    parser.add_argument("--profile", help=f"one of {list(PROFILES)}; default: every one present")
    parser.add_argument("--tables", help=f"comma-separated experiments; default: all of {names}")
    parser.add_argument("--wandb", action="store_true", help="also log each table to W&B")
    args = parser.parse_args(argv)
    args.names = [n for n in (args.tables or ",".join(names)).split(",") if n]
    unknown = [n for n in args.names if n not in names]
    if unknown:
        parser.error(f"unknown experiment(s) {unknown} in --tables; valid choices: {names}")
    if args.profile is not None and args.profile not in PROFILES:
        parser.error(f"unknown profile {args.profile!r}; valid choices: {list(PROFILES)}")
    return args


def main(argv: list[str] | None = None) -> int:
    """Load the records, render every selected table per profile, print what was written."""
    args = parse_args(argv)
    command = "python -m dfl_bench.results " + shlex.join(sys.argv[1:] if argv is None else argv)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", RecordWarning)
        frame = load_records(args.records)
    for warning in caught:
        print(f"[dfl_bench.results] warning: {warning.message}", file=sys.stderr)
    present = sorted(frame["profile"].dropna().unique())
    profiles = [args.profile] if args.profile else present or ["quick"]
    paper = load_paper()
    results = [report.build(paper, frame, p, args.names, REPO_DIR) for p in profiles]
    written = report.write(results, frame, args.out, command.strip())
    print(
        f"[dfl_bench.results] {len(frame)} records from {args.records} (profiles {present}); "
        f"wrote {len(written)} files under {args.out}/ (index: {args.out / 'tables' / 'README.md'})"
    )
    if args.wandb:
        from dfl_bench.results.wandb_tables import log_tables

        print(f"[dfl_bench.results] W&B: {log_tables(results)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
