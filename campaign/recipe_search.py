"""A recipe chosen per network by the rule its experiment declared before its runs (`rule:` in
conf/experiment/<experiment>.yaml): per network, among its candidate rows and its declared
incumbents (committed rows of another experiment, same task and split), the one with the
highest mean final validation accuracy over its seeds, every seed counted; a candidate with
fewer steps within `prefer_fewer_within` points of it is taken instead (the fewest steps of
such, the higher mean among equal steps). The test split decides nothing in the choice.

Three experiments declare such a rule: digit_ceiling_search (each network's supervised ceiling:
the chosen recipe then trains on every training image, `stage=final`, and its test accuracy is
the ceiling), mnist_addition_recipe_nets (the sum-trained recipe at 15 digits) and
mnist_addition_minute_search (the one-minute budget, its final seeds apart from the choice's).

`python -m campaign.recipe_search` writes results/recipe_search/<experiment>.md for both;
`--experiment E --chosen NET` prints the network's chosen row (exit 0; 3 while seeds are missing).
"""

from __future__ import annotations

import argparse
import statistics
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from campaign import rule_runs
from campaign.addition_budget import best_and_near, records_frame
from campaign.rule_runs import SEARCH, declared
from dfl_bench import markdown
from dfl_bench.paths import REPO_DIR
from dfl_bench.results import cell_configs
from dfl_bench.results.paper import Published, load_paper
from dfl_bench.results.stats import BH, MARGINS, MIN_SEEDS, Interval, adjust_block, one_sample
from dfl_bench.untrusted import UntrustedFile, out_folder, write_text

EXPERIMENTS = ("digit_ceiling_search", "mnist_addition_recipe_nets", "mnist_addition_minute_search")
OUT = REPO_DIR / "results" / "recipe_search"
CHOSEN, PENDING = 0, 3  # --chosen's exit status
# A search whose final seeds are compared with other systems' published numbers: the table
# (conf/experiment/<table>.yaml `published:`) whose numbers of the same task setting they face.
PUBLISHED_FROM = {"mnist_addition_minute_search": "mnist_addition"}


def stage_values(
    frame: Any, experiment: str, stage: str, metric: str, steps: Mapping[str, int]
) -> dict[str, list[float]]:
    """Each row's `metric` (%) over the runs the experiment's rule counts at `stage` (rule_runs.
    counted: its row's configuration there, the rule's seeds) of its declared `steps` (a
    shortened run counts for nothing), in seed order."""
    ok = rule_runs.counted(frame, experiment, stage)
    ok = ok[ok["row"].map(steps) == ok["steps"]]
    return {
        str(row): [100 * float(x) for x in group[metric].dropna()]
        for row, group in ok.groupby("row")
    }


def candidates(experiment: str, frame: Any) -> dict[str, list[dict[str, Any]]]:
    """Per network, each candidate row and incumbent with its steps and its seeds' values (%)."""
    spec = declared(experiment)
    rule = spec["rule"]
    own = {row: entry["steps"] for row, entry in spec["rows"].items()}
    values = stage_values(frame, experiment, SEARCH, rule["metric"], own)
    out: dict[str, list[dict[str, Any]]] = {}
    for inc in rule.get("incumbents", []):
        theirs = stage_values(
            frame, inc["experiment"], SEARCH, rule["metric"], {inc["row"]: inc["steps"]}
        )
        out.setdefault(inc["net"], []).append(
            {
                "row": f"{inc['experiment']}/{inc['row']}",
                "steps": inc["steps"],
                "values": theirs.get(inc["row"], []),
            }  # fmt: skip
        )
    for row, entry in spec["rows"].items():
        out.setdefault(entry["net"], []).append(
            {"row": row, "steps": entry["steps"], "values": values.get(row, [])}
        )
    return out


def choose(rows: Sequence[Mapping[str, Any]], seeds: int, within: float) -> str | None:
    """The rule on one network's candidates: None while one has fewer than `seeds` values.

    >>> rows = [{"row": "a", "steps": 1, "values": [99.40] * 3},
    ...         {"row": "b", "steps": 2, "values": [99.50] * 3},
    ...         {"row": "c", "steps": 2, "values": [99.52] * 3},
    ...         {"row": "d", "steps": 4, "values": [99.55] * 3}]
    >>> choose(rows, 3, 0.05), choose(rows, 3, 0.01), choose(rows[:1], 4, 0.05)
    ('c', 'd', None)
    """
    if any(len(r["values"]) < seeds for r in rows):
        return None
    top, near = best_and_near(rows, within)
    if not near:
        return top["row"]
    return min(near, key=lambda r: (r["steps"], -statistics.fmean(r["values"])))["row"]


def chosen(experiment: str, frame: Any) -> dict[str, str | None]:
    """Each network's chosen row (None while seeds are missing)."""
    rule = declared(experiment)["rule"]
    return {
        net: choose(options, rule["seeds"], rule["prefer_fewer_within"])
        for net, options in candidates(experiment, frame).items()
    }


def shown(values: Sequence[float]) -> str:
    """mean ± sd of a row's values, or '-' with fewer than two."""
    if len(values) < 2:
        return "-"
    return f"{statistics.fmean(values):.2f} ± {statistics.stdev(values):.2f}"


def report(experiment: str, frame: Any) -> str:
    """The experiment's page: the rule, each candidate's validation accuracy, each choice and,
    where the yaml has a final stage, the chosen recipe's test accuracy."""
    spec = declared(experiment)
    rule = spec["rule"]
    picks = chosen(experiment, frame)
    lines = [
        f"# `{experiment}`: a recipe per network, chosen on a validation split",
        "",
        f"Generated by `python -m campaign.recipe_search` from the records of "
        f"`conf/experiment/{experiment}.yaml` (its header says what each candidate is). The "
        f"rule, declared in that file before its runs: per network, among its candidates and "
        f"declared incumbents, the highest mean final `{rule['metric']}` over {rule['seeds']} "
        f"seeds ({rule['split']}), every seed counted; a candidate with fewer steps within "
        f"{rule['prefer_fewer_within']:g} points of it is taken instead (the fewest steps of "
        "such, the higher mean among equal steps). The test split decides nothing here.",
        "",
    ]
    body = []
    for net, options in candidates(experiment, frame).items():
        for r in options:
            mark = "**chosen**" if r["row"] == picks[net] else ""
            v = r["values"]
            low = f"{min(v):.2f}" if v else "-"
            body.append(
                [f"`{net}`", f"`{r['row']}`", f"{r['steps']:,}", len(v), shown(v), low, mark]
            )
    lines += markdown.table(
        ["net", "candidate", "steps", "n", "validation accuracy (%)", "lowest seed", ""], body
    )
    if rule.get("final"):
        lines += final_section(experiment, frame, picks)
    return "\n".join(lines) + "\n"


def final_tests(experiment: str, frame: Any) -> dict[str, list[float]]:
    """Each row's test accuracy (%) over its final-stage runs (`rule.final.stage`) that the
    rule counts, in seed order."""
    spec = declared(experiment)
    steps = {row: entry["steps"] for row, entry in spec["rows"].items()}
    return stage_values(frame, experiment, spec["rule"]["final"]["stage"], "test_accuracy", steps)


def final_section(experiment: str, frame: Any, picks: Mapping[str, str | None]) -> list[str]:
    """The page's lines on each network's chosen recipe on the test set (`rule.final`): its final
    seeds, against the network's target and the published numbers where declared."""
    spec = declared(experiment)
    final = spec["rule"]["final"]
    lines: list[str] = []
    tests = final_tests(experiment, frame)
    faced = {(c.net, c.published.system): c for c in comparisons(experiment, frame)}
    systems = list(dict.fromkeys(system for _, system in faced))
    target = final.get("target") or {}
    rows = []
    for net, pick in picks.items():
        test = tests.get(pick, []) if pick else []
        low = f"{min(test):.2f}" if test else "-"
        aimed = [against(test, target.get(net))] if target else []
        recipe = f"`{pick}`" if pick else "not chosen yet"
        rows.append([f"`{net}`", recipe, len(test), shown(test), low, *aimed,
                     *(faced[net, s].text() for s in systems)])  # fmt: skip
    aim = ["mean - target"] if target else []
    header = ["net", "recipe", "n", "test accuracy (%)", "lowest seed", *aim, *systems]
    lines += [
        "",
        f"## The chosen recipes on the test set (stage={final['stage']}: every training "
        f"example; seeds {final_seeds(final)})",
        "",
        *markdown.table(header, rows),
    ]
    if target:
        aims = ", ".join(f"`{net}` {value:g}" for net, value in target.items())
        said = f"{TARGET}; none with fewer than {MIN_SEEDS} seeds or without a target"
        lines += ["", f"The targets ({aims}: `rule.final.target`, the accuracy each network was "
                  "designed for, named before its runs and written into the yaml with this column "
                  f"after them; it chooses nothing): {said}."]  # fmt: skip
    if faced:
        sources = "; ".join(dict.fromkeys(f"{c.published.system}: {c.published.source}"
                                          for c in faced.values()))  # fmt: skip
        lines += ["", FACED.format(table=PUBLISHED_FROM[experiment], n=len(faced), bh=BH,
                                   margin=MARGINS["accuracy"], sources=sources)]  # fmt: skip
    return lines


TARGET = (
    "the final seeds' mean minus the network's target, Student's 95% interval over them (every "
    "seed counted): above / below / inconclusive"
)


def against(values: Sequence[float], target: float | None) -> str:
    """The final seeds' mean against a declared target: `+0.04 [-0.01, +0.09] inconclusive`."""
    if target is None or len(values) < MIN_SEEDS:
        return "-"
    decided = one_sample(values, target)
    return f"{decided.text()} {decided.word}"


FACED = (
    "Each published number (`published:` of conf/experiment/{table}.yaml, the same task "
    "setting): ours minus it, Student's 95% interval over the final seeds (every seed counted; "
    "the number's own noise not counted), above / below / equivalent (TOST within ±{margin:g}) "
    "/ inconclusive, decided after {bh} over the {n} such comparisons; `another network` where "
    "the system trains another digit network than ours. Sources: {sources}."
)


@dataclass(frozen=True)
class Faced:
    """A network's chosen recipe, its final seeds' test accuracy (%) and one published number
    of the same task setting, with the test that decides it (None: fewer than MIN_SEEDS)."""

    net: str
    row: str
    values: tuple[float, ...]
    published: Published
    decided: Interval | None

    def text(self) -> str:
        """The cell as the page shows it."""
        p = self.published
        shown = f"{p.accuracy:g}" + (" (another network)" if p.net and p.net != self.net else "")
        if self.decided is None:
            return f"{shown}: fewer than {MIN_SEEDS} final seeds, not compared"
        return f"{shown}: ours {self.decided.text()} {self.decided.word}"


def comparisons(experiment: str, frame: Any) -> list[Faced]:
    """Each network's chosen recipe on its final seeds against every published number of the
    same task setting (PUBLISHED_FROM), decided after Benjamini-Hochberg over them all."""
    if experiment not in PUBLISHED_FROM:
        return []
    spec = declared(experiment)
    tests = final_tests(experiment, frame)
    task = spec.get("task") or {}
    published = [
        p
        for p in load_paper().tables[PUBLISHED_FROM[experiment]].published
        if p.accuracy is not None and all(task.get(k) == v for k, v in p.setting)
    ]
    found = [
        (net, pick, tuple(tests.get(pick, [])), p)
        for net, pick in chosen(experiment, frame).items()
        if pick is not None
        for p in published
    ]
    intervals = [
        one_sample(v, p.accuracy, MARGINS["accuracy"]) if len(v) >= MIN_SEEDS else None
        for _, _, v, p in found
    ]
    decided = adjust_block(intervals)
    return [Faced(*f, d) for f, d in zip(found, decided, strict=True)]


def final_markers(experiment: str) -> tuple[str, str]:
    """The markers of the write-up's sentence on a search's final seeds beside published numbers."""
    return (
        f"<!-- final {experiment}: generated by make tables -->",
        f"<!-- end of final {experiment} -->",
    )


def final_block(experiment: str, frame: Any) -> str:
    """The write-up's sentence on a search's final seeds against the published numbers of the
    same task setting (`comparisons`): each as its page decides it, no more."""
    begin, end = final_markers(experiment)
    faced = comparisons(experiment, frame)
    page = f"`results/recipe_search/{experiment}.md`"
    if not faced:
        return "\n".join([begin, f"No chosen recipe of `{experiment}` yet ({page}).", end])
    seeds = final_seeds(declared(experiment)["rule"]["final"])
    parts = [
        f"`{c.net}` on `{c.row}` {shown(c.values)} (n={len(c.values)}) against "
        f"{c.published.system}'s {c.text()}"
        for c in faced
    ]
    how = (
        f"Student's 95% interval of our mean minus the published number, equivalent within "
        f"±{MARGINS['accuracy']:g} (TOST), after {BH} over the {len(faced)} comparison"
        f"{'s' if len(faced) > 1 else ''}."
    )
    return "\n".join([
        begin,
        f"**The chosen recipe's final seeds ({seeds}, which took no part in the choice; the test "
        f"set; {page}): {'; '.join(parts)}.** {how}",
        end,
    ])  # fmt: skip


def targeted() -> list[str]:
    """The searches whose rule declares a target for its final seeds (`rule.final.target`)."""
    return [e for e in EXPERIMENTS if (declared(e)["rule"].get("final") or {}).get("target")]


def target_markers(experiment: str) -> tuple[str, str]:
    """The markers of the write-up's sentence on a search's final seeds against its targets."""
    return (
        f"<!-- target {experiment}: generated by make tables -->",
        f"<!-- end of target {experiment} -->",
    )


def target_block(experiment: str, frame: Any) -> str:
    """The write-up's sentence on each targeted network's chosen recipe against its target
    (`against`), as its page decides it, no more."""
    spec = declared(experiment)
    final = spec["rule"]["final"]
    tests = final_tests(experiment, frame)
    picks = chosen(experiment, frame)
    parts = []
    for net, target in final["target"].items():
        pick, values = picks.get(net), tests.get(picks.get(net) or "", [])
        low = f", lowest {min(values):.2f}" if values else ""
        parts.append(
            f"`{net}` on `{pick}` {shown(values)} (n={len(values)}{low}) against its target "
            f"{target:g}: {against(values, target)}"
            if pick
            else f"`{net}`: no chosen recipe yet"
        )
    page = f"`results/recipe_search/{experiment}.md`"
    begin, end = target_markers(experiment)
    return "\n".join([
        begin,
        f"**The chosen recipe's final seeds ({final_seeds(final)}, the test set; {page}): "
        f"{'; '.join(parts)}.** Each: {TARGET}.",
        end,
    ])  # fmt: skip


def final_seeds(final: Mapping[str, Any]) -> str:
    """The final stage's seeds as declared: a count (0..n-1) or a list of seeds.

    >>> final_seeds({"seeds": 5}), final_seeds({"seeds": [3, 4, 5]})
    ('0-4', '3, 4, 5')
    """
    seeds = final["seeds"]
    return f"0-{seeds - 1}" if isinstance(seeds, int) else ", ".join(map(str, seeds))


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m campaign.recipe_search")
    parser.add_argument("--records-dir", type=Path, default=Path(cell_configs.RECORDS))
    parser.add_argument("--out", type=Path, default=OUT)
    parser.add_argument("--experiment", choices=EXPERIMENTS, help="one experiment only")
    parser.add_argument("--chosen", metavar="NET", help="print the network's chosen candidate")
    args = parser.parse_args(argv)
    if not args.records_dir.is_dir():
        parser.error(f"--records-dir {args.records_dir} is no folder")
    frame = records_frame(args.records_dir)
    if args.chosen is not None:
        if args.experiment is None:
            parser.error("--chosen needs --experiment")
        picks = chosen(args.experiment, frame)
        if args.chosen not in picks:
            parser.error(f"--chosen {args.chosen!r}: the search's networks are {sorted(picks)}")
        if picks[args.chosen] is None:
            print(f"{args.chosen}: not chosen yet (seeds missing)", file=sys.stderr)
            return PENDING
        print(picks[args.chosen])
        return CHOSEN
    experiments = [args.experiment] if args.experiment else EXPERIMENTS
    try:
        out_folder(args.out, *(f"{experiment}.md" for experiment in experiments))
        for experiment in experiments:
            write_text(args.out / f"{experiment}.md", report(experiment, frame))
            print(f"wrote {args.out / experiment}.md")
    except UntrustedFile as err:
        print(f"[recipe_search] {err}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
