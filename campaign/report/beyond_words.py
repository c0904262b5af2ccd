"""The write-up's words on the tables beyond the paper (results/README.md): each row against its
reference rows and the supervised baseline, decided after Benjamini-Hochberg within each list,
the runs that collapsed, and a table's generated block as the write-up shows it."""

from __future__ import annotations

import re
import statistics
from collections.abc import Sequence
from typing import TYPE_CHECKING

import pandas as pd

from campaign import recipe_search
from dfl_bench.results import render_beyond, stats
from dfl_bench.results.cell_configs import POST_HOC_BUDGETS
from dfl_bench.results.cells import COLLAPSE_POINTS, Ours, Table
from dfl_bench.results.paper import COLUMN_FIELDS
from dfl_bench.results.render_beyond import ANOTHER_TASK, versus_block
from dfl_bench.results.render_paper import MISSING, mean_std
from dfl_bench.schema import DIGIT_ACCURACY, GRADIENT_REACHED
from dfl_bench.tasks import PAPER_TASK

if TYPE_CHECKING:
    from dfl_bench.results.profile_results import Rendered

# A row against another in the write-up's words on a table beyond the paper, in this order.
WORDS = (
    "above",
    "equivalent",
    "inconclusive",
    "below",
    "too few seeds",
    "no records",
)


# The searches whose declared rule chooses (recipe_search.py, collapse_search.py): their pages
RULED = {
    **{e: f"recipe_search/{e}.md" for e in recipe_search.EXPERIMENTS},
    "mnist_addition_collapse_nets": "collapse_search/README.md",
}


def accuracy_text(ours: Ours | None) -> str:
    """`94.58 ± 0.47 (n=5)`, or `missing`."""
    if ours is None or not ours.n_ok:
        return "missing"
    if ours.number("accuracy") is None:  # runs that measured a validation split only
        return "no test accuracy"
    return f"{mean_std(ours.number('accuracy'), ours.std['accuracy'], 2)} (n={ours.n['accuracy']})"


def beyond(table: Table) -> str:
    """A table beyond the paper in words: the rows above, tied with and below its reference row
    (Welch's interval over both rows' seeds), those whose ratios vanished, and those with too
    few seeds."""

    ours = table.ours()
    if table.paper.experiment in RULED:
        filled = sum(bool(ours.get(key) and ours[key].n_ok) for key in table.paper.keys())
        return (
            f"a search, decided by the rule its yaml declared, not by comparisons between its "
            f"rows: {filled} of {len(table.paper.keys())} candidates have records "
            f"([`{RULED[table.paper.experiment]}`]({RULED[table.paper.experiment]}))"
        )
    reference = table.paper.reference or ""
    others = [key for key in table.paper.keys() if key != reference]
    compared = [key for key in others if table.comparable(key, reference)]
    pairs = [(ours.get(key), ours.get(reference)) for key in compared]
    found = dict(zip(compared, versus_block(pairs), strict=True))
    groups: dict[str, list[str]] = {}
    for key in others:
        interval, text = found.get(key, (None, ""))
        word = interval.word if interval is not None else "too few seeds for"
        word = "no records beside" if text == MISSING else word
        word = word if key in found else ANOTHER_TASK + " than"
        groups.setdefault(word, []).append(f"`{key}`")
    parts = [f"{word} `{reference}`: {', '.join(keys)}" for word, keys in groups.items()]
    tested = sum(interval is not None for interval, _ in found.values())
    if tested > 1:
        parts.append(f"({stats.BH} over the {tested} comparisons)")
    defined = any(o.n["cons"] for o in ours.values())  # a task without implications has none
    vanished = [f"`{k}`" for k, o in ours.items() if defined and o.n_ok and o.undefined("cons")]
    if vanished:
        parts.append(f"no derivative left (cons undefined): {', '.join(vanished)}")
    untrained = [f"`{k}`" for k in ours if untrained_runs(table, k)]
    if untrained:
        parts.append(f"no gradient reached the network: {', '.join(untrained)}")
    return "; ".join(parts) or "no records"


def untrained_runs(table: Table, key: str) -> int:
    """How many ok runs of row `key` no gradient reached (their records say so)."""
    own = table.own_records(key)
    return int(((own["status"] == "ok") & (own[GRADIENT_REACHED] == 0)).sum())


def with_its_records(results: Sequence[Rendered], name: str) -> Rendered:
    """The rendering of table `name` at the profile its records have: the most rows with
    stats.MIN_SEEDS+ seeds, then the most records, then the longest profile."""
    order = ["smoke", "quick", "long", "paper"]

    def rank(r: Rendered) -> tuple[int, int, int]:
        table = r.tables[name]
        seeded = sum(o.n["accuracy"] >= stats.MIN_SEEDS for o in table.ours().values())
        length = order.index(r.profile) if r.profile in order else -1
        return seeded, len(table.records), length

    return max(results, key=rank)


def beyond_markers(name: str) -> tuple[str, str]:
    """The markers of a table beyond the paper's block in the write-up (results/README.md)."""
    return f"<!-- beyond {name}: generated by make tables -->", f"<!-- end of beyond {name} -->"


def beyond_block(name: str, results: Sequence[Rendered]) -> str:
    """The write-up's words on a table beyond the paper, at the longest profile with its
    records: every row against each of its reference rows and against the supervised baseline
    (Welch's 95% interval over both cells' own seeds, collapse-aware), then its collapsed runs."""

    r = with_its_records(results, name)
    table = r.tables[name]
    ours = table.ours()
    keys = table.paper.keys()
    seeded = sum(o.n["accuracy"] >= stats.MIN_SEEDS for o in ours.values())
    lines = [
        beyond_markers(name)[0],
        f"Profile `{r.profile}`: {seeded} of {len(keys)} rows have {stats.MIN_SEEDS}+ seeds.",
        "",
    ]
    post_hoc = set(table.paper.post_hoc_references)
    against = [
        (f"`{ref}`" + (" (post hoc: declared after its runs)" if ref in post_hoc else ""), ref,
         ours.get(ref))
        for ref in table.paper.references
    ]  # fmt: skip
    base = r.tables["baseline"].ours().get("ce_pair")
    against.append(("the supervised baseline (CE + pair loss)", None, base))
    for label, ref, other in against:
        compared = [
            key
            for key in keys
            if key != ref and table.comparable(key, ref or key)
            if ref is not None or papers_task(table, key)  # else another task than the baseline's
        ]
        groups: dict[str, list[str]] = {}
        found = versus_block([(ours.get(key), other) for key in compared])
        for key, (interval, text) in zip(compared, found, strict=True):
            word = interval.word if interval is not None else "too few seeds"
            word = "no records" if text == MISSING else word
            shown = "" if word == "no records" else f" {accuracy_text(ours.get(key))}"
            groups.setdefault(word, []).append(f"`{key}`{shown}")
        if groups:
            parts = [f"{word}: {', '.join(groups[word])}" for word in WORDS if word in groups]
            tested = sum(interval is not None for interval, _ in found)
            by = f" ({stats.BH} over the {tested} comparisons)" if tested > 1 else ""
            lines.append(f"- against {label}, {accuracy_text(other)}{by}: " + "; ".join(parts))
    rows = [key for key in keys if papers_task(table, key)]
    if base is not None and base.n_ok and rows:
        floor = base.number("accuracy") - COLLAPSE_POINTS
        runs = collapsed_runs(table, rows, floor)
        lines.append(
            f"- runs that collapsed (final accuracy more than {COLLAPSE_POINTS:g} points below "
            f"the baseline's mean, under {floor:.2f}): " + ("; ".join(runs) or "none")
        )
    return "\n".join([*lines, beyond_markers(name)[1]])


def papers_task(table: Table, key: str) -> bool:
    """Whether row `key` trains the paper's task (or has no records), so the paper's supervised
    baseline measures it."""
    return table.task(key) in (None, PAPER_TASK)


def collapsed_runs(table: Table, rows: Sequence[str], floor: float) -> list[str]:
    """Per row of `rows`, the seeds (and their final accuracy, %) of the ok runs below `floor`."""
    out = []
    for key in (k for k in rows if k in table.ours()):
        own = table.own_records(key)
        own = own[own["status"] == "ok"].sort_values("seed")
        low = [
            f"{int(seed)} ({100 * acc:.2f})"
            for seed, acc in zip(own["seed"], own[COLUMN_FIELDS["accuracy"]], strict=True)
            if 100 * acc < floor
        ]
        if low:
            out.append(f"`{key}` seed{'s' if len(low) > 1 else ''} {', '.join(low)} of {len(own)}")
    return out


def published_markers(name: str, profile: str | None = None) -> tuple[str, str]:
    """The markers of the write-up's sentence on a table's published comparisons: at the
    profile its records have, or at `profile`."""
    at = f" at {profile}" if profile else ""
    return (
        f"<!-- published {name}{at}: generated by make tables -->",
        f"<!-- end of published {name}{at} -->",
    )


def published_block(name: str, results: Sequence[Rendered], profile: str | None = None) -> str:
    """The write-up's result sentence on table `name` beside the first system it lists
    (`published:` of its yaml), at the profile its records have (or at `profile`): each
    declared row's seeds against that system's number, the decision of the table's own block
    (verdict word, interval, n, collapses), so the sentence says no more than the table's test;
    at a budget chosen post hoc (POST_HOC_BUDGETS) it decides nothing and says so."""
    begin, end = published_markers(name, profile)
    if profile is None:
        r = with_its_records(results, name)
    else:
        found = [r for r in results if r.profile == profile]
        if not found:
            return "\n".join([begin, f"No records of `{name}` at `{profile}`.", end])
        r = found[0]
    table = r.tables[name]
    _, _, every = render_beyond.published_cells(table)
    cells = [c for c in every if c.published.accuracy is not None]  # a time-out is no number
    system = cells[0].published.system if cells else None
    post_hoc = POST_HOC_BUDGETS.get(r.profile)
    parts = []
    for cell in (c for c in cells if c.published.system == system):
        setting = ", ".join(f"{k}={v}" for k, v in cell.published.setting)
        if cell.decided is not None:
            said = f"ours minus it {cell.decided.text()}: {cell.decided.word}"
        elif cell.instead:
            said = "not compared" + cell.instead
        elif cell.ours is None or cell.ours.n["accuracy"] < stats.MIN_SEEDS:
            said = f"not compared (fewer than {stats.MIN_SEEDS} seeds)"
        else:
            said = "not compared (post hoc: a budget chosen on these test records decides none)"
        parts.append(
            f"at {setting} `{cell.key}` ({cell.net}) {_runs_text(cell.ours)} against "
            f"{cell.shown}, {said}"
        )
    if not parts:
        return "\n".join([begin, f"No declared row of `{name}` beside a published number.", end])
    how = (
        f"**Post hoc**: the `{r.profile}` budget was {post_hoc}; no comparison is decided at "
        "it (the numbers are shown, not tested)."
        if post_hoc
        else "Each as the table decides it: Student's 95% interval of our mean minus the "
        "published number over our runs that did not collapse, after "
        f"{stats.BH} over the table's {len(every)} published number{'s' if len(every) > 1 else ''}."
    )
    return "\n".join(
        [
            begin,
            f"**Beside {system} (profile `{r.profile}`, final test accuracy of the sum, "
            f"`results/tables/{name}.md`): {'; '.join(parts)}.** {how}",
            end,
        ]
    )


def _runs_text(ours: Ours | None) -> str:
    """`65.53 ± 36.65 (n=5, 1 collapsed)`: a row's final accuracy over its seeds, how many and
    how many collapsed; or `no runs`."""
    if ours is None or ours.number("accuracy") is None:
        return "no runs"
    collapsed = sum(ours.collapsed.get("accuracy", ()))
    n = f"n={ours.n['accuracy']}" + (f", {collapsed} collapsed" if collapsed else "")
    return f"{mean_std(ours.number('accuracy'), ours.std['accuracy'], 2)} ({n})"


def table_markers(name: str) -> tuple[str, str]:
    """The markers of a table's generated block in the write-up (results/README.md)."""
    return f"<!-- table {name}: generated by make tables -->", f"<!-- end of table {name} -->"


def table_block(name: str, results: Sequence[Rendered]) -> str:
    """A table beyond the paper as the write-up shows it: its rows at the longest profile
    with records of it (the Markdown table of its table file, without the notes' marks)."""

    r = with_its_records(results, name)
    text = render_beyond.markdown(r.tables[name])
    tables = [  # each Markdown table of the file, with the line that introduces it
        [lead, *(re.sub(r" \[\d+\]", "", line) for line in rows.splitlines())]
        for lead, rows in re.findall(r"([^\n|][^\n]*)\n\n((?:\|[^\n]*\n?)+)", text)
    ]
    begin, end = table_markers(name)
    title = f"Profile `{r.profile}` (`results/tables/{name}.md`):"
    main, *more = tables
    lines = [begin, title, "", *main[1:]]
    for lead, *rows in more:
        lines += ["", lead, "", *rows]
    return "\n".join([*lines, end])


def seeds_markers(name: str) -> tuple[str, str]:
    """The markers of a table's runs by seed in the write-up (results/README.md)."""
    return f"<!-- seeds {name}: generated by make tables -->", f"<!-- end of seeds {name} -->"


def seeds_block(name: str, results: Sequence[Rendered]) -> str:
    """A table's runs one by one, at the profile its records have: per row its mean, then each
    seed's final test accuracy (and its digit accuracy, where the task has digits), the runs
    the table counts as collapsed marked, and where one did, the mean of the others."""
    r = with_its_records(results, name)
    table = r.tables[name]
    begin, end = seeds_markers(name)
    lines = [
        begin,
        f"Profile `{r.profile}` (`results/tables/{name}.md`), each row's runs by seed: final "
        "test accuracy (%; of the sum where the task adds, then the run's digit accuracy in "
        "brackets); `collapsed` marks a run the table counts as collapsed, and where one did, "
        "the mean of the runs that did not follows:",
        "",
    ]
    for key in table.paper.keys():
        ours = table.ours().get(key)
        if ours is None or ours.number("accuracy") is None:
            continue
        digits = _digit_accuracies(table, key)
        runs = sorted(
            zip(
                ours.seed_ids["accuracy"],
                ours.values["accuracy"],
                ours.collapsed["accuracy"],
                strict=True,
            )
        )
        shown = [
            f"{seed}: {value:.2f}"
            + (f" ({digits[seed]:.2f})" if seed in digits else "")
            + (" collapsed" if fell else "")
            for seed, value, fell in runs
        ]
        line = f"- `{key}` {_runs_text(ours)}: seeds " + ", ".join(shown)
        kept = [(seed, value) for seed, value, fell in runs if not fell]
        if kept and len(kept) < len(runs):
            line += (
                f"; the {len(kept)} that did not collapse: "
                f"{sum(v for _, v in kept) / len(kept):.2f}"
            )
            if all(seed in digits for seed, _ in kept):
                line += f" ({sum(digits[s] for s, _ in kept) / len(kept):.2f} per digit)"
        lines.append(line)
    return "\n".join([*lines, end])


def _digit_accuracies(table: Table, key: str) -> dict[int, float]:
    """Seed -> the final digit accuracy (%) of row `key`'s ok runs, where its records have one."""
    own = table.own_records(key)
    if DIGIT_ACCURACY not in own:
        return {}
    own = own[own["status"] == "ok"]
    values = pd.to_numeric(own[DIGIT_ACCURACY], errors="coerce")
    return {
        int(seed): 100 * float(value)
        for seed, value in zip(own["seed"], values, strict=True)
        if value == value
    }


# Rows of two tables one setting apart, read against each other in the write-up: per contrast,
# what the first rows have that the second do not, and its pairs ((table, row) with it, without)
CONTRASTS = {
    "warmup": (
        "the learning-rate warmup",
        (
            (
                ("mnist_addition_warmup_nets", "bn_wide_warm_n15"),
                ("mnist_addition_frontier_nets", "bn_wide_n15"),
            ),
            (
                ("mnist_addition_warmup_nets", "bn_wide_warm_n100"),
                ("mnist_addition_frontier_nets", "bn_wide_n100"),
            ),
        ),
    ),
}


def contrast_markers(name: str) -> tuple[str, str]:
    """The markers of a contrast's block in the write-up (results/README.md)."""
    return (
        f"<!-- contrast {name}: generated by make tables -->",
        f"<!-- end of contrast {name} -->",
    )


def contrast_block(name: str, results: Sequence[Rendered]) -> str:
    """The write-up's sentence on contrast `name` (CONTRASTS): per pair of rows, with the
    setting and without, each at the profile its records have: how many runs collapsed on each
    side and Fisher's exact test of the two rates, then the runs that did not collapse by
    Welch's 95% interval (TOST within the accuracy margin), or why no test is made."""
    what, pairs = CONTRASTS[name]
    begin, end = contrast_markers(name)
    lines = [begin]
    for (table_a, key_a), (table_b, key_b) in pairs:
        sides = []
        for table_name, key in ((table_a, key_a), (table_b, key_b)):
            r = with_its_records(results, table_name)
            ours = r.tables[table_name].ours().get(key)
            sides.append((f"`{key}` (`{table_name}`, profile `{r.profile}`)", ours))
        (label_a, a), (label_b, b) = sides
        head = f"- with {what}, {label_a}, against without it, {label_b}"
        if a is None or b is None or not a.n_ok or not b.n_ok:
            lines.append(f"{head}: no records on a side, nothing compared")
            continue
        n_a, n_b = a.n["accuracy"], b.n["accuracy"]
        k_a, k_b = a.n_collapsed, b.n_collapsed
        p_rate = stats.fisher(k_a, n_a, k_b, n_b)
        said = "a difference shown at 5%" if p_rate < 0.05 else "no difference shown"
        text = (
            f"{head}: collapsed {k_a} of {n_a} against {k_b} of {n_b} (Fisher's exact test, "
            f"p = {p_rate:.2f}: {said})"
        )
        kept_a = stats.kept_runs(a.values["accuracy"], a.collapsed["accuracy"])
        kept_b = stats.kept_runs(b.values["accuracy"], b.collapsed["accuracy"])
        runs = f"the runs that did not collapse, {_mean_text(kept_a)} against {_mean_text(kept_b)}"
        if min(len(kept_a), len(kept_b)) < stats.MIN_SEEDS:
            text += f"; {runs}: fewer than {stats.MIN_SEEDS} on a side, not compared"
        else:
            interval = stats.welch(kept_a, kept_b, stats.MARGINS["accuracy"])
            text += (
                f"; {runs}: with minus without {interval.text()}, p = {interval.p[0]:.2f}: "
                f"{interval.word}"
            )
        lines.append(text)
    return "\n".join([*lines, end])


def _mean_text(values: Sequence[float]) -> str:
    """`81.90 ± 1.47 (n=4)` of a list of accuracies (%)."""
    if not values:
        return "none"
    sd = statistics.stdev(values) if len(values) > 1 else None
    return f"{mean_std(statistics.fmean(values), sd, 2)} (n={len(values)})"
