"""The benchmark report's targets table: each target, what this run measured and whether it is
met (conf/bench/targets.yaml declares them; `targets.meets` decides)."""

from __future__ import annotations

from typing import Any

from campaign.bench.targets import TARGETS, eval_fraction, floor_target, meets
from dfl_bench import markdown

STACK_TARGET_RUNS = 16  # the target: 16 stacked runs at >= 15x 16 separate ones, on a GPU
GPU_TARGETS = (
    "GPU targets are measured by `--device cuda` only: a single run's step with its kernel "
    "launches captured, against the uncaptured step on the same card, and 16 stacked runs at "
    ">= 15x the throughput of 16 separate ones."
)


def target_rows(result: dict[str, Any]) -> list[list[str]]:
    """One row per measured target: what, the measured value, the bound, met or not."""
    rows = []
    for r in result.get("floor", {}).get("rows", []):
        name = floor_target(r["kb"])
        rows.append([f"CLI iteration / bare CNN step, {r['kb']} (1 thread)", name, r["vs_cnn"]])
        if "vs_network" in r:
            what = f"CLI iteration / bare CNN + NTN heads step, {r['kb']} (1 thread)"
            rows.append([what, "cli_vs_network", r["vs_network"]])
    for r in result.get("nets", {}).get("rows", []):
        if f"{r['net']}_vs_paper" in TARGETS:
            what = f"a training step of net={r['net']} / the paper network's (1 thread)"
            rows.append([what, f"{r['net']}_vs_paper", r["vs_paper"]])
    for r in result.get("paper_run", []):
        what = f"real paper-profile run, {r['name']} ({r['torch_threads']} threads), minutes"
        rows.append([what, "paper_run_min", r["wall_time_s"] / 60])
    for r in result.get("iteration", {}).get("ratios", []):
        key = f"{r['kb']}, {r['threads']} thread(s)"
        rows.append(
            [
                f"factorized vs materialized NTN, {key}",
                "speedup_vs_materialized",
                r["speedup_vs_materialized"],
            ]
        )
        rows.append(
            [
                f"metrics on a logging step, {key}",
                "metrics_overhead_logging_step",
                r["metrics_overhead_logging_step"],
            ]
        )
    for f in eval_fraction(result):
        rows.append(
            [
                f"evaluation share of a paper run, {f['kb']} ({f['torch_threads']} "
                "thread(s), extrapolated)",
                "eval_fraction_of_run",
                f["fraction"],
            ]
        )
    timing = result.get("stack_timing", {})
    for r in timing.get("rows", []):
        if r["runs"] == STACK_TARGET_RUNS:
            what = f"{r['runs']} stacked runs vs separate, throughput ({timing['device']})"
            rows.append([what, "stack_throughput", r["speedup"]])
    return [
        [
            what,
            f"{value:.3g}",
            f"{TARGETS[name][0]} {TARGETS[name][1]:g}",
            status(name, value, result),
        ]
        for what, name, value in rows
    ]


def status(name: str, value: float, result: dict[str, Any]) -> str:
    """met / **not met**; the stacking target is a GPU one, only informative on a CPU."""
    if name == "stack_throughput" and result.get("stack_timing", {}).get("device") != "cuda":
        return "GPU target (CPU: measured only)"
    return "met" if meets(name, value) else "**not met**"


def targets_markdown(result: dict[str, Any]) -> list[str]:
    rows = target_rows(result)
    if not rows:
        return []
    out = ["", "## Targets", "", *markdown.table(["what", "measured", "target", ""], rows)]
    if result["machine"]["device"] == "cpu":
        out += ["", GPU_TARGETS]
    return out
