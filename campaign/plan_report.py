"""The committed seed plan (results/seed_plan/plan.json) in the write-up: how much of it the
records hold, and its claims beside their verdicts now."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from campaign.plan_file import read_plan
from campaign.report.claims import VERDICTS
from dfl_bench import markdown
from dfl_bench.paths import REPO_DIR

if TYPE_CHECKING:
    from campaign.report.profile_verdicts import Decided

PLAN = REPO_DIR / "results" / "seed_plan" / "plan.json"  # the committed seed plan


def _planned_cells(r: Decided, plan: dict) -> dict[str, tuple[int, int]]:
    """Each planned cell's (planned seeds 0..n-1 with an ok run of its configuration, n)."""
    out = {}
    for cell, spec in plan["cells"].items():
        experiment, row = cell.split("/", 1)
        own = r.tables[experiment].own_records(row)
        trained = len(set(own[own["status"] == "ok"].seed) & set(range(spec["seeds"])))
        out[cell] = (trained, spec["seeds"])
    return out


def _plan_at(r: Decided, plan_file: Path) -> dict | None:
    """The committed seed plan where it is of `r.profile`, else None."""
    if not plan_file.is_file():
        return None
    plan = read_plan(plan_file)  # a file from others: its cells checked, then its needs
    needs = plan.get("needs", [])
    if not isinstance(needs, list) or not all(_a_need(n) for n in needs):
        raise ValueError(
            f"{plan_file}: its needs are no list of {{claim: name (one printable line), seeds: a "
            "count or null, cells: [names]}"
        )
    for key, kind in (("power", (int, float)), ("max_seeds", int)):
        if isinstance(plan.get(key), bool) or not isinstance(plan.get(key), kind):
            raise ValueError(f"{plan_file}: its {key} is no number, got {plan.get(key)!r}")
    return plan if plan["profile"] == r.profile else None


def _a_need(need: object) -> bool:
    """Whether a plan's need has the shape the report reads: its claim, which the write-up
    shows in a code span, one printable line of at most 200 characters with no backtick."""
    return (
        isinstance(need, dict)
        and isinstance(need.get("claim"), str)
        and need["claim"].isprintable()
        and 0 < len(need["claim"]) <= 200
        and "`" not in need["claim"]
        and (need.get("seeds") is None or type(need.get("seeds")) is int)
        and isinstance(need.get("cells"), list)
        and all(isinstance(c, str) for c in need["cells"])
    )


def _claims(plan: dict) -> dict[str, list[dict]]:
    """The plan's claims (inconclusive when it was written), each with its undecided
    comparisons then."""
    needs: dict[str, list[dict]] = {}
    for need in plan.get("needs", []):
        needs.setdefault(need["claim"], []).append(need)
    return needs


def _tally(r: Decided, claims: Sequence[str]) -> str:
    """`2 holds, 0 fails, 34 inconclusive`: the verdicts on ours of `claims` now."""
    now = {item.name: ours.status for item, _, ours in r.verdicts}
    counts = dict.fromkeys(VERDICTS[:-1], 0)
    for claim in claims:
        status = now.get(claim, VERDICTS[-1])
        counts[status] = counts.get(status, 0) + 1
    return ", ".join(f"{n} {s}" for s, n in counts.items())


def progress(r: Decided, plan_file: Path = PLAN) -> str | None:
    """How much of the committed seed plan these records hold (at the plan's profile, else
    None): its planned seeds 0..n-1 of each cell with an ok run of the cell's configuration, and
    the verdicts of its claims now."""
    plan = _plan_at(r, plan_file)
    if plan is None:
        return None
    cells = _planned_cells(r, plan).values()
    done, planned = sum(k for k, _ in cells), sum(n for _, n in cells)
    complete = sum(k == n for k, n in cells)
    claims = _claims(plan)
    return (
        f"the committed seed plan (`results/seed_plan/`): {done} of {planned} planned runs "
        f"trained, {complete} of {len(cells)} cells complete; its {len(claims)} claims now "
        f"{_tally(r, list(claims))}"
        + ("" if done == planned else "; a verdict resting on a cell still training may move")
    )


def outcome(r: Decided, plan_file: Path = PLAN) -> list[str]:
    """The committed seed plan's claims (inconclusive when it was written) beside their verdicts
    now, at the plan's profile ([] elsewhere): for each, how many of its comparisons undecided
    then the plan's power calculation said its seeds would decide, how many of its planned cells
    are complete, and its verdict on ours."""
    plan = _plan_at(r, plan_file)
    if plan is None:
        return []
    cells = _planned_cells(r, plan)
    now = {item.name: ours.status for item, _, ours in r.verdicts}
    needs = _claims(plan)
    rows, expected, decided = [], 0, 0
    for claim, comparisons in needs.items():
        status = now.get(claim, VERDICTS[-1])
        decidable = sum(c["seeds"] is not None for c in comparisons)
        planned = sorted({cell for c in comparisons for cell in c["cells"] if cell in cells})
        complete = sum(cells[cell][0] == cells[cell][1] for cell in planned)
        expected += decidable == len(comparisons)
        decided += decidable == len(comparisons) and status in VERDICTS[:2]
        rows.append(
            [
                f"`{markdown.text(claim)}`",  # text from a file: no HTML, no `|` ending a cell
                f"{decidable} of {len(comparisons)}",
                f"{complete} of {len(planned)}",
                f"{status} (interim + planned seeds)" if status in VERDICTS[:2] else status,
            ]
        )
    header = ["claim", "comparisons the plan would decide", "its planned cells complete", "now"]
    tally = _tally(r, list(needs))
    return [
        f"The seed plan's claims at `{r.profile}` (inconclusive when "
        f"[`seed_plan/README.md`](seed_plan/README.md) was written): {len(needs)}, now {tally}. "
        f"The plan expected to decide every undecided comparison of {expected} of them (each "
        f"at {plan['power']:.0%} power within {plan['max_seeds']} seeds a cell), and {decided} of "
        "those are decided; a claim may be decided with fewer of its comparisons, or stay "
        "inconclusive when its cells' spread is not what their first seeds showed. Each cell's "
        "seed count was set from its interim difference, and its interim and new seeds are "
        "tested together at the nominal level (no alpha spent on the interim look): a verdict "
        "marked `(interim + planned seeds)` carries that design, and its error rate may exceed "
        "the nominal one.",
        "",
        *markdown.table(header, rows),
        "",
    ]
