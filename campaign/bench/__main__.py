"""`python -m campaign.bench`: the speed benchmark, written to results/bench/ (bench.json,
README.md, scaling.png); `python -m campaign.bench time-kb`: each knowledge base's forward and
backward time against the batch size, printed as a Markdown table; `time-families`: every
parametric family's DFL term against the product set's (results/bench/families.md);
`time-ntn`: the iteration with the text's NTN (k = 50) and the authors' code's head (k = 10,
output bias); `count-ops`: the tensor operations (GPU kernels) of one run's loss per table row.

    python -m campaign.bench                                     # every section
    python -m campaign.bench --sections iteration --threads 2 --repeats 50
    python -m campaign.bench time-kb --batch-sizes 64 --repeats 200
    python -m campaign.bench time-families --repeats 30
    python -m campaign.bench time-ntn --threads 1
    python -m campaign.bench count-ops --tables same_symmetric sum9_symmetric
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import torch

from campaign.bench import (
    addition_timing,
    bench_report,
    family_timing,
    kb_timing,
    ntn_timing,
    op_count,
    runs,
    sections,
    stack_timing,
    step_vs_commit,
    steps,
)
from campaign.bench.timing import load
from dfl_bench import outputs
from dfl_bench.paths import REPO_DIR


def parse(argv: Sequence[str] | None) -> argparse.Namespace:
    """Command-line options."""
    parser = argparse.ArgumentParser(prog="python -m campaign.bench", description=__doc__)
    parser.add_argument("--out", type=Path, default=REPO_DIR / "results" / "bench")
    parser.add_argument("--device", default="cpu", help="cpu or cuda")
    parser.add_argument(
        "--sections", nargs="+", default=list(sections.SECTIONS), choices=sections.SECTIONS
    )
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
    parser.add_argument(
        "--floor-slices", type=int, nargs=2, default=[100, 1100], help="floor section's CLI runs"
    )
    parser.add_argument("--floor-reps", type=int, default=2, help="floor section's CLI repeats")
    parser.add_argument(
        "--paper-runs", type=Path, default=runs.PAPER_RUNS, help="records of `make paper-run`"
    )
    parser.add_argument(
        "--stack-runs", type=int, nargs="+", default=[1, 4, 16], help="stack_timing section's R"
    )
    parser.add_argument("--sweep-jobs", type=int, default=4)
    parser.add_argument("--sweep-steps", type=int, default=200)
    parser.add_argument("--subset-test", type=int, default=None, help="tests: fewer test images")
    return parser.parse_args(argv)


def timed_sections(
    args: argparse.Namespace,
    data: Any,
    device: torch.device,
    extra: list[str],
    default_threads: int,
) -> dict[str, Any]:
    """The chosen sections timed in this process (the floor's with its CLI runs), in order,
    each at its own torch threads and the default threads restored after it."""
    out: dict[str, Any] = {}
    if "floor" in args.sections:
        with tempfile.TemporaryDirectory(prefix="dfl_bench_") as tmp:
            out["floor"] = sections.floor_section(
                data,
                tuple(args.floor_slices),
                args.repeats,
                args.warmup,
                device,
                Path(tmp),
                extra,
                args.floor_reps,
            )
        torch.set_num_threads(default_threads)
    if "nets" in args.sections:
        out["nets"] = sections.nets_section(data, args.repeats, args.warmup, device)
        torch.set_num_threads(default_threads)
    if "iteration" in args.sections:
        out["iteration"] = sections.iteration_section(
            data, args.batch_size, args.threads, args.repeats, args.warmup, device
        )
    torch.set_num_threads(default_threads)
    if "stack_timing" in args.sections:
        torch.set_num_threads(1)
        out["stack_timing"] = stack_timing.stack_throughput(
            args.stack_runs, args.device, repeats=max(3, args.repeats // 3), warmup=args.warmup
        )
        torch.set_num_threads(default_threads)
    if "scaling" in args.sections:
        out["scaling"] = sections.scaling_section(
            data, args.batch_sizes, max(3, args.repeats // 3), args.warmup, device
        )
    if "eval" in args.sections:
        out["eval"] = sections.eval_section(
            data, max(3, args.repeats // 6), args.paper_threads[0], device
        )
        torch.set_num_threads(default_threads)
    return out


def run_sections(args: argparse.Namespace, extra: list[str]) -> dict[str, Any]:
    """The chosen sections timed by CLI runs in a scratch folder: the paper profile's
    extrapolation per knowledge base and threads, and a sweep's throughput at 1 and 2 jobs."""
    out: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="dfl_bench_") as tmp:
        if "paper" in args.sections:
            slices = tuple(args.paper_slices)
            out["paper"] = [
                runs.paper_extrapolation(
                    p, slices, Path(tmp) / "paper" / f"{p}_{t}", extra=[*extra, f"threads={t}"]
                )
                for t in args.paper_threads
                for p in sections.KBS
            ]
        if "sweep" in args.sections:
            out["sweep"] = [
                runs.sweep_throughput(
                    n, args.sweep_jobs, args.sweep_steps, Path(tmp) / f"j{n}", extra=extra
                )
                for n in (1, 2)
            ]
    return out


def bench(argv: Sequence[str] | None = None) -> dict[str, Any]:
    """Run the chosen sections, write bench.json, README.md and scaling.png under --out."""
    args = parse(argv)
    outputs.checked("campaign.bench", args.out, bench_report.OWN)  # before anything is timed
    device = torch.device(args.device)
    if device.type == "cuda" and not torch.cuda.is_available():
        raise ValueError("--device cuda needs a CUDA build of torch and a GPU; valid: cpu, cuda")
    default_threads = torch.get_num_threads()
    result: dict[str, Any] = {
        "machine": sections.machine(device),
        "default_threads": default_threads,
    }
    data = steps.load_data(64, device, args.subset_test)
    extra = ["trainer=gpu"] if device.type == "cuda" else []
    result["paper_run"] = runs.paper_run_records(args.paper_runs)
    result |= timed_sections(args, data, device, extra, default_threads)
    result |= run_sections(args, extra)
    result["machine"]["load_average_end"] = load()
    bench_report.write(result, args.out)
    return result


def main(argv: Sequence[str] | None = None) -> None:
    """`time-kb [options]` times the knowledge bases, `time-families` the families' DFL terms,
    `time-addition` the MNIST-addition step per
    image against its digits, `time-ntn [options]` the two NTN heads,
    `count-ops [options]` counts a step's operations, `step-vs-commit --base REV` compares the
    CPU iteration with REV's; anything else runs `bench`."""
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv[:1] == ["time-kb"]:
        kb_timing.main(argv[1:])
    elif argv[:1] == ["time-families"]:
        family_timing.main(argv[1:])
    elif argv[:1] == ["time-addition"]:
        addition_timing.main(argv[1:])
    elif argv[:1] == ["time-ntn"]:
        ntn_timing.main(argv[1:])
    elif argv[:1] == ["count-ops"]:
        op_count.main(argv[1:])
    elif argv[:1] == ["step-vs-commit"]:
        step_vs_commit.main(argv[1:])
    else:
        bench(argv)


if __name__ == "__main__":
    main()
