"""The benchmark's timed sections (`python -m campaign.bench --sections ...`, all by default):

floor        CLI iterations (same, sum9, the w_dfl=0 baseline; 1 thread) against a bare PyTorch
             step of the CNN on the same 128 images and (same, sum9) of the CNN with its NTN
             heads, and where a step's time goes (its parts);
nets         a training step of each digit network of conf/net/ on those 128 images, 1 thread,
             as a ratio to the paper network's, timed round-robin in one process;
iteration    DFL iteration on same/sum9 (non-logging and logging step) vs the materialized-pairs
             NTN and vs a supervised-only step, interleaved in one process, per thread count;
stack_timing R runs as one stacked model (hydra/launcher=stack) vs R separate iterations, 1 thread
             on the CPU (`stack_timing.stack_throughput`);
scaling      iteration, CNN-only (supervised) step and logic part for b = 16 .. 256;
eval         one evaluation on the 10k test set;
paper        two paper-profile CLI runs per knowledge base, extrapolated to 70,000 iterations;
sweep        joblib sweeps of the quick profile with 1 and 2 parallel jobs.
"""

from __future__ import annotations

import platform
import shlex
import statistics
import sys
from collections.abc import Sequence
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import lightning
import torch
from omegaconf import OmegaConf

from campaign.bench import runs, steps
from campaign.bench.timing import interleaved, load, loglog_slope, summary_ms
from dfl_bench.lifecycle import origin
from dfl_bench.paths import CONFIG_DIR, REPO_DIR
from dfl_bench.tasks.mnist.nets import build_net

SECTIONS = ("floor", "nets", "iteration", "stack_timing", "scaling", "eval", "paper", "sweep")
KBS = ("same", "sum9")
FLOOR_KBS = (*KBS, "ce_pair")  # ce_pair: the paper's baseline, w_dfl = 0
MATERIALIZED_EVERY = 5  # the materialized step is far slower: time it in every 5th round


def machine(device: torch.device) -> dict[str, Any]:
    """Where and with what the numbers were measured."""
    out = {
        "cpu": origin.cpu_model(),
        "cores": torch.multiprocessing.cpu_count(),
        "device": str(device),
        "torch": torch.__version__,
        "lightning": lightning.__version__,
        "python": platform.python_version(),
        "git_commit": origin.git_commit(REPO_DIR),
        "date": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "command": shlex.join(["python", "-m", "campaign.bench", *sys.argv[1:]]),
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
        for p in KBS:
            fns[(p, "dfl")] = steps.build_module(p, steps.NEVER, device)
            fns[(p, "dfl_logging")] = steps.build_module(p, 1, device)
            fns[(p, "materialized")] = steps.materialize(steps.build_module(p, steps.NEVER, device))
        calls = {key: steps.iteration(m, batches) for key, m in fns.items()}
        before = load()
        slow = {key: MATERIALIZED_EVERY for key in calls if key[1] == "materialized"}
        samples = interleaved(calls, repeats, warmup, device, slow)
        medians = {}
        for (kb, variant), secs in samples.items():
            stats = summary_ms(secs)
            medians[kb, variant] = stats["median_ms"]
            rows.append({"threads": n, "kb": kb, "variant": variant, **stats})
        sup = medians["supervised", "supervised"]
        during = [before, load()]
        for p in KBS:
            dfl = medians[p, "dfl"]
            ratios.append(
                {
                    "threads": n,
                    "kb": p,
                    "speedup_vs_materialized": medians[p, "materialized"] / dfl,
                    "vs_ce_only": dfl / sup,
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


def nets_section(data, repeats: int, warmup: int, device: torch.device) -> dict[str, Any]:
    """1 thread: a plain training step (`steps.bare_cnn`) of every network of conf/net/,
    interleaved, each as a ratio to the paper network's median."""
    torch.set_num_threads(1)
    batch = steps.draw_batches(data, 64, 1)[0]
    specs = {
        p.stem: OmegaConf.to_container(OmegaConf.load(p))
        for p in sorted((Path(CONFIG_DIR) / "net").glob("*.yaml"))
    }
    built = {name: build_net(spec) for name, spec in specs.items()}
    timed = interleaved(
        {name: steps.bare_cnn(batch, net) for name, net in built.items()}, repeats, warmup, device
    )
    paper = summary_ms(timed["paper"])["median_ms"]
    rows = [
        {
            "net": name,
            "parameters": sum(p.numel() for p in built[name].parameters()),
            **summary_ms(secs),
            "vs_paper": summary_ms(secs)["median_ms"] / paper,
        }
        for name, secs in timed.items()
    ]
    return {"images": 128, "threads": 1, "rows": rows, "load_average_end": load()}


def floor_section(
    data,
    slices: tuple[int, int],
    repeats: int,
    warmup: int,
    device: torch.device,
    workdir: Path,
    extra: Sequence[str] = (),
    reps: int = 2,
) -> dict[str, Any]:
    """1 thread: each FLOOR_KBS run's marginal ms per CLI iteration (two paper-profile slices,
    `runs.paper_extrapolation`, `reps` times round-robin over the knowledge bases; the median)
    over the bare CNN step's median and (KBS) over the bare step of its network
    with the NTN heads (`steps.bare_network`), the floors timed before and after every CLI pair
    (so that load drifts hit both); then each knowledge base's step parts."""
    torch.set_num_threads(1)
    batch = steps.draw_batches(data, 64, 1)[0]
    floors = {"cnn": steps.bare_cnn(batch)}
    for p in KBS:
        floors[p] = steps.bare_network(steps.build_module(p, steps.NEVER, device), batch)
    samples = interleaved(floors, repeats, warmup, device)
    marginal: dict[str, list[float]] = {p: [] for p in FLOOR_KBS}
    for rep in range(reps):
        for p in FLOOR_KBS:
            run = runs.paper_extrapolation(
                p, slices, workdir / f"{p}_{rep}", extra=[*extra, "threads=1"]
            )
            marginal[p].append(run["marginal_ms_per_iteration"])
            for name, secs in interleaved(floors, repeats, 0, device).items():
                samples[name] += secs
    floor = summary_ms(samples["cnn"])
    networks = {p: summary_ms(samples[p]) for p in KBS}
    rows = []
    for p, ms in marginal.items():
        row = {
            "kb": p,
            "cli_ms_per_iteration": statistics.median(ms),
            "cli_ms_per_iteration_reps": ms,
            "vs_cnn": statistics.median(ms) / floor["median_ms"],
            "slices": list(slices),
        }
        if p in networks:
            row["vs_network"] = statistics.median(ms) / networks[p]["median_ms"]
        rows.append(row)
    parts = {}
    for p in FLOOR_KBS:
        module = steps.build_module(p, steps.NEVER, device)
        timed = interleaved(steps.parts(module, batch), repeats, warmup, device)
        parts[p] = {k: summary_ms(v)["median_ms"] for k, v in timed.items()}
    return {
        "cnn_step": floor,
        "network_step": networks,
        "rows": rows,
        "parts": parts,
        "load_average_end": load(),
    }
