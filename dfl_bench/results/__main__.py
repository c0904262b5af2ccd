"""`python -m dfl_bench.results`: the paper's tables from existing records (`make tables` runs
`python -m campaign`: the same with this repository's report of the paper's claims).

Writes `tables/` and `figures/` under `--out`: by default results/ for the committed
results/records and, for any other records folder, that folder (beside its experiments), never
results/ unless `--out` names it. Exit status: 0 rendered, 2 bad input (no records there, an
unwritable --out).
"""

from __future__ import annotations

import argparse
import shlex
import sys
import warnings
from collections.abc import Sequence
from pathlib import Path

from dfl_bench.lifecycle import guards
from dfl_bench.paths import REPO_DIR
from dfl_bench.results import cell_configs
from dfl_bench.results.paper import load_paper
from dfl_bench.results.report import PLAIN, Report

PROG = "python -m dfl_bench.results"
PROFILES = tuple(sorted(p.stem for p in (REPO_DIR / "conf" / "profile").glob("*.yaml")))


def shown_command(prog: str, argv: Sequence[str]) -> str:
    """The command a rendered file names: `argv` without a `--records-dir` that is the default
    (what `make tables` passes), so rendering the committed records names one command.

    >>> shown_command("python -m campaign", ["--records-dir", "results/records", "--force"])
    'python -m campaign --force'
    >>> shown_command("python -m campaign", ["--records-dir=elsewhere"])
    'python -m campaign --records-dir=elsewhere'
    """
    kept, rest = [], list(argv)
    while rest:
        arg = rest.pop(0)
        flag, _, value = arg.partition("=")
        if flag in ("--records-dir", "--records"):
            if not value and rest:
                value = rest.pop(0)
                arg = f"{arg} {shlex.quote(value)}"
            if value and Path(value) == Path(cell_configs.RECORDS):
                continue
            kept.append(arg)
            continue
        kept.append(shlex.quote(arg))
    return " ".join([prog, *kept])


def parse_args(argv: list[str] | None, prog: str = PROG) -> argparse.Namespace:
    """Command-line options; an unknown table or profile is a one-line error naming the choices."""
    # file names: composes nothing
    shown = [n for n in cell_configs.experiments() if n != cell_configs.DEFAULT]
    parser = argparse.ArgumentParser(prog=prog, description=__doc__)
    parser.add_argument(
        "--records-dir",
        "--records",
        dest="records",
        type=Path,
        default=Path(cell_configs.RECORDS),
        help="run records folder (the jobs' records_dir)",
    )
    parser.add_argument(
        "--out", type=Path, help="writes tables/, figures/ (default: results/ or --records)"
    )
    parser.add_argument("--profile", help=f"one of {list(PROFILES)}; default: every one present")
    parser.add_argument(
        "--tables", help=f"comma-separated experiments; default: all of {shown} (and `default`)"
    )
    parser.add_argument("--wandb", action="store_true", help="also log each table to W&B")
    parser.add_argument(
        "--force",
        action="store_true",
        help="replace a table even where the new rendering holds fewer ok runs in a profile",
    )
    args = parser.parse_args(argv)
    names = list(load_paper().tables)  # composed only once the arguments parse (not for --help)
    chosen = [n for n in (args.tables or ",".join(names)).split(",") if n]
    if not chosen:
        parser.error(f"--tables {args.tables!r} names no experiment; leave it out for all")
    # as `make reproduce-tables TABLES=`, and the searches (their tables render;
    # reproduce-tables trains none of them)
    valid = [*cell_configs.experiments(), *cell_configs.SEARCHES]
    unknown = [n for n in chosen if n not in valid]
    if unknown:
        parser.error(f"unknown experiment(s) {unknown} in --tables; valid choices: {valid}")
    # a name without a paper table (`default`, the seed spread's run) is in the index only
    args.names = [n for n in dict.fromkeys(chosen) if n in names]
    if args.profile is not None and args.profile not in PROFILES:
        parser.error(f"unknown profile {args.profile!r}; valid choices: {list(PROFILES)}")
    return args


def shown(text: str) -> str:
    """`text` with each character that is no printable one (a terminal escape, a newline in a
    folder's name) written as its escape: one line, nothing a terminal would act on."""
    return "".join(c if c.isprintable() else ascii(c)[1:-1] for c in text)


def out_folder(records: Path, out: Path | None) -> Path:
    """Where to render: `out` when named, results/ for the committed results/records, else the
    records folder itself (tables/ and figures/ beside its experiments), never results/."""
    if out is not None:
        return out
    committed = REPO_DIR / cell_configs.RECORDS
    return committed.parent if records.resolve() == committed.resolve() else records


def main(argv: list[str] | None = None, report: Report = PLAIN, prog: str = PROG) -> int:
    """Load the records, render every selected table per profile with `report`'s decisions and
    words (`report.Report`; PLAIN: the tables alone), print what was written; `prog` is the
    command the files name."""
    try:
        args = parse_args(argv, prog)
        return render(args, argv, report, prog)
    except ValueError as err:
        print(f"[dfl_bench.results] error: {err}", file=sys.stderr)
        return 2


def render(
    args: argparse.Namespace, argv: list[str] | None, report: Report = PLAIN, prog: str = PROG
) -> int:
    """`main` on checked arguments: bad input raises ValueError before anything is written."""
    from dfl_bench.results import publish  # pandas, scipy, matplotlib: not for --help
    from dfl_bench.results.load import RecordWarning, load_records

    command = shown_command(prog, sys.argv[1:] if argv is None else argv)
    if not args.records.exists():
        raise ValueError(f"records folder {args.records} does not exist")
    if not args.records.is_dir():
        raise ValueError(f"records folder {args.records} is a file, not a folder")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", RecordWarning)
        frame = load_records(args.records)
    for warning in caught:  # a file's or folder's name from others: its escapes shown, not run
        print(f"[dfl_bench.results] warning: {shown(str(warning.message))}", file=sys.stderr)
    if frame.empty:
        skipped = f" ({len(caught)} file(s) skipped above)" if caught else ""
        raise ValueError(f"{args.records} holds no run record{skipped}")
    args.out = out_folder(args.records, args.out)
    for folder in (args.out, args.out / "tables", args.out / "figures"):
        guards.check_writable(folder, "--out")
    present = sorted(frame["profile"].dropna().unique())
    profiles = [args.profile] if args.profile else present or ["quick"]
    paper = load_paper()
    results = [publish.build(paper, frame, p, args.names, REPO_DIR, report) for p in profiles]
    shared = set(profiles) >= set(present)  # the files that sum every profile need them all
    written, kept = publish.write(
        results, frame, args.out, command.strip(), args.force, shared, report
    )
    print(
        f"[dfl_bench.results] {len(frame)} records from {args.records} (profiles {present}); "
        f"{len(written)} files under {args.out}/, a figure redrawn only when it changed "
        f"(index: {args.out / 'tables' / 'README.md'})"
    )
    if kept:
        print(
            f"[dfl_bench.results] kept {len(kept)} table(s) that the new rendering would empty "
            "out, and the files that sum every table with them (--force replaces them): "
            + "; ".join(kept)
        )
    if not shared:
        print(
            f"[dfl_bench.results] the index and the report's files sum every profile "
            f"({present}): left as they are by a rendering of {profiles} (render without "
            "--profile to rewrite them)"
        )
    if args.wandb:
        from dfl_bench.results.wandb_tables import log_tables

        print(f"[dfl_bench.results] W&B: {log_tables(results)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
