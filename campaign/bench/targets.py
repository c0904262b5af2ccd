"""The benchmark's targets and the figures derived from its sections (no timing here)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from omegaconf import OmegaConf

from dfl_bench.paths import CONFIG_DIR

PAPER_PROFILE = OmegaConf.load(Path(CONFIG_DIR) / "profile" / "paper.yaml").profile
TARGETS = {
    "cli_vs_cnn": ("<=", 1.5),
    "cli_vs_network": ("<=", 1.5),  # the CLI iteration over the bare CNN + NTN heads step
    "bn_wide_vs_paper": ("<=", 3.0),  # a training step of net=bn_wide over the paper network's
    "bn_deep_vs_paper": ("<=", 4.0),  # net=bn_deep's over the paper network's
    "baseline_vs_cnn": ("<=", 1.15),
    "speedup_vs_materialized": (">=", 25.0),
    "metrics_overhead_logging_step": ("<=", 0.10),
    "paper_run_min": ("<=", 15.0),
    "eval_fraction_of_run": ("<", 0.01),
    # on a GPU (bench.cuda_session): 16 stacked runs vs 16 separate ones; one run's iteration
    # (ms, CUDA graph); a run-iteration of every table at long (ms; 1.18M of them in 10 min)
    "stack_throughput": (">=", 15.0),
    "gpu_single_ms": ("<=", 1.5),
    "gpu_run_iteration_ms": ("<=", 0.4),
}


def meets(name: str, value: float) -> bool:
    """Whether a measured value meets its target (TARGETS) for `name`."""
    op, bound = TARGETS[name]
    return {">=": value >= bound, "<=": value <= bound, "<": value < bound}[op]


def eval_fraction(result: dict[str, Any]) -> list[dict[str, Any]]:
    """Share of a paper run spent in its test-set evaluations (conf/profile/paper.yaml's
    eval_every; the last step's coincides with the grid), for runs at the eval's threads."""
    if "eval" not in result or "paper" not in result:
        return []
    evals = PAPER_PROFILE.max_steps // PAPER_PROFILE.eval_every
    cost = evals * result["eval"]["median_ms"] / 1000
    return [
        {
            "kb": p["kb"],
            "torch_threads": p["torch_threads"],
            "evaluations": evals,
            "eval_s": cost,
            "fraction": cost / p["extrapolated_run_s"],
        }
        for p in result["paper"]
        if p["torch_threads"] == [result["eval"].get("threads")]
    ]


def mark(name: str, value: float) -> str:
    """yes, or a bold no, for whether `value` meets the target of `name`."""
    return "yes" if meets(name, value) else "**no**"


def checked(name: str, value: float, fmt: str) -> str:
    """A value formatted with `fmt` and whether it meets its target."""
    return f"{fmt.format(value)} ({mark(name, value)})"


def bare_steps(result: dict[str, Any]) -> dict[tuple[int, str], float]:
    """Median ms of the bare non-logging step per (threads, kb), from the iteration section."""
    rows = result.get("iteration", {}).get("rows", [])
    return {(r["threads"], r["kb"]): r["median_ms"] for r in rows if r["variant"] == "dfl"}


def floor_target(kb: str) -> str:
    """The floor section's target for a knowledge base: the w_dfl=0 baseline has its own bound."""
    return "baseline_vs_cnn" if kb == "ce_pair" else "cli_vs_cnn"
