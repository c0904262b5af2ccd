"""The seed plan: the seeds per cell that would decide each claim our records leave inconclusive
at `long`, planned from the records and committed before any planned run trains, then trained
exactly (no seeds "until significant").

`python -m campaign.seed_plan plan` (make seed-plan) writes results/seed_plan/: for
each undecided comparison of an inconclusive claim, the seeds per cell that give a power.POWER
chance to decide it (a difference or equivalence within the margin) if the difference and the seed
sds are what the cells show now (their runs that did not collapse), at Holm's first-step level
(ALPHA / the claim's comparisons); at most power.MAX_SEEDS per cell. A claim that no such count
decides is named with the reason. `python -m campaign.seed_plan run` trains exactly
the committed plan (the seeds of 0..n-1 of each planned cell that have no ok record; train.py
resumes cut-off ones), so it can be stopped and started again, from a frozen checkout
(`--repo`) if this one changes; `status` lists the unfinished cells and the training time left.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import threading
import warnings
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass
from datetime import datetime
from pathlib import Path

from campaign import power
from campaign.plan_file import read_plan
from campaign.report import claims
from campaign.seed_plan_readme import readme
from dfl_bench import outputs
from dfl_bench.lifecycle import origin, records
from dfl_bench.lifecycle.file_overrides import refusal
from dfl_bench.lifecycle.preflight import escaped
from dfl_bench.paths import REPO_DIR
from dfl_bench.reproduction import plan
from dfl_bench.results import cell_configs, stats
from dfl_bench.results.cells import Ours
from dfl_bench.untrusted import UntrustedFile, read_json

FOLDER = REPO_DIR / "results" / "seed_plan"
PLAN_FILES = {  # what a seed plan's files carry (its folder, --out, holds them or is new)
    "plan.json": outputs.Mark(b'{\n "profile": ', (b'\n "margins": ',)),  # a top-level key
    "README.md": outputs.generated_by(
        "python -m campaign.seed_plan", "python -m dfl_bench.results.seed_plan", said="Written by"
    ),  # its command whole, or the older name the committed plan names
}
PROFILE = "long"  # the profile whose inconclusive claims the plan decides
KEY_OVERRIDES = {"kb.name": "kb"}  # a table's row key as a command-line override
DEVICES = ("cpu", "gpu")  # either trains a cell's seed to one record (schema.HASHED_AS)
RUN_SETS = {  # how `run` sets what it plans (plan.PLANNED, plan.CELL): an extra override is refused
    "seed": "run trains each cell's seeds of the plan (plan.json), those not yet finished",
    "profile": "run trains at the plan's profile (plan.json)",
    "experiment": "run trains the plan's cells (plan.json)",
    "records_dir": "set the records folder with --records-dir: the one run counts seeds in",
    "logger": "set the logger with --logger",
    "hydra": "the launcher is set with --device, --jobs, --parallel and --stack-size, the sweep "
    f"folders are run's own; only {plan.SEARCH_PATH} may be given",
    plan.CELL: "run trains the plan's cells as planned (plan.json): it takes how a job runs "
    "(threads=, cuda_graph=, compile_dfl=, progress_bar=, force=), the GPU with --device gpu",
}


@dataclass(frozen=True)
class Need:
    """One undecided comparison of a claim: its cells, the difference, the seeds that would
    decide it (None: more than MAX_SEEDS) and the cells' seeds today."""

    claim: str
    cells: tuple[str, ...]
    column: str
    delta: float
    sds: tuple[float, ...]
    have: tuple[int, ...]
    seeds: int | None
    test: str


def _runs(ours: Ours, column: str) -> list[float]:
    """A cell's values of `column` over the runs its comparisons use (stats.kept_runs)."""
    return stats.kept_runs(ours.values.get(column, ()), ours.collapsed.get(column, ()))


def needs(r) -> tuple[list[Need], list[tuple[str, str]]]:
    """Every undecided comparison of the claims inconclusive on ours at `r.profile`, with the
    seeds that would decide it, and the inconclusive claims no seed count can help (reason)."""
    out: list[Need] = []
    aside: list[tuple[str, str]] = []
    for item, _, ours in r.verdicts:
        if ours.status != claims.INCONCLUSIVE:
            continue
        before = r.before_fdr[item.name]
        if before.status != claims.INCONCLUSIVE:
            aside.append(
                (
                    item.name,
                    f"decided ({before.status}) before Benjamini-Hochberg "
                    f"across claims (q = {ours.q:.3f}): not planned",
                )
            )
            continue
        family = ours.comparisons
        own = [n for n in (_need(r, item.name, key, i, len(family)) for key, i in family) if n]
        if not family:
            aside.append((item.name, "a correlation over cells: more seeds add no cell"))
        elif not own:
            aside.append((item.name, "its undecided comparisons compare no two cells' seeds"))
        out += own
    return out, aside


def _need(r, name: str, key: tuple, interval: stats.Interval, m: int) -> Need | None:
    """The seeds one comparison needs (None when it is decided or compares no two cells)."""
    if interval.outcome != 0 or interval.equivalent or key[0] == "against":
        return None
    if key[0] == "interval":
        cells, column = (key[1], key[2]), key[3]
    else:  # a cell against a number the paper states
        cells, column = (key[1],), key[2]
    found = [r.tables[e].ours().get(row) for e, row in cells]
    if any(o is None for o in found):
        return None
    runs = [_runs(o, column) for o in found]
    names = tuple(f"{e}/{row}" for e, row in cells)
    have = tuple(o.n[column] for o in found)
    if any(len(x) < 2 for x in runs):  # a cell of collapses: its rate needs far more seeds
        test = "fewer than 2 runs not collapsed"
        return Need(name, names, column, round(interval.delta, 4), (), have, None, test)
    sds = tuple(statistics.stdev(x) for x in runs)
    margin = claims.MARGINS[column]
    alpha = stats.ALPHA / m
    sd_b = sds[1] if len(sds) > 1 else 0.0
    options = {
        test: power.seeds_needed(sds[0], sd_b, interval.delta, margin, test == "equivalence", alpha)
        for test in ("difference", "equivalence")
    }
    decidable = {t: n for t, n in options.items() if n is not None}
    test = min(decidable, key=decidable.__getitem__) if decidable else ""
    test = test if decidable else f"none within {power.MAX_SEEDS} seeds"
    return Need(
        name,
        names,
        column,
        round(interval.delta, 4),
        tuple(round(s, 4) for s in sds),
        have,
        decidable.get(test),
        test,
    )


def targets(planned: Sequence[Need]) -> dict[str, int]:
    """Seeds per cell: the most any decidable comparison asks of it (never fewer than it has)."""
    out: dict[str, int] = {}
    for need in planned:
        if need.seeds is None:
            continue
        for cell, have in zip(need.cells, need.have, strict=True):
            out[cell] = max(out.get(cell, have), need.seeds, have)
    return dict(sorted((c, n) for c, n in out.items() if n > _have(planned, c)))


def _have(planned: Sequence[Need], cell: str) -> int:
    return max(
        n for need in planned for c, n in zip(need.cells, need.have, strict=True) if c == cell
    )


def row_override(key: str, row: str, own) -> str:
    """The command-line override that selects a table's row as its records spelled it
    (`implication.b0=-1.0`, not `-1`, which could hash as another value)."""
    name = KEY_OVERRIDES.get(key, key)
    for path in own["path"]:
        for override in read_json(path).get("overrides") or ():
            if override.startswith(f"{name}=") and refusal(override) is None:
                return override
    return f"{name}={row}"


def build_plan(records_dir: Path) -> dict:
    """The plan from the records: inputs, every need, each cell's target and the claims set
    aside."""
    from campaign.report.profile_verdicts import decide
    from dfl_bench.results import load_paper, load_records, publish

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        frame = load_records(records_dir)
    paper = load_paper()
    r = decide(publish.build(paper, frame, PROFILE, [], REPO_DIR), paper, frame, REPO_DIR)
    planned, aside = needs(r)
    cells = targets(planned)
    wall, override = {}, {}
    for cell in cells:
        experiment, row = cell.split("/", 1)
        own = r.tables[experiment].own_records(row)
        wall[cell] = float(own["wall_time_s"].mean()) if len(own) else plan.JOB_SECONDS[PROFILE]
        override[cell] = row_override(r.tables[experiment].paper.key, row, own)
    cost = {c: (n - _have(planned, c)) * wall[c] for c, n in cells.items()}
    order = sorted(cells, key=lambda c: (cost[c], c))  # the cheapest cells train first
    return {
        "profile": PROFILE,
        "power": power.POWER,
        "alpha": stats.ALPHA,
        "max_seeds": power.MAX_SEEDS,
        "margins": claims.MARGINS,
        "records": len(frame),
        "cells": {
            c: {"seeds": cells[c], "override": override[c], "wall_time_s": round(wall[c], 1)}
            for c in order
        },
        "needs": [asdict(n) for n in planned],
        "aside": [{"claim": c, "why": why} for c, why in aside],
    }


def commands(
    p: dict,
    finished: dict[str, list[int]],
    args: argparse.Namespace,
    part: tuple[int, int] = (0, 1),
) -> dict[str, list[str] | None]:
    """Each planned cell's Hydra multirun: the seeds of 0..n-1 of its configuration at the
    plan's profile that are not `finished`, of `part` (k, parts): those with seed % parts == k,
    so the parts of a cell never share a seed whenever each starts; None for a part whose seeds
    all are finished (no multirun starts only to skip its jobs). On a GPU the cell's seeds
    train as one stack."""
    k, parts = part
    out: dict[str, list[str] | None] = {}
    for cell, spec in p["cells"].items():
        missing = [s for s in range(spec["seeds"]) if s not in finished[cell] and s % parts == k]
        if not missing:
            out[cell] = None
            continue
        folder = args.sweeps / cell  # its own: cells (and a cell's parts) may start at once
        sweep = folder / f"part{k}" if parts > 1 else folder
        out[cell] = [
            *(sys.executable, "-m", "dfl_bench", "-m"),
            *cell_configs.base_overrides(cell.split("/", 1)[0]),
            spec["override"],
            f"seed={','.join(map(str, missing))}",
            f"profile={p['profile']}",
            f"records_dir={args.records}",
            f"logger={args.logger}",
            "progress_bar=false",
            f"hydra.sweep.dir={sweep}",
            *plan.launcher(args.device, args.jobs, args.stack_size),
            *args.overrides,
        ]
    return out


def planned_jobs(p: dict, records_dir: str | Path) -> list[tuple[str, int, plan.Job]]:
    """(cell, seed, job) of each planned seed 0..n-1 of each cell: its job (of the cell's row,
    where the experiment sweeps rows) found by config hash as train.py finds it (the device is
    not hashed: a seed trained on either device is found at one path)."""
    by_experiment: dict[str, dict[str, dict]] = {}
    for cell, spec in p["cells"].items():
        by_experiment.setdefault(cell.split("/", 1)[0], {})[cell] = spec
    out = []
    for experiment, planned in by_experiment.items():
        n = max(spec["seeds"] for spec in planned.values())
        jobs = plan.plan([experiment], p["profile"], n, records_dir)
        for cell, spec in planned.items():
            own = f"row={cell.split('/', 1)[1]}"  # a job of a row sweep: the cell's row only
            for seed in range(spec["seeds"]):
                wanted = {spec["override"], f"seed={seed}"}
                out += [
                    (cell, seed, job)
                    for job in jobs
                    if wanted <= set(job.overrides)
                    and all(o == own for o in job.overrides if o.startswith("row="))
                ]
    return out


def finished_seeds(p: dict, records_dir: str | Path) -> dict[str, list[int]]:
    """Each planned cell's finished seeds of 0..n-1: those whose run record under `records_dir`
    says ok."""
    return finished_of(p, planned_jobs(p, records_dir))


def finished_of(p: dict, planned: Sequence[tuple[str, int, plan.Job]]) -> dict[str, list[int]]:
    """Each planned cell's seeds among `planned` (planned_jobs) whose record says ok."""
    out: dict[str, list[int]] = {cell: [] for cell in p["cells"]}
    for cell, seed, job in planned:
        if job.done() and seed not in out[cell]:
            out[cell].append(seed)
    return out


def pace(
    p: dict, planned: Sequence[tuple[str, int, plan.Job]], cpu: str, last: int = 10
) -> tuple[float, int] | None:
    """A machine's pace on the plan: the median over the `last` planned runs (of `planned`,
    planned_jobs) it trained (CPU model `cpu`, the latest first) of each run's wall time over
    its cell's recorded one, and how many runs that is; None below three."""
    runs = []
    for cell, _, job in planned:
        record = records.read_record(job.path)
        if record and record["status"] == "ok" and (record.get("machine") or {}).get("cpu") == cpu:
            ratio = float(record["wall_time_s"]) / p["cells"][cell]["wall_time_s"]
            runs.append((record.get("finished") or "", ratio))
    ratios = [ratio for _, ratio in sorted(runs, reverse=True)[:last]]
    return (statistics.median(ratios), len(ratios)) if len(ratios) >= 3 else None


def progress(finished: dict[str, list[int]], p: dict) -> dict[str, tuple[int, int]]:
    """Each planned cell's (finished seeds, planned seeds)."""
    return {cell: (len(finished[cell]), spec["seeds"]) for cell, spec in p["cells"].items()}


def status_lines(
    p: dict, done: dict[str, tuple[int, int]], jobs: int, speed: tuple[float, int] | None = None
) -> list[str]:
    """The unfinished cells and the totals, with the training time left at the cells' recorded
    wall times, `jobs` at a time (`plan.estimate`: at most one per core), and at this machine's
    `speed` (`pace`) where it has one."""
    left = sum(
        plan.estimate(n - k, p["cells"][cell]["wall_time_s"], jobs) for cell, (k, n) in done.items()
    )
    finished = sum(k for k, _ in done.values())
    planned = sum(n for _, n in done.values())
    lines = [f"  {cell}: {k} of {n} seeds" for cell, (k, n) in done.items() if k < n]
    complete = sum(k == n for k, n in done.values())
    here = (
        f"; about {left * speed[0] / 3600:.1f} h at this machine's pace (its last {speed[1]} "
        f"planned runs took {speed[0]:.2f} of their cells' recorded wall times)"
        if speed is not None
        else ""
    )
    lines.append(
        f"[seed_plan] {finished} of {planned} planned runs finished; {complete} of {len(done)} "
        f"cells complete; about {left / 3600:.1f} h of training left at {jobs} job(s){here}"
    )
    return lines


def write_plan(
    out: Path, plan: dict, text: str, marks: dict[str, outputs.Mark] = PLAN_FILES
) -> None:
    """A plan's folder: plan.json (what the runner trains) and README.md (`text`, in words);
    UntrustedFile, nothing written, where the folder or either file is a symbolic link or a
    file this planner did not write (`marks`, PLAN_FILES: a seed plan's; another folder or
    another planner's plan is left as it was)."""
    outputs.folder(out, marks)
    data = json.dumps(records.strict(plan), indent=1, allow_nan=False)
    outputs.write_text(out / "plan.json", data + "\n", marks["plan.json"])
    outputs.write_text(out / "README.md", text, marks["README.md"])


def arguments() -> argparse.ArgumentParser:
    """The command line: an action, run's extra overrides and the options."""
    parser = argparse.ArgumentParser(prog="python -m campaign.seed_plan")
    parser.add_argument("action", nargs="?", choices=("plan", "run", "status"))
    parser.add_argument("overrides", nargs="*", help="run: more overrides of every job")
    parser.add_argument("--records-dir", "--records", dest="records", default=cell_configs.RECORDS)
    parser.add_argument("--out", type=Path, default=FOLDER)
    parser.add_argument("--jobs", type=int, default=1, help="jobs at once on the CPU (joblib)")
    parser.add_argument("--device", choices=DEVICES, default="cpu")
    parser.add_argument("--parallel", type=int, default=1, help="cells at once (for a GPU)")
    parser.add_argument("--stack-size", type=int, default=16, help="runs per stack on a GPU")
    parser.add_argument(
        "--reverse", action="store_true", help="the last cells first (beside a run from the first)"
    )
    parser.add_argument("--logger", default="none")
    parser.add_argument(
        "--repo",
        type=Path,
        default=REPO_DIR,
        help="the checkout whose code trains (default: this one; a relative --records-dir is its "
        "folder); a frozen checkout keeps the training code fixed while this one changes",
    )
    return parser


def make_plan(parser: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    """`plan`: the plan from the records under --records-dir, written to --out."""
    if not Path(args.records).is_dir():
        parser.error(f"--records-dir {args.records} is no folder: a plan is made from records")
    if not any(Path(args.records).glob("*/*.json")):
        parser.error(f"--records-dir {args.records} holds no record: a plan is made from records")
    p = build_plan(Path(args.records))
    try:
        write_plan(args.out, p, readme(p))
    except UntrustedFile as err:
        print(f"[seed_plan] {err}", file=sys.stderr)
        return 2
    print(f"[seed_plan] {len(p['cells'])} cells to train; written to {args.out}")
    return 0


def committed_plan(parser: argparse.ArgumentParser, args: argparse.Namespace) -> tuple[dict, Path]:
    """The plan under --out and the records folder it trains into (a relative --records-dir is
    the --repo checkout's); a usage error where either is missing, one line (exit 2) where the
    plan is unreadable or refused."""
    plan_file = args.out / "plan.json"
    if not plan_file.is_file():
        parser.error(f"no seed plan at {plan_file}; write one with `plan` or name it: --out")
    try:
        p = read_plan(plan_file)
    except (OSError, ValueError) as err:  # a refused file: one line, not the usage block
        parser.exit(2, f"[seed_plan] error: {escaped(' '.join(str(err).split()))}\n")
    records_dir = args.repo / args.records  # a relative one: the checkout's
    if not records_dir.is_dir():
        parser.error(f"--records-dir {records_dir} is no folder: the plan trains into one")
    return p, records_dir


def show_status(p: dict, records_dir: Path, jobs: int) -> int:
    """`status`: the unfinished cells and the time left, at `jobs` at a time."""
    planned = planned_jobs(p, records_dir)  # once for both: it composes every job
    done = progress(finished_of(p, planned), p)
    speed = pace(p, planned, origin.machine()["cpu"])
    print("\n".join(status_lines(p, done, jobs, speed)))
    return 0


def train_plan(p: dict, records_dir: Path, args: argparse.Namespace) -> int:
    """`run`: every planned cell's unfinished seeds, --parallel parts or cells at once, with
    the --repo checkout's code; 1 when a job of a multirun failed."""
    args.sweeps = Path("multirun", "seed_plan", datetime.now().strftime("%Y-%m-%d_%H-%M-%S"))
    order = list(p["cells"])[::-1] if args.reverse else list(p["cells"])
    # On the CPU each cell's seeds come in --parallel parts, so the last cells keep every worker
    # busy (a cell's seeds run one after another); on a GPU a cell's seeds are one stack.
    parts = args.parallel if args.device == "cpu" else 1
    path = [str(args.repo.resolve()), *filter(None, [os.environ.get("PYTHONPATH")])]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(path)}  # that checkout's code first
    composing = threading.Lock()  # Hydra composes in one thread at a time

    def train(item: tuple[str, int]) -> bool:
        """One part of one cell: a multirun of its seeds unfinished when it starts (another run
        of the plan, on another device too, may have trained some since this one began);
        whether a job of it failed."""
        cell, k = item
        one = {**p, "cells": {cell: p["cells"][cell]}}
        with composing:
            command = commands(one, finished_seeds(one, records_dir), args, (k, parts))[cell]
        name = cell if parts == 1 else f"{cell} (part {k + 1} of {parts})"
        if command is None:
            print(f"[seed_plan] {name} finished", flush=True)
            return False
        print(f"[seed_plan] {name}: {' '.join(command[2:])}", flush=True)
        return subprocess.run(command, cwd=args.repo, env=env).returncode != 0

    with ThreadPoolExecutor(args.parallel) as pool:
        failed = sum(pool.map(train, [(cell, k) for cell in order for k in range(parts)]))
    print(f"[seed_plan] done: {len(p['cells'])} cells, {failed} multirun(s) with a failed job")
    return 1 if failed else 0


def main(argv: Sequence[str] | None = None) -> int:
    """`plan` writes the plan; `run` trains exactly it; `status` says how far it is."""
    parser = arguments()
    args = parser.parse_args(argv)
    if args.action is None:
        parser.error("name an action: plan (write the plan), run (train it), status")
    if args.action == "plan":
        return make_plan(parser, args)
    if args.action == "run":
        try:
            plan.check_planned(args.overrides, RUN_SETS)
        except ValueError as err:  # one line, before anything trains
            parser.exit(2, f"[seed_plan] error: {escaped(' '.join(str(err).split()))}\n")
    p, records_dir = committed_plan(parser, args)
    if args.action == "status":
        return show_status(p, records_dir, args.jobs)
    return train_plan(p, records_dir, args)


if __name__ == "__main__":
    raise SystemExit(main())
