"""`python3 scripts/bench.py`: run the benchmark sections and write results/bench/.

Sections (`--sections`, all by default):
  iteration  DFL iteration on same/sum9 (non-logging and logging step) vs the materialized-pairs
             NTN and vs a supervised-only step, interleaved in one process, per thread count;
  scaling    iteration, CNN-only (supervised) step and logic part for b = 16 .. 256;
  eval       one evaluation on the 10k test set;
  paper      two paper-profile CLI runs per problem, extrapolated to 70,000 iterations;
  sweep      joblib sweeps of the quick profile with 1 and 2 parallel jobs.
"""

from __future__ import annotations

import argparse
import platform
import shlex
import sys
import tempfile
from collections.abc import Sequence
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import lightning
import torch

from dfl_bench import records
from dfl_bench.bench import report, runs, steps
from dfl_bench.bench.timing import interleaved, load, loglog_slope, summary_ms
from dfl_bench.train import REPO_DIR

SECTIONS = ("iteration", "scaling", "eval", "paper", "sweep")
PROBLEMS = ("same", "sum9")
MATERIALIZED_EVERY = 5  # the materialized step is ~50x slower: time it in every 5th round


def cpu_model() -> str:
    """The CPU's model name from /proc/cpuinfo (platform's processor string elsewhere)."""
    info = Path("/proc/cpuinfo")
    if info.is_file():
        for line in info.read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    return platform.processor() or "unknown"


def machine(device: torch.device) -> dict[str, Any]:
    """Where and with what the numbers were measured."""
    out = {
        "cpu": cpu_model(),
        "cores": torch.multiprocessing.cpu_count(),
        "device": str(device),
        "torch": torch.__version__,
        "lightning": lightning.__version__,
        "python": platform.python_version(),
        "git_commit": records.git_commit(REPO_DIR),
        "date": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "command": "python3 scripts/bench.py " + shlex.join(sys.argv[1:]),
        "load_average_start": load(),
    }
    if device.type == "cuda":
        out["gpu"] = torch.cuda.get_device_name(device)
    return out


def iteration_section(
    data, b: int, threads: Sequence[int], repeats: int, warmup: int, device: torch.device
) -> dict[str, Any]:
    """Per thread count: every variant timed round-robin in one process; ratios of medians."""
    batches = steps.draw_batches(data, b, 8)
    rows, ratios = [], []
    for n in threads:
        torch.set_num_threads(n)
        fns = {("supervised", "supervised"): steps.build_module("ce_only", steps.NEVER, device)}
        for p in PROBLEMS:
            fns[(p, "dfl")] = steps.build_module(p, steps.NEVER, device)
            fns[(p, "dfl_logging")] = steps.build_module(p, 1, device)
            fns[(p, "materialized")] = steps.materialize(steps.build_module(p, steps.NEVER, device))
        calls = {key: steps.iteration(m, batches) for key, m in fns.items()}
        before = load()
        slow = {key: MATERIALIZED_EVERY for key in calls if key[1] == "materialized"}
        samples = interleaved(calls, repeats, warmup, device, slow)
        medians = {}
        for (problem, variant), secs in samples.items():
            stats = summary_ms(secs)
            medians[problem, variant] = stats["median_ms"]
            rows.append({"threads": n, "problem": problem, "variant": variant, **stats})
        sup = medians["supervised", "supervised"]
        during = [before, load()]
        for p in PROBLEMS:
            dfl = medians[p, "dfl"]
            ratios.append(
                {
                    "threads": n,
                    "problem": p,
                    "speedup_vs_materialized": medians[p, "materialized"] / dfl,
                    "vs_supervised": dfl / sup,
                    "metrics_overhead_logging_step": medians[p, "dfl_logging"] / dfl - 1,
                    "load_average": during,
                }
            )
    return {"batch_size": b, "rows": rows, "ratios": ratios}


def scaling_section(
    data, batch_sizes: Sequence[int], repeats: int, warmup: int, device: torch.device
) -> dict[str, Any]:
    """Iteration, CNN-only step and logic part (same KB) against b; log-log slopes."""
    dfl = steps.build_module("same", steps.NEVER, device)
    sup = steps.build_module("ce_only", steps.NEVER, device)
    rows = []
    for b in batch_sizes:
        batches = steps.draw_batches(data, b, 4)
        calls = {
            "iteration": steps.iteration(dfl, batches),
            "cnn": steps.iteration(sup, batches),
            "logic": steps.logic_part(dfl, batches[0]),
        }
        samples = interleaved(calls, repeats, warmup, device)
        for part, secs in samples.items():
            rows.append({"b": b, "part": part, "pairs": b * b, **summary_ms(secs)})
    slopes = {}
    for part in ("iteration", "cnn", "logic"):
        pts = [(r["b"], r["median_ms"]) for r in rows if r["part"] == part]
        xs, ys = zip(*pts, strict=True)
        slopes[part] = {"all": loglog_slope(xs, ys)}
        if len(xs) >= 3:
            slopes[part]["largest_3"] = loglog_slope(xs[-3:], ys[-3:])
    data.batch_size = 64
    return {"rows": rows, "slopes": slopes, "threads": torch.get_num_threads()}


def eval_section(data, repeats: int, threads: int, device: torch.device) -> dict[str, Any]:
    """One evaluation of the `same` model on the test set (digit and pair accuracy)."""
    torch.set_num_threads(threads)
    module = steps.build_module("same", steps.NEVER, device)
    secs = interleaved({"eval": steps.evaluation(module, data)}, repeats, 1, device)["eval"]
    return {"test_images": len(data.test_y), "threads": threads, **summary_ms(secs)}


def parse(argv: Sequence[str] | None) -> argparse.Namespace:
    """Command-line options."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=REPO_DIR / "results" / "bench")
    parser.add_argument("--device", default="cpu", help="cpu or cuda")
    parser.add_argument("--sections", nargs="+", default=list(SECTIONS), choices=SECTIONS)
    parser.add_argument("--batch-size", type=int, default=64, help="iteration section's b")
    parser.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--repeats", type=int, default=30)
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--batch-sizes", type=int, nargs="+", default=[16, 32, 64, 128, 256])
    parser.add_argument("--paper-slices", type=int, nargs=2, default=[300, 1300])
    parser.add_argument(
        "--paper-threads",
        type=int,
        nargs="+",
        default=[1, 2],
        help="torch threads of the paper runs (the first also times the eval section)",
    )
    parser.add_argument("--sweep-jobs", type=int, default=4)
    parser.add_argument("--sweep-steps", type=int, default=200)
    parser.add_argument("--subset-test", type=int, default=None, help="tests: fewer test images")
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    """Run the chosen sections, write bench.json, README.md and scaling.png under --out."""
    args = parse(argv)
    device = torch.device(args.device)
    if device.type == "cuda" and not torch.cuda.is_available():
        raise ValueError("--device cuda needs a CUDA build of torch and a GPU; valid: cpu, cuda")
    default_threads = torch.get_num_threads()
    result: dict[str, Any] = {"machine": machine(device), "default_threads": default_threads}
    data = steps.load_data(64, device, args.subset_test)
    if "iteration" in args.sections:
        result["iteration"] = iteration_section(
            data, args.batch_size, args.threads, args.repeats, args.warmup, device
        )
    torch.set_num_threads(default_threads)
    if "scaling" in args.sections:
        result["scaling"] = scaling_section(
            data, args.batch_sizes, max(3, args.repeats // 3), args.warmup, device
        )
    if "eval" in args.sections:
        result["eval"] = eval_section(
            data, max(3, args.repeats // 6), args.paper_threads[0], device
        )
        torch.set_num_threads(default_threads)
    extra = ["trainer=gpu"] if device.type == "cuda" else []
    with tempfile.TemporaryDirectory(prefix="dfl_bench_") as tmp:
        if "paper" in args.sections:
            slices = tuple(args.paper_slices)
            result["paper"] = [
                runs.paper_extrapolation(
                    p, slices, Path(tmp) / "paper" / f"{p}_{t}", extra=[*extra, f"threads={t}"]
                )
                for t in args.paper_threads
                for p in PROBLEMS
            ]
        if "sweep" in args.sections:
            result["sweep"] = [
                runs.sweep_throughput(
                    n, args.sweep_jobs, args.sweep_steps, Path(tmp) / f"j{n}", extra=extra
                )
                for n in (1, 2)
            ]
    result["machine"]["load_average_end"] = load()
    report.write(result, args.out)
    return result
