"""`python -m dfl_bench.reproduction.reproduce`: run every missing job of the paper's tables
(Section 10), then render them (`make reproduce-tables`).

    python -m dfl_bench.reproduction.reproduce --profile quick --tables same_symmetric --seeds 1

Plans every job first (plan.py: each experiment's sweep times the seeds, the record path train.py
will write), prints how many will run and an estimated time, then runs each experiment with
missing jobs as one Hydra multirun (`python -m dfl_bench +experiment=X -m ...`; joblib when
--jobs > 1), polling the records folder for overall progress. With --device gpu every
experiment trains as stacks of runs on the GPU (`hydra/launcher=stack trainer=gpu`), --jobs
experiments at once. Jobs whose record is ok are
skipped, so an interrupted reproduction resumes. A failed job is reported and the rest go on.
Exit status: 0 every planned job ok, 1 some job failed, 2 invalid input.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shlex
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime
from pathlib import Path
from typing import IO

from hydra.errors import HydraException
from omegaconf.errors import OmegaConfBaseException

from dfl_bench.lifecycle import loggers, records
from dfl_bench.lifecycle.lock import AlreadyRunning, held
from dfl_bench.reproduction import plan
from dfl_bench.reproduction.plan import Job
from dfl_bench.results import cell_configs
from dfl_bench.untrusted import writer


def cuda_available() -> bool:
    """Whether torch sees a CUDA device here."""
    import torch

    return torch.cuda.is_available()


class OneLineParser(argparse.ArgumentParser):
    """Bad arguments end in one line saying what is wrong (exit status 2), not a usage block."""

    def error(self, message: str) -> None:  # type: ignore[override]
        raise ValueError(message)


# How a reproduction sets what it plans (plan.PLANNED): an extra override of it is refused.
SETS = {
    "seed": "set the seeds 0..n-1 with --seeds (SEEDS=) and --spread-seeds (SPREAD_SEEDS=)",
    "profile": "set the budget with --profile (PROFILE=), so one profile name means one budget "
    "in the tables",
    "experiment": "choose the experiments with --tables (TABLES=)",
    "records_dir": "set the records folder with --records-dir (RECORDS_DIR=): the one the "
    "reproduction plans, counts and locks",
    "logger": "set the logger with --logger (LOGGER=)",
    "hydra": "the launcher is set with --device, --jobs and --stack-size, the log folder is the "
    f"reproduction's own; only {plan.SEARCH_PATH} may be given",
}


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    """The command line (Makefile: PROFILE, TABLES, SEEDS, SPREAD_SEEDS, JOBS, RECORDS, LOGGER)."""
    parser = OneLineParser(prog="python -m dfl_bench.reproduction.reproduce", description=__doc__)
    parser.add_argument("--profile", default="quick", help="training budget (conf/profile)")
    parser.add_argument("--tables", default="", help="comma-separated experiments; empty = all")
    parser.add_argument("--seeds", type=int, default=1, help="seeds 0..n-1 per table row")
    parser.add_argument(
        "--spread-seeds",
        type=int,
        default=5,
        help="seeds of the baseline and the default configuration (the seed spread)",
    )
    parser.add_argument(
        "--jobs", type=int, default=1, help="jobs at once (joblib); with --device gpu: experiments"
    )
    parser.add_argument("--device", default="cpu", choices=["cpu", "gpu"], help="where jobs train")
    parser.add_argument("--stack-size", type=int, default=64, help="runs per stack on a GPU")
    parser.add_argument(
        "--records-dir",
        "--records",
        dest="records",
        default=cell_configs.RECORDS,
        help="run records folder (the jobs' records_dir)",
    )
    parser.add_argument("--logger", default="wandb", help=f"one of {loggers.choices()}")
    parser.add_argument("--poll", type=float, default=10.0, help="seconds between progress lines")
    parser.add_argument("--out", help="where the tables render (python -m dfl_bench.results --out)")
    parser.add_argument(
        "--no-render", action="store_true", help="train only: leave the tables as they are"
    )
    parser.add_argument("overrides", nargs="*", help="extra Hydra overrides for every job")
    args = parser.parse_args(argv)
    if args.jobs < 1:
        raise ValueError(f"JOBS must be >= 1 (got {args.jobs})")
    if args.stack_size < 1:
        raise ValueError(f"--stack-size must be >= 1 (got {args.stack_size})")
    if args.device == "gpu" and not cuda_available():
        raise ValueError("--device gpu: this machine has no CUDA GPU; use --device cpu")
    if args.logger not in loggers.choices():
        raise ValueError(f"unknown logger {args.logger!r}; valid: {loggers.choices()}")
    plan.check_planned(args.overrides, SETS)
    plan.check_cell_meaning(args.overrides)
    args.names = cell_configs.selected(args.tables)
    if not args.tables.strip():  # every table: those reproduced at another budget stay out
        args.aside = [n for n in args.names if not cell_configs.reproduced_at(n, args.profile)]
        args.names = [n for n in args.names if n not in args.aside]
    else:
        args.aside = []
    plan.check(args.profile, args.seeds, args.spread_seeds)
    return args


def multirun_command(
    experiment: str, args: argparse.Namespace, n_seeds: int, log_dir: Path
) -> list[str]:
    """The Hydra multirun of one experiment: its own sweep times seeds 0..n_seeds-1."""
    return [
        sys.executable,
        "-m",
        "dfl_bench",
        "-m",
        *cell_configs.base_overrides(experiment),
        f"seed={','.join(map(str, range(n_seeds)))}",
        *cell_configs.budget_overrides(experiment, args.profile),
        f"records_dir={args.records}",
        f"logger={args.logger}",
        "progress_bar=false",
        f"hydra.sweep.dir={log_dir / experiment}",
        *plan.launcher(args.device, args.jobs, args.stack_size),
        *args.overrides,
    ]


def duration(seconds: float) -> str:
    """`1h02m`, `3m05s` or `12s`."""
    s = int(round(seconds))
    if s >= 3600:
        return f"{s // 3600}h{s % 3600 // 60:02d}m"
    return f"{s // 60}m{s % 60:02d}s" if s >= 60 else f"{s}s"


class Progress:
    """Overall progress from the records folder: jobs ok / total, elapsed, remaining estimate."""

    def __init__(
        self, jobs: Sequence[Job], seconds_per_job: float, n_jobs: int, device: str = "cpu"
    ) -> None:
        self.jobs, self.n_jobs, self.device = jobs, n_jobs, device
        self.todo = [j for j in jobs if not j.done()]
        self.seconds_per_job = seconds_per_job
        self.start = time.time()
        self.shown: tuple[tuple[int, int], float] = ((-1, -1), 0.0)  # counts, time: last line

    def report(self, every: float | None = None) -> None:
        """Print the line when its counts changed (or `every` s passed, jobs left), each line
        from the counts it is compared by: a record landing mid-line prints it once."""
        counts = self.counts()
        waiting = every is not None and counts[1] < len(self.todo)
        if counts != self.shown[0] or (waiting and time.time() - self.shown[1] >= every):
            say(self.line(counts))
            self.shown = (counts, time.time())

    def counts(self) -> tuple[int, int]:
        """Jobs ok, then those with a record written since the start (ok first: never ok twice)."""
        ok = sum(j.done() for j in self.jobs)
        return ok, sum(j.path.is_file() and j.path.stat().st_mtime >= self.start for j in self.todo)

    def line(self, counts: tuple[int, int] | None = None) -> str:
        """`[reproduce] 37/115 jobs ok (12 new), elapsed 16m40s, ~35m00s left`."""
        ok, ran = counts or self.counts()
        left = len(self.todo) - ran
        elapsed = time.time() - self.start
        if ran:
            remaining = elapsed / ran * left
        else:  # the planned estimate, counting down until the first job ends
            remaining = plan.estimate(left, self.seconds_per_job, self.n_jobs, self.device)
            remaining -= elapsed
        left_text = f"~{duration(remaining)} left" if remaining > 0 else "past the estimate"
        return (
            f"[reproduce] {ok}/{len(self.jobs)} jobs ok ({ran} new), "
            f"elapsed {duration(elapsed)}, {left_text}"
        )


ECHOING = threading.Lock()  # multiruns at once (--device=gpu) print whole lines, never mixed


def say(text: str) -> None:
    """Print one line to stdout now, whole: print writes the text and its newline apart, so
    the threads of multiruns running at once would mix their lines without the lock."""
    with ECHOING:
        print(text, flush=True)


def echo(stream: IO[str], log: IO[str], quiet: threading.Event) -> None:
    """Copy a multirun's output to its log; echo each job's summary line (`[dfl_bench] ...`)
    until `quiet` is set."""
    for line in stream:
        log.write(line)
        log.flush()
        if line.startswith("[dfl_bench] ") and not quiet.is_set():
            say(line.rstrip())


class Interrupted(Exception):
    """SIGTERM or SIGINT (Ctrl-C) reached the reproduction."""

    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


def interrupt(signum: int, frame: object) -> None:
    """Signal handler: stop the reproduction where it is (`Interrupted`)."""
    raise Interrupted(signum)


ORPHAN_GRACE_S = 10.0  # seconds a multirun's leftover processes get after it exited
SIGTERM_BIT = 1 << (signal.SIGTERM - 1)  # in /proc/<pid>/status's signal masks


def group_stopping(pgid: int) -> bool:
    """Whether a process of group `pgid` is still handling the SIGTERM it got: one that catches
    it (a job saving its checkpoint). Not waited for: a zombie (an exited orphan that nothing
    reaps), a process that ignores SIGTERM (a resource tracker) or leaves it to the default
    (an idle joblib worker: its job caught the signal and returned, and it waits for a driver
    that has exited). Without /proc: whether the group exists."""
    stats = list(Path("/proc").glob("[0-9]*/stat"))
    if not stats:
        try:
            os.killpg(pgid, 0)
        except ProcessLookupError:
            return False
        return True
    for stat in stats:
        try:
            state, _, group = stat.read_text().rpartition(")")[2].split()[:3]
            if int(group) == pgid and state != "Z" and catches_sigterm(stat.with_name("status")):
                return True
        except (OSError, ValueError):  # exited meanwhile
            continue
    return False


def catches_sigterm(status: Path) -> bool:
    """Whether the process of `/proc/<pid>/status` has a SIGTERM handler (SigCgt)."""
    for line in status.read_text().splitlines():
        if line.startswith("SigCgt:"):
            return bool(int(line.split()[1], 16) & SIGTERM_BIT)
    return False


def stop_leftovers(pgid: int) -> None:
    """Kill what is left of a stopped multirun's process group once the processes that handle
    SIGTERM finished (ORPHAN_GRACE_S at most): idle joblib workers and resource trackers would
    otherwise hold its output open."""
    deadline = time.monotonic() + ORPHAN_GRACE_S
    while group_stopping(pgid) and time.monotonic() < deadline:
        time.sleep(0.2)
    with contextlib.suppress(ProcessLookupError):
        os.killpg(pgid, signal.SIGKILL)


def run_experiment(
    command: list[str],
    log_path: Path,
    progress: Progress,
    poll: float,
    running: set[subprocess.Popen] | None = None,
) -> int:
    """Run one multirun in its own process group, printing the progress line whenever a job
    finishes (and every minute); on `Interrupted` the whole group gets SIGTERM (each job saves
    its checkpoint) and is waited for, its last words going to the log only. `running` holds
    the multiruns under way (for the main thread to stop those that other threads started)."""
    with writer(log_path, "a") as log:  # a log grows in place: read while it runs, kept if killed
        log.write(" ".join(command) + "\n")
        proc = subprocess.Popen(
            command,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            bufsize=1,
            start_new_session=True,  # a terminal's Ctrl-C reaches this process only
        )
        assert proc.stdout is not None
        if running is not None:
            running.add(proc)
        quiet = threading.Event()
        reader = threading.Thread(target=echo, args=(proc.stdout, log, quiet), daemon=True)
        reader.start()
        try:
            while proc.poll() is None:
                time.sleep(poll)
                progress.report(every=60)
        except Interrupted:
            for signum in (signal.SIGTERM, signal.SIGINT):
                signal.signal(signum, signal.SIG_IGN)
            quiet.set()
            os.killpg(proc.pid, signal.SIGTERM)
            proc.wait()
            stop_leftovers(proc.pid)
            raise
        finally:
            reader.join(timeout=ORPHAN_GRACE_S)
            if running is not None:
                running.discard(proc)
    return proc.returncode


def report_failures(failed: Sequence[Job], logs: dict[str, Path]) -> None:
    """One line per job without an ok record: its experiment, overrides and reason or log."""
    say(f"[reproduce] {len(failed)} job(s) failed:")
    for job in failed:
        record = records.read_record(job.path)
        why = (record or {}).get("reason") or f"no ok record; see {logs[job.experiment]}"
        say(f"  {job.experiment} {' '.join(job.overrides)}: {why}")


def log_folder(parent: Path, now: datetime) -> Path:
    """A new folder `<parent>/<date_time>` for one reproduction's logs and sweeps (`-2`, `-3`,
    ... when another one started in the same second)."""
    stamp, n = now.strftime("%Y-%m-%d_%H-%M-%S"), 1
    while True:
        folder = parent / (stamp if n == 1 else f"{stamp}-{n}")
        try:
            folder.mkdir(parents=True)
            return folder
        except FileExistsError:
            n += 1


def reproduce(args: argparse.Namespace) -> int:
    """Plan, report the plan, run the missing jobs experiment by experiment, report the end."""
    names = args.names
    device = ["trainer=gpu"] if args.device == "gpu" else []  # not hashed: one record either way
    jobs = plan.plan(
        names, args.profile, args.seeds, args.records, args.spread_seeds, [*device, *args.overrides]
    )
    seconds = plan.job_seconds(args.profile, args.records, args.device)
    progress = Progress(jobs, seconds, args.jobs, args.device)
    todo = progress.todo
    print(
        f"[reproduce] profile {args.profile}: {len(names)} experiment(s), {len(jobs)} jobs, "
        f"{len(jobs) - len(todo)} done, {len(todo)} to run ({args.jobs} at a time); "
        f"estimated {duration(plan.estimate(len(todo), seconds, args.jobs, args.device))} "
        f"({seconds:.0f} s per job)",
        flush=True,
    )
    for line in [*plan.aside(args.aside, args.profile), *plan.unusable(jobs, args.records)]:
        say(f"[reproduce] {line}")
    log_dir = log_folder(Path("multirun") / "reproduce", datetime.now()) if todo else Path()
    logs = {name: log_dir / f"{name}.log" for name in names}

    def run(name: str) -> None:
        missing = [j for j in todo if j.experiment == name]
        if not missing:
            return
        n_seeds = plan.n_seeds(name, args.seeds, args.spread_seeds)
        say(
            f"[reproduce] {name}: {plan.why_planned(name, missing, args.profile)}; log {logs[name]}"
        )
        command = multirun_command(name, args, n_seeds, log_dir)
        code = run_experiment(command, logs[name], progress, args.poll, running)
        if code != 0:
            say(f"[reproduce] {name}: the multirun exited with status {code}")

    running: set[subprocess.Popen] = set()
    if args.device == "gpu" and args.jobs > 1:  # a GPU takes several experiments' stacks at once
        pool = ThreadPoolExecutor(args.jobs)
        try:
            list(pool.map(run, names))
        except Interrupted:  # signals reach the main thread: it stops every running multirun
            for signum in (signal.SIGTERM, signal.SIGINT):
                signal.signal(signum, signal.SIG_IGN)
            for proc in list(running):
                os.killpg(proc.pid, signal.SIGTERM)
            pool.shutdown(wait=True, cancel_futures=True)
            raise
        pool.shutdown()
    else:
        for name in names:
            run(name)
    failed = [j for j in todo if not j.done()]
    progress.report()
    if failed:
        report_failures(failed, logs)
        return 1
    say(f"[reproduce] all {len(jobs)} jobs ok; records in {args.records}")
    return 0


def render_tables(args: argparse.Namespace) -> int:
    """Render the tables from the records as `make tables` does (after the jobs, ok or failed)."""
    from dfl_bench.results.__main__ import main as render

    argv = [f"--records-dir={args.records}", *([f"--out={args.out}"] if args.out else [])]
    return render([*argv, *([f"--tables={args.tables}"] if args.tables else [])])


EXIT_BUSY = 3  # another reproduction holds the records folder
RESUME_WITH = "DFL_BENCH_RESUME_WITH"  # the command a caller (make) resumes with, if not this
LOCK = ".reproduce.lock"


class AlreadyReproducing(RuntimeError):
    """Another reproduction writes into the same records folder."""


@contextlib.contextmanager
def reproduction_lock(records_dir: Path) -> Iterator[None]:
    """One reproduction per records folder at a time: an flock on `<records>/.reproduce.lock`
    (it dies with its process) holding the holder's pid and start time; a ValueError where it
    cannot be written (a link, a folder, a folder that cannot be written)."""
    since = f"pid {os.getpid()}, since {datetime.now():%Y-%m-%d %H:%M:%S}"
    try:
        records_dir.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise ValueError(f"--records {records_dir} cannot be written ({err.strerror})") from None
    try:
        with held(records_dir / LOCK, since):
            yield
    except AlreadyRunning as err:  # a lock that cannot be written: invalid input, not a job
        raise ValueError(f"--records-dir {records_dir}: {err}") from None
    except BlockingIOError as err:
        raise AlreadyReproducing(
            f"already running ({err.holder}) into {records_dir}: wait for it, or stop it and "
            "rerun this command to resume"
        ) from None


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point: exit status 0 all ok, 1 some job failed, 2 invalid input (one line), 3
    another reproduction runs into the same records folder, 128 + the signal on SIGTERM or
    Ctrl-C (the running jobs checkpoint; one line says how to resume)."""
    handlers = {s: signal.signal(s, interrupt) for s in (signal.SIGTERM, signal.SIGINT)}
    try:
        args = parse_args(argv)
        with reproduction_lock(Path(args.records)):
            code = reproduce(args)
        return code if code > 1 or args.no_render else max(code, render_tables(args))
    except (ValueError, HydraException, OmegaConfBaseException) as err:
        print(f"[reproduce] error: {str(err).strip().splitlines()[0]}", file=sys.stderr)
        return 2
    except AlreadyReproducing as err:
        print(f"[reproduce] {err}", file=sys.stderr)
        return EXIT_BUSY
    except Interrupted as stop:
        given = sys.argv[1:] if argv is None else list(argv)
        again = os.environ.get(RESUME_WITH) or shlex.join(
            ["python", "-m", "dfl_bench.reproduction.reproduce", *given]
        )
        print(
            f"[reproduce] stopped by {stop}: the running jobs saved checkpoints; resume with "
            f"the same command (finished jobs are skipped): {again}",
            file=sys.stderr,
            flush=True,
        )
        return 128 + stop.signum
    finally:
        for signum, handler in handlers.items():
            signal.signal(signum, handler)


if __name__ == "__main__":
    sys.exit(main())
