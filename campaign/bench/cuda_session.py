"""One GPU session, prepared on a CPU: the committed seed plan's unfinished seeds while its
budget lasts, else the GPU figures the README and `results/bench/cuda/` state and as much of a
reproduction as the time left allows; its new records packed to bring back.

    python -m campaign.bench.cuda_session --out $OUT --budget 540 --profile long
    python -m campaign.bench.cuda_session --out $OUT --skip seed_plan   # the figures first

Stages, each logged to `<out>/session.log` and summarised in `<out>/session.json` (a stage that
fails is recorded with its error and the session goes on; one that starts with less than
`--reserve` seconds left is skipped):

1. `graph_vs_eager`: one stacked sweep (4 seeds, `--check-steps` steps, metrics every 25) with
   CUDA graphs, with graphs of compiled DFL terms (`compile_dfl`), without graphs, and each
   seed alone: the records' numbers side by side, and the wall times;
2. `seed_plan`: `reproduction.seed_plan run --device gpu` until the budget ends (then SIGTERM:
   running stacks stop; finished records stay): each planned cell's unfinished seeds as one
   stack, `--jobs` cells at once, the last cells first (a CPU run of the plan goes from the
   first); with CUDA graphs if stage 1 agreed. A finished plan ends it at once;
3. `stack_timing`: `bench.stack_timing` on CUDA (R separate single-run steps against R stacked
   steps, captured; seeds of the default configuration and the rows of same_symmetric, each with and
   without compiled DFL terms), per stacked iteration and per run-iteration;
4. `single`: `python -m dfl_bench trainer=gpu` at the quick profile (1,000 iterations), with
   and without CUDA graphs: milliseconds per iteration from the record's wall time;
5. `table`: `+experiment=same_symmetric` (12 rows) at quick as one GPU stack, with and without
   compiled DFL terms (compile time included);
6. `reproduce`: `reproduction.reproduce --device gpu` of every table at `--profile` until the budget
   ends, as stage 2; with CUDA graphs if stage 1 agreed, and with compiled DFL terms if they
   agreed there and made stage 5 faster.

`<out>` ends with five files: session.log, session.json, README.md (`cuda_report.report`),
records.tar.gz (every record the session wrote, paths relative to the repository) and
logs.tar.gz (every command's output and the reproduction's multirun logs).
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tarfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import torch

from campaign.bench import cuda_report
from campaign.bench.cuda_report import TABLE
from dfl_bench import outputs
from dfl_bench.lifecycle import origin, records
from dfl_bench.paths import REPO_DIR
from dfl_bench.schema import CONS_RATIO, CU_ANT, TEST_ACCURACY
from dfl_bench.untrusted import read_json, writer

QUICK_STEPS = 1000
# the reproduction's order when time may not suffice: the seed spread, the main-text tables,
# the appendix, then the tables beyond the paper
ORDER = (
    "default,baseline,aggregation,implications,tnorms,same_symmetric,sum9_symmetric,"
    "symmetric_aggregators,sigmoidal_s,sigmoidal_b0,sgd_implications,formulas,best,"
    "operator_families,mnist_addition,mnist_addition_digits,mnist_addition_frontier,"
    "mnist_addition_frontier_nets,digit_ceiling_nets"
)
GRAPH_TOLERANCE = 0.01  # test accuracy, graph against eager after the check's steps

NO_LOGS = ("logger=none", "progress_bar=false")
OWN = {  # what the files under --out start with (each new, or a session's own)
    "session.log": outputs.Mark(b"== "),
    "session.json": outputs.Mark(b'{\n "machine": '),
    "README.md": outputs.Mark(b"# GPU session"),
    "records.tar.gz": outputs.GZIP,
    "logs.tar.gz": outputs.GZIP,
}


class Session:
    """The session's log, results and deadline."""

    def __init__(self, out: Path, scratch: Path, budget_s: float, device: str) -> None:
        self.out, self.scratch, self.deadline = out, scratch, time.monotonic() + budget_s
        self.trainer = f"trainer={device}"
        self.device = device
        self.results: dict[str, Any] = {"machine": machine()}
        outputs.folder(out, OWN)
        self.log = outputs.writer(out / "session.log", OWN["session.log"], "a")

    def left(self) -> float:
        """Seconds left of the budget."""
        return self.deadline - time.monotonic()

    def say(self, line: str) -> None:
        """One line to the log and stdout."""
        print(line, flush=True)
        self.log.write(line + "\n")
        self.log.flush()

    def stage(self, name: str, run: Callable[[], Any]) -> None:
        """Run one stage; its result (or error) goes into session.json at once."""
        self.say(f"== {name} ({self.left():.0f} s left)")
        tic = time.perf_counter()
        try:
            self.results[name] = run()
        except Exception as err:  # a failed stage is a result; the others still run
            self.results[name] = {"error": f"{type(err).__name__}: {err}"}
        self.results[name + "_wall_s"] = round(time.perf_counter() - tic, 1)
        self.say(json.dumps(self.results[name])[:2000])
        data = json.dumps(self.results, indent=1)
        outputs.write_text(self.out / "session.json", data, OWN["session.json"])

    def cli(self, args: Sequence[str], name: str, timeout: float) -> subprocess.CompletedProcess:
        """`python -m dfl_bench ...` with its output in `<scratch>/<name>.log`."""
        self.scratch.mkdir(parents=True, exist_ok=True)
        with writer(self.scratch / f"{name}.log", "a") as log:  # a log grows in place
            return subprocess.run(
                [sys.executable, "-m", "dfl_bench", *args],
                cwd=REPO_DIR,
                stdout=log,
                stderr=subprocess.STDOUT,
                timeout=timeout,
            )


def machine() -> dict[str, Any]:
    """The device and software the figures were measured on."""
    cuda = torch.cuda.is_available()
    return {
        "device": torch.cuda.get_device_name() if cuda else "cpu",
        "torch": torch.__version__,
        "cuda": torch.version.cuda,
        "git_commit": origin.git_commit(REPO_DIR),
        "cpu_count": os.cpu_count(),
    }


def read_records(folder: Path) -> list[dict[str, Any]]:
    """Every record under `folder`."""
    return [r for p in sorted(folder.rglob("*.json")) if (r := records.read_record(p))]


def graph_vs_eager(session: Session, steps: int) -> dict[str, Any]:
    """One stacked sweep (4 seeds) with CUDA graphs, without, and each seed in a stack of its
    own (the tolerance of a stacked run against the run alone): records and wall times."""
    variants = {
        "graph": ("cuda_graph=true",),
        "compiled": ("cuda_graph=true", "compile_dfl=true"),
        "eager": ("cuda_graph=false",),
        "alone": ("cuda_graph=true", "hydra.launcher.stack_size=1"),
    }
    out: dict[str, Any] = {"steps": steps}
    for name, extra in variants.items():
        folder = session.scratch / f"check_{name}"
        tic = time.perf_counter()
        done = session.cli(
            [
                *("-m", "seed=0,1,2,3", "hydra/launcher=stack", session.trainer, *NO_LOGS),
                *(f"profile.max_steps={steps}", "profile.log_every=25", "profile.eval_every=100"),
                *(*extra, f"records_dir={folder}/records"),
                *(f"checkpoint_dir={folder}/ckpt", f"hydra.sweep.dir={folder}/sweep"),
            ],
            f"check_{name}",
            timeout=300,
        )
        got = sorted(read_records(folder / "records"), key=lambda r: r["seed"])
        out[name] = {
            "exit": done.returncode,
            "wall_s": round(time.perf_counter() - tic, 1),
            "stack_wall_s": got[0]["wall_time_s"] if got else None,
            "runs": [
                {k: r.get(k) for k in ("seed", "status", TEST_ACCURACY, CONS_RATIO, CU_ANT)}
                for r in got
            ],
        }
    for other in ("compiled", "eager", "alone"):
        pairs = zip(out["graph"]["runs"], out[other]["runs"], strict=False)
        out[f"max_accuracy_gap_{other}"] = max(
            (abs(a[TEST_ACCURACY] - b[TEST_ACCURACY]) for a, b in pairs if a[TEST_ACCURACY]),
            default=None,
        )
    return out


def graph_ok(check: dict[str, Any] | None, variant: str = "graph") -> bool:
    """Whether the check ran `variant` and it agreed with the eager stack (else the reproduction
    goes without it)."""
    if not check or "error" in check or check.get(variant, {}).get("exit") != 0:
        return False
    gaps = [check.get("max_accuracy_gap_eager")]
    if variant != "graph":
        gaps.append(check.get(f"max_accuracy_gap_{variant}"))
    return all(gap is not None and gap <= GRAPH_TOLERANCE for gap in gaps)


def compile_ok(results: dict[str, Any]) -> bool:
    """Whether compiled DFL terms agreed in stage 1 and made the table stage faster."""
    tab = results.get("table") or {}
    fast, plain = ((tab.get(k) or {}).get("stack_wall_s") for k in ("compiled", "graph"))
    faster = fast is not None and plain is not None and fast < plain
    return graph_ok(results.get("graph_vs_eager"), "compiled") and faster


def stack_timing(runs: Sequence[int], device: str) -> dict[str, Any]:
    """`bench.stack_timing` on the device: captured, captured with compiled DFL terms, eager; seeds
    of one configuration and the rows of same_symmetric."""
    from campaign.bench.stack_timing import stack_throughput

    dev = "cuda" if device == "gpu" else "cpu"
    top = (16,)  # the target's stack size
    return {
        "captured": stack_throughput(runs, dev, repeats=20, warmup=3),
        "compiled": stack_throughput(top, dev, repeats=20, warmup=3, compile_dfl=True),
        "eager": stack_throughput(top, dev, repeats=10, warmup=2, graph=False),
        "table": stack_throughput(top, dev, repeats=20, warmup=3, experiment=TABLE),
        "table_compiled": stack_throughput(
            top, dev, repeats=20, warmup=3, experiment=TABLE, compile_dfl=True
        ),
    }


def single(session: Session) -> dict[str, Any]:
    """One run at quick on the GPU, captured and eager: ms per iteration from its record."""
    out = {}
    for graph in (True, False):
        folder = session.scratch / f"single_{graph}"
        done = session.cli(
            [
                *(session.trainer, *NO_LOGS, f"cuda_graph={str(graph).lower()}"),
                *(f"records_dir={folder}/records", f"checkpoint_dir={folder}/ckpt"),
                f"hydra.run.dir={folder}/run",
            ],
            f"single_{graph}",
            timeout=300,
        )
        got = read_records(folder / "records")
        wall = got[0]["wall_time_s"] if got else None
        out["graph" if graph else "eager"] = {
            "exit": done.returncode,
            "wall_s": wall,
            "ms_per_iteration": None if wall is None else 1000 * wall / QUICK_STEPS,
            TEST_ACCURACY: got[0][TEST_ACCURACY] if got else None,
        }
    return out


def table(session: Session) -> dict[str, Any]:
    """same_symmetric (12 rows) at quick as one GPU stack, with CUDA graphs and with graphs of
    compiled DFL terms: wall time per run-iteration (the stack's, compiling included)."""
    out = {}
    for name, compiled in (("graph", False), ("compiled", True)):
        folder = session.scratch / f"table_{name}"
        tic = time.perf_counter()
        done = session.cli(
            [
                *("-m", f"+experiment={TABLE}", "hydra/launcher=stack", session.trainer),
                *(*NO_LOGS, f"records_dir={folder}/records", f"checkpoint_dir={folder}/ckpt"),
                *(f"hydra.sweep.dir={folder}/sweep", f"compile_dfl={str(compiled).lower()}"),
            ],
            f"table_{name}",
            timeout=300,
        )
        got = read_records(folder / "records")
        wall = max((r["wall_time_s"] for r in got), default=None)
        out[name] = {
            "exit": done.returncode,
            "runs": len(got),
            "command_wall_s": round(time.perf_counter() - tic, 1),
            "stack_wall_s": wall,
            "ms_per_run_iteration": None if not got else 1000 * wall / (len(got) * QUICK_STEPS),
        }
    return out


def gpu_overrides(session: Session) -> list[str]:
    """CUDA graphs if `graph_vs_eager` agreed, compiled DFL terms if they agreed there and made
    the `table` stage faster (not yet run: off)."""
    return [
        *([] if graph_ok(session.results.get("graph_vs_eager")) else ["cuda_graph=false"]),
        *(["compile_dfl=true"] if compile_ok(session.results) else []),
    ]


def until_budget(
    session: Session, args: argparse.Namespace, command: list[str], name: str
) -> dict[str, Any]:
    """Run `command` (its output in `<scratch>/<name>.log`) until the budget, less the
    reserve, ends; then SIGTERM to its process group (running jobs checkpoint, finished records
    stay). Its exit status, wall time and the records it wrote."""
    started = time.time()
    session.scratch.mkdir(parents=True, exist_ok=True)
    tic = time.perf_counter()
    with writer(session.scratch / f"{name}.log", "a") as log:  # a log grows in place
        proc = subprocess.Popen(
            command, cwd=REPO_DIR, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
        )
        try:
            code = proc.wait(timeout=max(10.0, session.left() - args.reserve))
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGTERM)
            try:
                code = proc.wait(timeout=args.reserve / 2)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                code = proc.wait()
    wall = time.perf_counter() - tic
    new = new_records(args, started)
    done = [r for p in new if (r := records.read_record(p))]
    trained = [r for r in done if r.get("status") == "ok" and not r.get("reused_from")]
    iterations = sum(r.get("steps") or 0 for r in trained)
    return {
        "exit": code,
        "wall_s": round(wall, 1),
        "records": len(done),
        "ok": sum(r.get("status") == "ok" for r in done),
        "trained_run_iterations": iterations,
        "ms_per_run_iteration": 1000 * wall / iterations if iterations else None,
    }


def new_records(args: argparse.Namespace, since: float) -> list[Path]:
    """The record files under `--records` written since `since` (a time.time())."""
    folder = (REPO_DIR / args.records).resolve()
    return [p for p in sorted(folder.rglob("*.json")) if p.stat().st_mtime >= since]


def pack_records(args: argparse.Namespace, since: float, out: Path) -> int:
    """The session's new records as `<out>/records.tar.gz`, paths relative to the repository
    (or to the records folder's parent); how many."""
    folder = (REPO_DIR / args.records).resolve()
    base = REPO_DIR if folder.is_relative_to(REPO_DIR) else folder.parent
    new = new_records(args, since)
    packed = outputs.writer(out / "records.tar.gz", OWN["records.tar.gz"], "wb")
    with packed, tarfile.open(fileobj=packed, mode="w:gz") as tar:
        for path in new:
            tar.add(path, arcname=str(path.relative_to(base)))
    return len(new)


def seed_plan(session: Session, args: argparse.Namespace) -> dict[str, Any]:
    """The committed seed plan's unfinished seeds on the GPU until the budget ends: each cell's
    seeds as one stack, `--jobs` cells at once, the last cells first (a CPU run of the plan
    goes from the first); a seed trained on either device is finished."""
    overrides = gpu_overrides(session)
    command = [
        *(sys.executable, "-m", "campaign.seed_plan", "run", *overrides),
        *("--device", session.device, "--parallel", str(args.jobs), "--reverse"),
        *("--stack-size", str(args.stack_size), "--records-dir", args.records),
        *("--logger", args.logger),
    ]
    return {"overrides": overrides, **until_budget(session, args, command, "seed_plan")}


def reproduce(session: Session, args: argparse.Namespace) -> dict[str, Any]:
    """The reproduction until the budget ends; then SIGTERM to its process group."""
    overrides = gpu_overrides(session)
    command = [
        *(sys.executable, "-m", "dfl_bench.reproduction.reproduce", "--device", session.device),
        *("--profile", args.profile, "--jobs", str(args.jobs), "--logger", args.logger),
        *("--tables", args.tables, "--records-dir", args.records, "--poll", "30"),
        *("--seeds", str(args.seeds), "--stack-size", str(args.stack_size), *overrides),
    ]
    return {"overrides": overrides, **until_budget(session, args, command, "reproduce")}


def main(argv: Sequence[str] | None = None) -> None:
    """Run the stages (module doc) within `--budget` seconds."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path, required=True, help="folder for what comes back")
    parser.add_argument("--budget", type=float, default=540.0, help="seconds for everything")
    parser.add_argument("--profile", default="long", help="the reproduction's profile")
    parser.add_argument("--tables", default=ORDER, help="the reproduction's tables, in order")
    parser.add_argument("--records", default="results/records", help="relative to the repo")
    parser.add_argument("--jobs", type=int, default=3, help="experiments at once on the GPU")
    parser.add_argument("--seeds", type=int, default=1, help="the reproduction's seeds per row")
    parser.add_argument("--stack-size", type=int, default=64, help="runs per stack")
    parser.add_argument("--logger", default="csv")
    parser.add_argument("--check-steps", type=int, default=200)
    parser.add_argument("--reserve", type=float, default=40.0, help="seconds kept for packing")
    parser.add_argument("--skip", nargs="*", default=[], help="stages to leave out")
    parser.add_argument("--runs", type=int, nargs="+", default=[1, 16, 32], help="stack sizes")
    parser.add_argument("--device", default="gpu", choices=["gpu", "cpu"], help="cpu: a dry run")
    parser.add_argument("--scratch", type=Path, default=Path("/tmp/dfl_session"))
    parser.add_argument("--render", action="store_true", help="only write <out>/README.md")
    args = parser.parse_args(argv)
    if args.render:
        results = read_json(args.out / "session.json")
        outputs.write_text(args.out / "README.md", cuda_report.report(results), OWN["README.md"])
        return
    outputs.checked("cuda_session", args.out, OWN)  # before anything runs
    session = Session(args.out, args.scratch, args.budget, args.device)
    started = time.time()
    stages: dict[str, Callable[[], Any]] = {
        "graph_vs_eager": lambda: graph_vs_eager(session, args.check_steps),
        "seed_plan": lambda: seed_plan(session, args),
        "stack_timing": lambda: stack_timing(args.runs, args.device),
        "single": lambda: single(session),
        "table": lambda: table(session),
        "reproduce": lambda: reproduce(session, args),
    }
    for name, run in stages.items():
        if name in args.skip:
            continue
        if session.left() < args.reserve:  # what is left packs the records and the logs
            session.say(f"== {name}: skipped ({session.left():.0f} s left)")
            continue
        session.stage(name, run)
    page = cuda_report.report(session.results)
    outputs.write_text(args.out / "README.md", page, OWN["README.md"])
    session.say(f"== {pack_records(args, started, args.out)} new records in records.tar.gz")
    logs = outputs.writer(args.out / "logs.tar.gz", OWN["logs.tar.gz"], "wb")
    with logs, tarfile.open(fileobj=logs, mode="w:gz") as tar:  # at most a few files come back
        for log in sorted(args.scratch.glob("*.log")):
            tar.add(log, arcname=log.name)
        if (REPO_DIR / "multirun" / "reproduce").is_dir():
            tar.add(REPO_DIR / "multirun" / "reproduce", arcname="reproduce")
    session.say(f"== done ({session.left():.0f} s left)")


if __name__ == "__main__":
    main()
