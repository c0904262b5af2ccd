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


def report(results: dict[str, Any]) -> str:
    """The session's figures and targets (met / not met) as Markdown."""

    def fmt(value: Any, digits: int = 3) -> str:
        return "n/a" if value is None else f"{value:.{digits}g}"

    def met(ok: bool | None) -> str:
        return "n/a" if ok is None else ("met" if ok else "**not met**")

    m = results["machine"]
    lines = [
        "# GPU session",
        "",
        f"{m['device']}, torch {m['torch']} (CUDA {m['cuda']}), {m['cpu_count']} CPU cores, "
        f"git commit {m['git_commit']}; `python -m campaign.bench.cuda_session` "
        "(`make gpu-session`), all figures from this one session.",
        "",
    ]
    rep, plan, one, tab = (
        results.get("reproduce", {}),
        results.get("seed_plan", {}),
        results.get("single", {}),
        results.get("table", {}),
    )
    per_it = rep.get("ms_per_run_iteration")
    whole = None if per_it is None else per_it * TABLES_LONG_RUN_ITERATIONS / 60000
    graph_ms = (one.get("graph") or {}).get("ms_per_iteration")
    stack = results.get("stack_timing", {})

    def speedup16(graph: str, compiled: str) -> tuple[float | None, str]:
        """The better 16-run speed-up of two stacking variants, and which it is (` (...)`)."""
        found = [
            (r["speedup"], f" ({label})")
            for key, label in ((graph, "graph"), (compiled, "graph + compiled DFL"))
            for r in (stack.get(key) or {}).get("rows", [])
            if r["runs"] == 16
        ]
        return max(found, default=(None, ""))

    seeds16, seeds_how = speedup16("captured", "compiled")
    rows16, rows_how = speedup16("table", "table_compiled")
    targets = [
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
    lines += markdown.table(["target", "wanted", "measured", ""], targets)
    check = results.get("graph_vs_eager", {})
    lines += ["", "## Graph, eager and alone (one stacked sweep, 4 seeds)", ""]
    if "graph" in check:
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
        lines += [
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
    else:
        lines.append(f"not run: {check.get('error')}")
    lines += [
        "",
        "## Stacked against separate runs (`bench.stack_timing`, one stacked iteration)",
        "",
    ]
    stack_rows = []
    variants = (
        ("seeds, graph", "captured"),
        ("seeds, graph + compiled DFL", "compiled"),
        ("seeds, eager", "eager"),
        (f"{TABLE} rows, graph", "table"),
        (f"{TABLE} rows, graph + compiled DFL", "table_compiled"),
    )
    for label, key in variants:
        for r in (stack.get(key) or {}).get("rows", []):
            stack_rows.append(
                (
                    label,
                    r["runs"],
                    fmt(r["stack"]["median_ms"]),
                    fmt(r["stack"]["median_ms"] / r["runs"]),
                    fmt(r["separate"]["median_ms"]),
                    fmt(r["speedup"]),
                )
            )
    lines += markdown.table(
        ["stack", "R", "stacked ms", "ms per run-iteration", "R separate ms", "speed-up"],
        stack_rows,
    )
    lines += ["", "## Commands", ""]
    lines += markdown.table(
        ["what", "wall", "ms per run-iteration"],
        [
            (
                "`python -m dfl_bench trainer=gpu` (quick), CUDA graph",
                fmt((one.get("graph") or {}).get("wall_s")),
                fmt(graph_ms),
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
                fmt(per_it),
            ),
            (
                f"`seed_plan run --device gpu`: {plan.get('ok')} records ok, "
                f"{plan.get('trained_run_iterations')} run-iterations trained",
                fmt(plan.get("wall_s")),
                fmt(plan.get("ms_per_run_iteration")),
            ),
        ],
    )
    return "\n".join(lines) + "\n"
