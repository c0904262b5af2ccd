"""The GPU session's report (`<out>/README.md`, results/bench/cuda/session/): what each part of
`python -m campaign.bench.cuda_session` measured, in words and tables."""

from __future__ import annotations

from typing import Any

from campaign.bench.targets import meets
from dfl_bench import markdown
from dfl_bench.schema import CU_ANT, TEST_ACCURACY

TABLE = "same_symmetric"  # a table's rows as one stack: different operators
# The GPU targets: every table at long (1.18M run-iterations) in 10 minutes; one run; stacking.
TABLES_LONG_RUN_ITERATIONS = 1_180_000


def fmt(value: Any, digits: int = 3) -> str:
    """A figure to `digits` significant digits; n/a where the session measured none."""
    return "n/a" if value is None else f"{value:.{digits}g}"


def met(ok: bool | None) -> str:
    """A target's verdict: met, **not met**, or n/a where nothing was measured."""
    return "n/a" if ok is None else ("met" if ok else "**not met**")


def speedup16(stack: dict[str, Any], graph: str, compiled: str) -> tuple[float | None, str]:
    """The better 16-run speed-up of two stacking variants of `stack` (the session's
    stack_timing), and which it is (` (...)`)."""
    found = [
        (r["speedup"], f" ({label})")
        for key, label in ((graph, "graph"), (compiled, "graph + compiled DFL"))
        for r in (stack.get(key) or {}).get("rows", [])
        if r["runs"] == 16
    ]
    return max(found, default=(None, ""))


def whole_minutes(per_it: float | None) -> float | None:
    """Every table at long in minutes, at `per_it` ms per run-iteration."""
    return None if per_it is None else per_it * TABLES_LONG_RUN_ITERATIONS / 60000


def heading(m: dict[str, Any]) -> list[str]:
    """The title and the machine `m` the session ran on."""
    return [
        "# GPU session",
        "",
        f"{m['device']}, torch {m['torch']} (CUDA {m['cuda']}), {m['cpu_count']} CPU cores, "
        f"git commit {m['git_commit']}; `python -m campaign.bench.cuda_session` "
        "(`make gpu-session`), all figures from this one session.",
        "",
    ]


def targets(results: dict[str, Any]) -> list[str]:
    """The GPU targets, wanted against measured, as one table."""
    per_it = results.get("reproduce", {}).get("ms_per_run_iteration")
    whole = whole_minutes(per_it)
    graph_ms = (results.get("single", {}).get("graph") or {}).get("ms_per_iteration")
    stack = results.get("stack_timing", {})
    seeds16, seeds_how = speedup16(stack, "captured", "compiled")
    rows16, rows_how = speedup16(stack, "table", "table_compiled")
    rows = [
        (
            "every table at long, per run-iteration (ms)",
            "<= 0.4",
            fmt(per_it),
            met(None if per_it is None else meets("gpu_run_iteration_ms", per_it)),
        ),
        (
            "every table at long, minutes (from the rate)",
            "<= 10",
            fmt(whole),
            met(None if whole is None else whole <= 10),
        ),
        (
            "one run, ms per iteration (quick, CUDA graph)",
            "<= 1.5",
            fmt(graph_ms),
            met(None if graph_ms is None else meets("gpu_single_ms", graph_ms)),
        ),
        (
            f"16 stacked seeds / 16 separate runs, throughput{seeds_how}",
            ">= 15x",
            fmt(seeds16),
            met(None if seeds16 is None else meets("stack_throughput", seeds16)),
        ),
        (
            f"16 stacked rows of {TABLE} / 16 separate runs{rows_how}",
            ">= 15x",
            fmt(rows16),
            met(None if rows16 is None else meets("stack_throughput", rows16)),
        ),
    ]
    return markdown.table(["target", "wanted", "measured", ""], rows)


def graph_check(check: dict[str, Any]) -> list[str]:
    """Graph, compiled, eager and alone on one stacked sweep: each seed's numbers, the gaps."""
    lines = ["", "## Graph, eager and alone (one stacked sweep, 4 seeds)", ""]
    if "graph" not in check:
        return [*lines, f"not run: {check.get('error')}"]
    names = [k for k in ("graph", "compiled", "eager", "alone") if k in check]
    runs = zip(*(check[k]["runs"] for k in names), strict=False)
    lines += markdown.table(
        ["seed", *(f"accuracy: {k}" for k in names), *(f"cu_ant: {k}" for k in names)],
        [
            (
                row[0]["seed"],
                *(fmt(r[TEST_ACCURACY], 5) for r in row),
                *(fmt(r[CU_ANT], 5) for r in row),
            )
            for row in runs
        ],
    )
    return [
        *lines,
        "",
        f"{check['steps']} steps, metrics every 25, evaluation every 100. "
        "graph: one stack of 4 with CUDA graphs; compiled: the same with each run's DFL term "
        "compiled (`compile_dfl=true`); eager: the same stack without graphs; alone: each "
        "seed in a stack of its own (what `trainer=gpu` trains alone). Largest accuracy gap "
        f"to the graph: {fmt(check.get('max_accuracy_gap_compiled'))} (compiled), "
        f"{fmt(check.get('max_accuracy_gap_eager'))} (eager), "
        f"{fmt(check.get('max_accuracy_gap_alone'))} (alone). Stack wall time: "
        + ", ".join(f"{k} {fmt(check[k]['stack_wall_s'])} s" for k in names)
        + ".",
    ]


STACK_VARIANTS = (
    ("seeds, graph", "captured"),
    ("seeds, graph + compiled DFL", "compiled"),
    ("seeds, eager", "eager"),
    (f"{TABLE} rows, graph", "table"),
    (f"{TABLE} rows, graph + compiled DFL", "table_compiled"),
)


def stacked_vs_separate(stack: dict[str, Any]) -> list[str]:
    """Each stacking variant's R stacked runs against R separate ones (bench.stack_timing)."""
    rows = [
        (
            label,
            r["runs"],
            fmt(r["stack"]["median_ms"]),
            fmt(r["stack"]["median_ms"] / r["runs"]),
            fmt(r["separate"]["median_ms"]),
            fmt(r["speedup"]),
        )
        for label, key in STACK_VARIANTS
        for r in (stack.get(key) or {}).get("rows", [])
    ]
    return [
        "",
        "## Stacked against separate runs (`bench.stack_timing`, one stacked iteration)",
        "",
        *markdown.table(
            ["stack", "R", "stacked ms", "ms per run-iteration", "R separate ms", "speed-up"],
            rows,
        ),
    ]


def commands(results: dict[str, Any]) -> list[str]:
    """The session's commands: each one's wall time and its time per run-iteration."""
    rep, plan = results.get("reproduce", {}), results.get("seed_plan", {})
    one, tab = results.get("single", {}), results.get("table", {})
    rows = [
        (
            "`python -m dfl_bench trainer=gpu` (quick), CUDA graph",
            fmt((one.get("graph") or {}).get("wall_s")),
            fmt((one.get("graph") or {}).get("ms_per_iteration")),
        ),
        (
            "the same, `cuda_graph=false`",
            fmt((one.get("eager") or {}).get("wall_s")),
            fmt((one.get("eager") or {}).get("ms_per_iteration")),
        ),
        *(
            (
                f"`+experiment={TABLE}` (12 rows, quick), one stack, {label}",
                fmt((tab.get(key) or {}).get("stack_wall_s")),
                fmt((tab.get(key) or {}).get("ms_per_run_iteration")),
            )
            for label, key in (("graph", "graph"), ("graph + compiled DFL", "compiled"))
        ),
        (
            f"`reproduce --device gpu --profile long`: {rep.get('ok')} records ok, "
            f"{rep.get('trained_run_iterations')} run-iterations trained",
            fmt(rep.get("wall_s")),
            fmt(rep.get("ms_per_run_iteration")),
        ),
        (
            f"`seed_plan run --device gpu`: {plan.get('ok')} records ok, "
            f"{plan.get('trained_run_iterations')} run-iterations trained",
            fmt(plan.get("wall_s")),
            fmt(plan.get("ms_per_run_iteration")),
        ),
    ]
    return ["", "## Commands", "", *markdown.table(["what", "wall", "ms per run-iteration"], rows)]


def report(results: dict[str, Any]) -> str:
    """The session's figures and targets (met / not met) as Markdown."""
    lines = [
        *heading(results["machine"]),
        *targets(results),
        *graph_check(results.get("graph_vs_eager", {})),
        *stacked_vs_separate(results.get("stack_timing", {})),
        *commands(results),
    ]
    return "\n".join(lines) + "\n"
