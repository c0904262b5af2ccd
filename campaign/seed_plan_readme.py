"""The seed plan in words (results/seed_plan/README.md, beside its plan.json): the rule that
made it, the cells to train with their runs and hours, the claims it may decide, cannot decide
or sets aside, and every undecided comparison."""

from __future__ import annotations

from dfl_bench import markdown


def runs_to_add(p: dict) -> dict[str, int]:
    """Each planned cell's runs to add: its planned seeds less the most any comparison of it
    has now."""
    return {
        cell: spec["seeds"]
        - max(n["have"][n["cells"].index(cell)] for n in p["needs"] if cell in n["cells"])
        for cell, spec in p["cells"].items()
    }


def rule(p: dict) -> str:
    """How the plan was made and what decides a comparison."""
    return (
        f"Written by `python -m campaign.seed_plan plan` from {p['records']} "
        f"records, before any planned run trained; `python -m campaign.seed_plan "
        f"run` trains exactly it. For each comparison that an inconclusive claim at "
        f"`{p['profile']}` leaves undecided: the seeds per cell that give a {p['power']:.0%} "
        f"chance to decide it (a difference, or equivalence within the margin: "
        + ", ".join(f"{k} ±{v:g}" for k, v in p["margins"].items())
        + f") if its difference and the cells' seed sds are what they show now (runs that "
        f"did not collapse), each test at {p['alpha']:g} / the claim's comparisons (Holm's "
        f"first step); at most {p['max_seeds']} seeds a cell."
    )


def cells_to_train(p: dict, extra: dict[str, int]) -> list[str]:
    """The cells to train, their runs to add (`extra`) and the hours they take, as a table."""
    hours = sum(extra[c] * spec["wall_time_s"] for c, spec in p["cells"].items()) / 3600
    return [
        f"Cells to train: {len(p['cells'])}, {sum(extra.values())} runs, about "
        f"{hours:.1f} h on one thread (each cell's mean wall time per run so far), the "
        "cheapest cells first.",
        "",
        *markdown.table(
            ["cell", "seeds (planned)", "runs to add", "wall time per run (s)"],
            [
                [f"`{c}`", str(s["seeds"]), str(extra[c]), f"{s['wall_time_s']:.0f}"]
                for c, s in p["cells"].items()
            ],
        ),
    ]


def claims_named(p: dict) -> list[str]:
    """The claims the plan may decide, those it cannot and those set aside."""
    undecidable = sorted({n["claim"] for n in p["needs"] if n["seeds"] is None})
    planned = sorted({n["claim"] for n in p["needs"] if n["seeds"] is not None})
    return [
        f"Claims the plan may decide ({len(planned)}): "
        + (", ".join(f"`{c}`" for c in planned) or "none"),
        "",
        f"Claims with a comparison that {p['max_seeds']} seeds a cell cannot decide "
        f"({len(undecidable)}; its difference sits at the margin or is too small for the "
        "noise, or a cell has fewer than 2 runs that did not collapse; each comparison with "
        "its reason below): " + (", ".join(f"`{c}`" for c in undecidable) or "none"),
        "",
        "Claims set aside:",
        "",
        *(f"- `{a['claim']}`: {a['why']}" for a in p["aside"]),
    ]


NEED_COLUMNS = (
    "claim",
    "cells",
    "column",
    "difference",
    "seed sds",
    "seeds now",
    "test",
    "seeds to decide",
)


def needs_table(p: dict) -> list[str]:
    """Every undecided comparison: its cells, difference, seed sds and the seeds that decide it."""
    rows = [
        [
            f"`{n['claim']}`",
            " - ".join(f"`{c}`" for c in n["cells"]),
            n["column"],
            f"{n['delta']:+.3f}",
            ", ".join(f"{s:.3f}" for s in n["sds"]),
            "/".join(map(str, n["have"])),
            n["test"],
            "-" if n["seeds"] is None else str(n["seeds"]),
        ]
        for n in p["needs"]
    ]
    return ["## Every undecided comparison", "", *markdown.table(list(NEED_COLUMNS), rows)]


def readme(p: dict) -> str:
    """The plan in words: the rule, the cells with their seeds and the claims it cannot help."""
    return "\n".join(
        [
            "# The seed plan",
            "",
            rule(p),
            "",
            *cells_to_train(p, runs_to_add(p)),
            "",
            *claims_named(p),
            "",
            *needs_table(p),
            "",
        ]
    )
