"""A table beyond the paper as Markdown: ours per row beside its reference rows (each row's
accuracy minus the reference's, decided after Benjamini-Hochberg over the column), a sum task's
split noise and what its digits predict, and other systems' published numbers beside ours."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import pandas as pd

from dfl_bench import markdown as md
from dfl_bench.results.cell_configs import POST_HOC_BUDGETS
from dfl_bench.results.cells import Ours, Table
from dfl_bench.results.paper import COLUMNS, Published
from dfl_bench.results.render_paper import (
    FEW,
    HEADERS,
    MISSING,
    UNDEFINED,
    device_counts,
    footnotes,
    mean_std,
    ours_value,
    plain,
)
from dfl_bench.results.stats import (
    BH,
    MARGINS,
    MIN_SEEDS,
    Interval,
    adjust_block,
    clopper_pearson,
    compare_runs,
    kept_runs,
    one_sample,
)
from dfl_bench.schema import (
    DIGIT_ACCURACY,
    TEST_ACCURACY,
    TEST_AT_BEST_VALIDATION,
    VALIDATION_ACCURACY,
)

ANOTHER_TASK = "another task setting"  # e.g. two digits beside one: no comparison


def versus(ours: Ours | None, reference: Ours | None) -> tuple[Interval | None, str]:
    """A row's final accuracy minus the reference row's (stats.compare_runs: Welch's interval,
    collapse-aware) and a word (above, below, equivalent within the accuracy margin, or
    inconclusive), or why there is none."""
    if ours is None or reference is None or not ours.n_ok or not reference.n_ok:
        return None, MISSING
    n, m = ours.n["accuracy"], reference.n["accuracy"]
    if min(n, m) < MIN_SEEDS:
        return None, f"{FEW} n={n}/{m}"
    interval = compare_runs(
        ours.values["accuracy"],
        ours.collapsed.get("accuracy", ()),
        reference.values["accuracy"],
        reference.collapsed.get("accuracy", ()),
        MARGINS["accuracy"],
    )
    return interval, f"{interval.brief()} {interval.word}"


def versus_block(
    pairs: Sequence[tuple[Ours | None, Ours | None]],
) -> list[tuple[Interval | None, str]]:
    """`versus` for each pair of one block, decided after Benjamini-Hochberg within the block
    (stats.adjust_block; a block of one comparison as it is)."""
    found = [versus(a, b) for a, b in pairs]
    if sum(interval is not None for interval, _ in found) < 2:
        return found
    adjusted = adjust_block([interval for interval, _ in found])
    return [
        (i, text if i is None else f"{i.brief()} {i.word}")
        for i, (_, text) in zip(adjusted, found, strict=True)
    ]


def spread(values: pd.Series, scale: float, digits: int) -> str:
    """`mean ± std` of a record column (scaled), `-` when empty."""
    values = pd.to_numeric(values, errors="coerce").dropna() * scale
    if values.empty:
        return "-"
    std = values.std(ddof=1) if len(values) > 1 else None
    return mean_std(float(values.mean()), None if std is None else float(std), digits)


@dataclass(frozen=True)
class Shown:
    """The optional columns a table beyond the paper shows: a task's digit accuracy (and the
    split's noise), a held-out split's accuracies, the gradient ratios any run defines."""

    digits: bool
    validated: bool
    ratios: list[str]

    @classmethod
    def of(cls, table: Table, records: pd.DataFrame) -> Shown:
        ours = table.ours()
        return cls(
            digits="digit_accuracy" in records and records["digit_accuracy"].notna().any(),
            validated=VALIDATION_ACCURACY in records and records[VALIDATION_ACCURACY].notna().any(),
            ratios=[c for c in COLUMNS[1:] if any(o.n[c] for o in ours.values())],
        )


def markdown(table: Table) -> str:
    """A table beyond the paper: ours per row (mean ± std, n; the task's digit accuracy where it
    records one; the gradient ratios where any run defines them; wall time) and each row's
    accuracy minus the reference row's, Welch's 95% interval over both rows' seeds."""
    paper = table.paper
    records = table.records[table.records["status"] == "ok"]
    shown = Shown.of(table, records)
    notes, per_row = footnotes(table)
    out = [
        f"## {paper.experiment}, profile `{table.profile}`",
        "",
        f"Beyond the paper. {paper.caption}",
        "",
        *md.table(_header(paper.reference, shown), _body(table, records, shown, per_row)),
        "",
        _legend(paper.reference, shown),
    ]
    if paper.post_hoc_references:
        rows = ", ".join(f"`{r}`" for r in paper.post_hoc_references)
        out += ["", f"**Post hoc**: {rows} declared their setting's reference after their own "
                "runs (`reference_after_runs` in the yaml): the rows read against them, and "
                "which runs count as collapsed there, follow a choice made with the results in "
                "view."]  # fmt: skip
    if notes:
        out += ["", "Notes:", ""] + [f"{n}. {text}" for text, n in notes.items()]
    if paper.published:
        out += ["", *published_markdown(table)]
    commits = ", ".join(f"`{c[:12]}`" for c in table.commits()) or "-"
    out += [
        "",
        f"Records: {len(table.records)} ({len(records)} ok); commits: {commits}; devices: "
        f"{device_counts(table)}",
    ]
    return "\n".join(out) + "\n"


def _header(reference: str | None, shown: Shown) -> list[str]:
    header = ["row", "n", HEADERS["accuracy"]]
    header += ["digit accuracy (final)", *SPLIT_HEADERS] if shown.digits else []
    header += list(VALIDATION_HEADERS) if shown.validated else []
    header += [HEADERS[c] for c in shown.ratios]
    return [*header, "wall time (min)", f"accuracy - {reference}"]


def _body(
    table: Table, records: pd.DataFrame, shown: Shown, per_row: dict[int, list[int]]
) -> list[list[str]]:
    """One line per row: ours, the optional columns, wall time and the row minus the reference
    (decided after Benjamini-Hochberg over the column)."""
    reference_key = table.paper.reference or ""
    reference = table.ours().get(reference_key)
    compared = [
        index
        for index, row in enumerate(table.rows)
        if row.label != reference_key and table.comparable(row.label, reference_key)
    ]
    words = versus_block([(table.rows[i].cells[0][1], reference) for i in compared])
    against = {index: text for index, (_, text) in zip(compared, words, strict=True)}
    body = []
    for index, row in enumerate(table.rows):
        mine = row.cells[0][1]
        own = records[records["configuration"] == (mine.configuration if mine else None)]
        marks = "".join(f" [{m}]" for m in per_row.get(index, []))
        n = "-" if mine is None else f"{mine.n_ok}" + (f" {FEW}" if mine.n_ok < MIN_SEEDS else "")
        vs = "" if row.label == reference_key else against.get(index, ANOTHER_TASK)
        cells = [plain(row.label) + (" (other configuration)" if row.extra else "") + marks, n]
        cells.append(ours_value(mine, "accuracy"))
        cells += [spread(own["digit_accuracy"], 100, 2), *_split_cells(own)] if shown.digits else []
        cells += [spread(own[k], 100, 2) for k in VALIDATION_COLUMNS] if shown.validated else []
        cells += [ours_value(mine, c) for c in shown.ratios]
        body.append([*cells, spread(own["wall_time_s"], 1 / 60, 1), vs])
    return body


def _legend(reference: str | None, shown: Shown) -> str:
    """What the columns say, each optional column's words only where it is shown."""
    split = "the test set"
    return (
        f"Mean ± sample std over the seeds (n ok runs); accuracy is the final one, at the end "
        f"of the budget, on {split}; `best` in parentheses is the best of each run's "
        f"evaluations, selected on {split} (optimistic, never a verdict); wall time is a run's "
        f"training time on the "
        f"machine that ran it. The last column: each row's final accuracy minus "
        f"`{reference}`'s, the 95% interval over both rows' seeds (Welch's; collapsed runs "
        f"compared on their rate), above / below / equivalent (TOST within "
        f"±{MARGINS['accuracy']:g} points) / inconclusive, decided after {BH} over the "
        f"column's comparisons; `{FEW}`: fewer than {MIN_SEEDS} seeds, no comparison."
        + (
            f" `{UNDEFINED}`: no derivative of the ratio's kind in the run's last steps."
            if shown.ratios
            else ""
        )
        + (
            f" `{SPLIT_HEADERS[0]}`: how many sums each run is evaluated on, and the "
            "Clopper-Pearson 95% interval of the mean accuracy read as one run's count on them "
            f"(the split's own noise, beside the seeds'); `{SPLIT_HEADERS[1]}`: each run's digit "
            "accuracy to the power of the sum's 2N digits (a sum is right when all are), "
            "averaged over the runs."
            if shown.digits
            else ""
        )
        + (
            f" `{VALIDATION_HEADERS[0]}`: the final sum accuracy on the training sums held out "
            f"(task.validation); `{VALIDATION_HEADERS[1]}`: the test accuracy at each run's "
            "evaluation of best validation accuracy (the checkpoint chosen on validation, never "
            "on the test set). A run from before both were evaluated measured the validation "
            "split only: its test accuracy is blank."
            if shown.validated
            else ""
        )
    )


SPLIT_HEADERS = ("sums evaluated: the mean's 95% (binomial)", "digit accuracy^(2N)")
# A run with a held-out validation split (task.validation): its final accuracy there, and the
# test accuracy at its evaluation of best validation accuracy (the checkpoint chosen on it)
VALIDATION_COLUMNS = (VALIDATION_ACCURACY, TEST_AT_BEST_VALIDATION)
VALIDATION_HEADERS = ("validation (final)", "test at the best validation")


def _split_cells(own: pd.DataFrame) -> list[str]:
    """A sum task's split noise and what its digits predict: the sums each run is evaluated on
    and the Clopper-Pearson 95% interval of the mean accuracy as one run's count on them (the
    noise of the split alone, beside the seeds'), and each run's digit accuracy to the power of
    the sum's 2N digits (a sum is right when all its digits are), averaged over the runs."""
    if own.empty:
        return ["-", "-"]
    from dfl_bench.tasks.mnist_addition import evaluated_sums

    config = own["config"].iloc[0]
    n, digits = evaluated_sums(config), config["task"]["digits"]
    accuracy = float(pd.to_numeric(own[TEST_ACCURACY]).mean())
    low, high = clopper_pearson(round(accuracy * n), n)
    predicted = float((pd.to_numeric(own[DIGIT_ACCURACY]) ** (2 * digits)).mean())
    return [f"{n}: [{100 * low:.1f}, {100 * high:.1f}]", f"{100 * predicted:.2f}"]


@dataclass(frozen=True)
class PublishedCell:
    """One published number beside a declared row of ours: where the block shows it (`row`,
    `column`), the row, its network and seeds, the system, the number as shown, and the test
    that decides it (after the block's correction), else what stands in its place."""

    row: int
    column: int
    key: str
    net: str
    ours: Ours | None
    published: Published
    shown: str
    decided: Interval | None
    instead: str = ""

    def text(self) -> str:
        """The cell as the table shows it."""
        if self.decided is None:
            return self.shown + self.instead
        return f"{self.shown}: ours {self.decided.text()} {self.decided.word}"


def published_cells(table: Table) -> tuple[list[str], list[list[str]], list[PublishedCell]]:
    """The published block of `table`: its header, its rows, and each published number beside
    a declared row (`headline: true`) with the test that decides it (Student's 95% interval of
    our mean minus it, its own noise not counted), after Benjamini-Hochberg over the block; a
    budget declared post hoc decides none."""
    published = table.paper.published
    systems = list(dict.fromkeys(p.system for p in published))
    settings = list(dict.fromkeys(p.setting for p in published))
    header = ["task", "ours: declared row, network (n)", "ours (final)"]
    header += [md.text(f"{s} ({_net_of(published, s)})") for s in systems]
    body, found = [], []
    for setting in settings:
        for key, net in _declared(table, setting):
            ours = table.ours().get(key)
            ours = ours if ours is not None and ours.n_ok else None
            cells = [", ".join(f"{k}={v}" for k, v in setting) or "-"]
            cells += [f"{plain(key)}, {net} ({ours.n['accuracy'] if ours else 0})"]
            cells += [ours_value(ours, "accuracy") if ours else MISSING]
            for system in systems:
                theirs = [p for p in published if (p.system, p.setting) == (system, setting)]
                cells.append("-")
                if theirs:
                    shown, test = _published_test(theirs[0], ours)
                    if theirs[0].net and theirs[0].net != net:
                        shown += " (another network)"
                    found.append(
                        (len(body), len(cells) - 1, key, net, ours, theirs[0], shown, test)
                    )
            body.append(cells)
    if POST_HOC_BUDGETS.get(table.profile):  # a budget chosen on these test records decides none
        found = [(*f[:7], "" if isinstance(f[7], Interval) else f[7]) for f in found]
    tests = adjust_block([f[7] if isinstance(f[7], Interval) else None for f in found])
    cells_of = [
        PublishedCell(*f[:7], decided, "" if decided is not None else f[7])
        for f, decided in zip(found, tests, strict=True)
    ]
    for cell in cells_of:
        body[cell.row][cell.column] = cell.text()
    return header, body, cells_of


def published_markdown(table: Table) -> list[str]:
    """The rows the experiment declares beside the published numbers (`headline: true`), per
    task setting, beside other systems' numbers: each against our seeds (Student's 95% interval
    of our mean minus it; its own noise not counted), decided after Benjamini-Hochberg over the
    block's comparisons; a cell whose network is not the system's says so."""
    published = table.paper.published
    header, body, cells_of = published_cells(table)
    post_hoc = POST_HOC_BUDGETS.get(table.profile)
    sources = "; ".join(dict.fromkeys(md.text(f"{p.system}: {p.source}") for p in published))
    return [
        "Beside published systems (final test accuracy of the sum, %):",
        "",
        *md.table(header, body),
        "",
        "Ours: the rows this experiment declares beside the published numbers before its runs "
        "(`headline: true` in its yaml), never the row with the highest test accuracy; each "
        "with its digit network. A system's column names the network its code trains (ours of "
        "the same layers; 'not read' where we did not read its code): a row on that network is "
        "the like-for-like comparison, a cell on another network says so. Each published "
        "number: ours minus it, Student's 95% interval over our seeds (the number's own noise "
        f"not counted; collapsed runs left out), above / below / equivalent (TOST within "
        f"±{MARGINS['accuracy']:g}) / inconclusive, decided after {BH} over the block's "
        f"{len(cells_of)} numbers. Sources: {sources}.",
        *(
            ["", f"**Post hoc**: the `{table.profile}` budget was {post_hoc}; no comparison is "
             "decided at it (the numbers are shown, not tested)."]
            if post_hoc else []
        ),
    ]  # fmt: skip


def _net_of(published: Sequence[Published], system: str) -> str:
    """The digit network `system`'s entries name (one), or 'not read'."""
    nets = {p.net for p in published if p.system == system and p.net}
    return ", ".join(sorted(nets)) or "not read"


def _declared(table: Table, setting: tuple[tuple[str, object], ...]) -> list[tuple[str, str]]:
    """The declared rows (`headline: true`) whose task (in the experiment's yaml) holds
    `setting`, each with its network."""
    return [
        (key, net)
        for key, net, task in table.paper.headlines
        if all(dict(task).get(k) == v for k, v in setting)
    ]


def _published_test(published: Published, ours: Ours | None) -> tuple[str, Interval | str]:
    """A published number as shown and, with our seeds, ours minus it (else what to add to the
    shown number: why there is no comparison, or nothing)."""
    if published.accuracy is None:
        return md.text(published.note), ""
    shown = f"{'≈' if published.note == 'about' else ''}{published.accuracy:g}"
    shown += f" ± {published.sd:g}" if published.sd is not None else ""
    shown += f" ({md.text(published.note)})" if published.note not in ("", "about") else ""
    if ours is None or ours.n["accuracy"] < MIN_SEEDS:
        return shown, ""
    kept = kept_runs(ours.values["accuracy"], ours.collapsed.get("accuracy", ()))
    if len(kept) < MIN_SEEDS:
        return shown, f": fewer than {MIN_SEEDS} of our runs did not collapse, no comparison"
    if len(kept) < ours.n["accuracy"]:  # what the interval is over, said where it is shown
        shown += f" (ours: the {len(kept)} runs that did not collapse)"
    return shown, one_sample(kept, published.accuracy, MARGINS["accuracy"])
