"""Stacked runs against separate runs: R training iterations as one RunsModule of R runs against
R iterations of R RunsModules of one (`bench.steps.iteration`), on the same batches, timed
interleaved in the same process so that their ratio is measured under the same load.

    python -m campaign.bench.stack_timing --device cpu --runs 1 4 16
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable, Sequence
from typing import Any

import lightning as L
import torch
from hydra import compose, initialize_config_dir

from campaign.bench.steps import (
    NEVER,
    Batch,
    build_module,
    draw_batches,
    iteration,
    load_data,
    stack_iteration,
)
from campaign.bench.timing import interleaved, load, summary_ms
from dfl_bench.paths import CONFIG_DIR
from dfl_bench.tasks.contract import stacked
from dfl_bench.training import RunsModule


def table_rows(experiment: str) -> tuple[str, list[tuple[str, ...]]]:
    """The knowledge base of `experiment` (a paper table) and the overrides of each of its rows."""
    with initialize_config_dir(config_dir=str(CONFIG_DIR), version_base="1.3"):
        cfg = compose("config", overrides=[f"+experiment={experiment}"])
    return cfg.kb.name, [(f"+experiment={experiment}", f"row={row}") for row in cfg.rows]


def stack_batch(runs: Sequence[Batch]) -> Batch:
    """The runs' batches of one step as the stack's (R, n, ...) batch."""
    return stacked(runs)


def separate_iterations(
    modules: Sequence[Any], batches: Sequence[Sequence[Batch]]
) -> Callable[[], None]:
    """R single-run iterations per call, one per run (`bench.steps.iteration`), on the same
    batches as `stack_iteration`."""
    steps = [iteration(m, b) for m, b in zip(modules, batches, strict=True)]

    def run() -> None:
        for step in steps:
            step()

    return run


def stack_runs(
    kb: str,
    r: int,
    data: Any,
    batch_size: int,
    n_batches: int,
    variants: Sequence[Sequence[str]] = ((),),
) -> tuple[list[Any], list[list[Batch]]]:
    """R runs of `kb` on the device of `data` (run r: seed r, the overrides `variants[r]`,
    cycled), each with its own initialisation and its `n_batches` batches in its own order."""
    modules, batches = [], []
    for seed in range(r):
        L.seed_everything(seed, verbose=False)
        overrides = [*variants[seed % len(variants)], f"seed={seed}"]
        modules.append(build_module(kb, NEVER, data.train_x.device, overrides))
        data.seed = seed
        batches.append(draw_batches(data, batch_size, n_batches))
    return modules, batches


def stacked_and_separate(
    modules: Sequence[Any],
    batches: Sequence[Sequence[Batch]],
    dev: torch.device,
    repeats: int,
    warmup: int,
    graph: bool,
    compile_dfl: bool,
) -> dict[str, list[float]]:
    """The samples of one stacked iteration of `modules` (one RunsModule; on CUDA the StackNet
    layout, with `graph` a CUDA graph) and of their single-run iterations one after another,
    timed interleaved."""
    cuda = dev.type == "cuda"
    stack = RunsModule(
        modules,
        [None] * len(modules),
        grouped=cuda,
        cuda_graph=cuda and graph,
        compile_dfl=compile_dfl,
    )
    stack = stack.to(dev).train()
    return interleaved(
        {
            "stack": stack_iteration(stack, batches),
            "separate": separate_iterations(modules, batches),
        },
        repeats,
        warmup,
        dev,
    )


def throughput_row(r: int, samples: dict[str, list[float]]) -> dict[str, Any]:
    """One R's row: both summaries, the speed-up and the runs per second of each."""
    together, separate = summary_ms(samples["stack"]), summary_ms(samples["separate"])
    return {
        "runs": r,
        "stack": together,
        "separate": separate,
        "speedup": separate["median_ms"] / together["median_ms"],
        "stack_runs_per_s": 1000.0 * r / together["median_ms"],
        "separate_runs_per_s": 1000.0 * r / separate["median_ms"],
    }


def stack_throughput(
    runs: Sequence[int] = (1, 4, 16),
    device: str = "cpu",
    kb: str = "same",
    batch_size: int = 64,
    repeats: int = 10,
    warmup: int = 2,
    n_batches: int = 4,
    graph: bool = True,
    compile_dfl: bool = False,
    experiment: str | None = None,
) -> dict[str, Any]:
    """Throughput of R stacked runs against R separate runs, for each R in `runs`.

    Returns ``{"device", "threads", "kb", "batch_size", "repeats", "warmup", "load"
    (1/5/15 min load averages), "rows": [{"runs": R, "stack": summary, "separate": summary,
    "speedup", "stack_runs_per_s", "separate_runs_per_s"}, ...]}``, where each summary is
    `timing.summary_ms` of one call (`median_ms`, `q1_ms`, `q3_ms`, `iqr_ms`, `n`): a call is
    one stacked iteration of all R runs, or R single-run iterations one after another; `speedup`
    is the separate median over the stacked median (> 1: stacking is faster), and the runs per
    second are R training iterations (one per run) per median call. R=1 measures the stacking
    overhead only (one RunsModule of one run against another). On CUDA the stack uses the
    StackNet layout and, with `graph`, replays its steps as a CUDA graph (with `compile_dfl`,
    of each run's compiled DFL term; the separate runs then use the compiled terms too). With
    `experiment`, run r is row r of that table (cycled; `kb` is the table's): a stack of
    different operators.
    """
    if experiment is not None:
        kb, variants = table_rows(experiment)
    else:
        variants = [()]
    dev = torch.device(device)
    data = load_data(batch_size, dev)
    rows = []
    for r in runs:
        modules, batches = stack_runs(kb, r, data, batch_size, n_batches, variants)
        samples = stacked_and_separate(modules, batches, dev, repeats, warmup, graph, compile_dfl)
        rows.append(throughput_row(r, samples))
    return {
        "device": str(dev),
        "threads": torch.get_num_threads(),
        "kb": kb,
        "experiment": experiment,
        "compile_dfl": compile_dfl,
        "batch_size": batch_size,
        "repeats": repeats,
        "warmup": warmup,
        "load": load(),
        "rows": rows,
    }


def main(argv: Sequence[str] | None = None) -> None:
    """Print `stack_throughput` as JSON."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--device", default="cpu", choices=["cpu", "cuda"])
    parser.add_argument("--runs", type=int, nargs="+", default=[1, 4, 16])
    parser.add_argument("--kb", default="same")
    parser.add_argument("--experiment", default=None, help="stack this table's rows (cycled)")
    parser.add_argument("--compile-dfl", action="store_true", help="compile each run's DFL term")
    parser.add_argument("--repeats", type=int, default=10)
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args(argv)
    torch.set_num_threads(args.threads)
    result = stack_throughput(
        args.runs,
        args.device,
        args.kb,
        repeats=args.repeats,
        compile_dfl=args.compile_dfl,
        experiment=args.experiment,
    )
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
