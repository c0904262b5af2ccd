"""The frontier's budget per network, decided by the rule conf/experiment/
mnist_addition_budget_nets.yaml declared before its runs (`rule:`): per network, the candidate
with the highest mean final validation accuracy over its seeds; a candidate with fewer steps
whose mean lies within `prefer_fewer_within` points of it is taken instead (the fewest such).
The test split decides nothing here.

The same report applies conf/experiment/mnist_addition_warmup_nets.yaml's rule: its
validation row with the warmup against the budget search's row without it; the warmup is
adopted unless its mean lies more than `within` points below.

`python -m campaign.addition_budget` writes results/addition_budget/README.md from the records;
`--warmup-adopted` only answers the warmup rule (exit 0 adopted, 1 not, 3 seeds missing).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import warnings
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from campaign.rule_runs import counted, declared
from dfl_bench import markdown
from dfl_bench.paths import REPO_DIR
from dfl_bench.results import cell_configs
from dfl_bench.untrusted import UntrustedFile, out_folder, write_text

EXPERIMENT = "mnist_addition_budget_nets"
WARMUP = "mnist_addition_warmup_nets"
OUT = REPO_DIR / "results" / "addition_budget"
ADOPTED, NOT_ADOPTED, PENDING = 0, 1, 3  # --warmup-adopted's exit status


def candidates(
    spec: Mapping[str, Any], values: Mapping[str, Sequence[float]]
) -> dict[str, list[dict[str, Any]]]:
    """Per network, each row with its steps and its seeds' values of the rule's metric (%)."""
    out: dict[str, list[dict[str, Any]]] = {}
    for row, entry in spec["rows"].items():
        net = entry["net"]["name"]
        out.setdefault(net, []).append(
            {"row": row, "steps": entry["steps"], "values": values.get(row, [])}
        )
    return out


def choose(rows: Sequence[Mapping[str, Any]], seeds: int, within: float) -> str | None:
    """The rule on one network's rows: None while a row has fewer than `seeds` values.

    >>> rows = [{"row": "a", "steps": 1, "values": [80.0] * 3},
    ...         {"row": "b", "steps": 2, "values": [79.5] * 3},
    ...         {"row": "c", "steps": 4, "values": [80.9] * 3}]
    >>> choose(rows, 3, 1.0)
    'a'
    >>> choose(rows, 3, 0.5)
    'c'
    """
    if any(len(r["values"]) < seeds for r in rows):
        return None
    top, near = best_and_near(rows, within)
    return min(near, key=lambda r: r["steps"])["row"] if near else top["row"]


def best_and_near(
    rows: Sequence[Mapping[str, Any]], within: float
) -> tuple[Mapping[str, Any], list[Mapping[str, Any]]]:
    """The row of the highest mean and the rows of fewer steps within `within` points of it."""
    mean = {r["row"]: statistics.fmean(r["values"]) for r in rows}
    top = max(rows, key=lambda r: mean[r["row"]])
    near = [
        r for r in rows if r["steps"] < top["steps"] and mean[top["row"]] - mean[r["row"]] <= within
    ]
    return top, near


def records_frame(records_dir: Path) -> Any:
    """The records under `records_dir`, read once (a pandas frame, results.load)."""
    from dfl_bench.results.load import load_records

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return load_records(records_dir)


def validation_values(frame: Any, experiment: str = EXPERIMENT) -> dict[str, list[float]]:
    """Each row's final validation accuracies (%) of the runs in `frame` the experiment's rule
    counts (rule_runs.counted: its row's configuration, the rule's seeds), in seed order."""
    rule = declared(experiment)["rule"]
    ok = counted(frame, experiment)
    return {
        str(row): [100 * float(x) for x in group[rule["metric"]].dropna()]
        for row, group in ok.groupby("row")
    }


def warmup_adopted(
    with_it: Sequence[float], without: Sequence[float], seeds: int, within: float
) -> bool | None:
    """The warmup rule: adopted unless its mean lies more than `within` points below the mean
    without it; None while either side has fewer than `seeds` values.

    >>> without = [80.5] * 3
    >>> warmup_adopted([79.5] * 3, without, 3, 1.0), warmup_adopted([79.0] * 3, without, 3, 1.0)
    (True, False)
    """
    if len(with_it) < seeds or len(without) < seeds:
        return None
    return statistics.fmean(with_it) >= statistics.fmean(without) - within


def warmup_lines(frame: Any) -> tuple[list[str], bool | None]:
    """The warmup rule's section of the report, and its answer."""
    rule = declared(WARMUP)["rule"]
    against = rule["against"]
    with_it = validation_values(frame, WARMUP).get(rule["candidate"], [])
    without = validation_values(frame, against["experiment"]).get(against["row"], [])
    answer = warmup_adopted(with_it, without, rule["seeds"], rule["within"])

    def shown(values: Sequence[float]) -> str:
        if len(values) < 2:
            return f"{len(values)} seed(s)"
        return f"{statistics.fmean(values):.2f} ± {statistics.stdev(values):.2f} (n={len(values)})"

    verdict = {None: "not decided yet (seeds missing)", True: "adopted", False: "not adopted"}
    return [
        "## A warmup against the collapse",
        "",
        f"The rule of `conf/experiment/{WARMUP}.yaml`, declared before its runs: `"
        f"{rule['candidate']}` (with a {declared(WARMUP)['optimizer']['warmup']}-step warmup) "
        f"against `{against['experiment']}/{against['row']}` (without), mean final "
        f"`{rule['metric']}` over {rule['seeds']} seeds; the warmup is adopted unless it lies "
        f"more than {rule['within']:g} points below. With it: {shown(with_it)}; without: "
        f"{shown(without)}: **{verdict[answer]}**.",
    ], answer


def report(records_dir: Path) -> str:
    """The README: the declared rule, each candidate's validation accuracy, each choice."""
    spec = declared(EXPERIMENT)
    rule = spec["rule"]
    frame = records_frame(records_dir)
    by_net = candidates(spec, validation_values(frame))
    lines = [
        "# The frontier's budget per network, chosen on a validation split",
        "",
        f"Generated by `python -m campaign.addition_budget` from the records of "
        f"`conf/experiment/{EXPERIMENT}.yaml` (`make addition-budget-nets`; their table: "
        f"`results/tables/{EXPERIMENT}.md`). The rule, declared in that file before its runs: "
        f"per network, the candidate with the highest mean final `{rule['metric']}` over its "
        f"{rule['seeds']} seeds; a candidate with fewer steps whose mean lies within "
        f"{rule['prefer_fewer_within']:g} points of it is taken instead (the fewest such). The "
        "test split decides nothing here.",
        "",
    ]
    rows = []
    for net, options in by_net.items():
        chosen = choose(options, rule["seeds"], rule["prefer_fewer_within"])
        for r in options:
            v = r["values"]
            shown = f"{statistics.fmean(v):.2f} ± {statistics.stdev(v):.2f}" if len(v) > 1 else "-"
            mark = "**chosen**" if r["row"] == chosen else ""
            rows.append([f"`{net}`", f"`{r['row']}`", f"{r['steps']:,}", len(v), shown, mark])
    lines += markdown.table(
        ["net", "candidate", "steps (400 a pass)", "n", "validation accuracy (%)", ""], rows
    )
    warmup, _ = warmup_lines(frame)
    counts = []
    for net, options in by_net.items():
        if all(r["values"] for r in options):
            _, near = best_and_near(options, rule["prefer_fewer_within"])
            names = ", ".join(f"`{r['row']}`" for r in near) or "none"
            counts.append(f"`{net}` {len(near)} ({names})")
    if counts:
        lines += [
            "",
            "Candidates with fewer steps within "
            f"{rule['prefer_fewer_within']:g} points of their network's best: "
            + ", ".join(counts)
            + ". The declaration does not say which of several is taken; `the fewest such` is "
            "this report's reading, and it decides a choice only where a network has two or more.",
        ]
    return "\n".join([*lines, "", *warmup]) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m campaign.addition_budget")
    parser.add_argument("--records-dir", type=Path, default=Path(cell_configs.RECORDS))
    parser.add_argument("--out", type=Path, default=OUT)
    parser.add_argument("--warmup-adopted", action="store_true", help="answer the warmup rule")
    args = parser.parse_args(argv)
    if not args.records_dir.is_dir():
        parser.error(f"--records-dir {args.records_dir} is no folder")
    if args.warmup_adopted:
        lines, answer = warmup_lines(records_frame(args.records_dir))
        print(lines[-1])
        return {True: ADOPTED, False: NOT_ADOPTED, None: PENDING}[answer]
    text = report(args.records_dir)
    try:
        write_text(out_folder(args.out, "README.md") / "README.md", text)
    except UntrustedFile as err:
        print(f"[addition_budget] {err}", file=sys.stderr)
        return 2
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
