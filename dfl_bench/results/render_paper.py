"""One table in the paper's layout as Markdown and LaTeX: paper, ours (mean +- std, n), Δ."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from dfl_bench import markdown as md
from dfl_bench.results.agreement import WITHIN, Agreement
from dfl_bench.results.cells import COLLAPSE_POINTS, Ours, Table, devices
from dfl_bench.results.paper import COLUMNS, DASH, PaperCell, PaperTable
from dfl_bench.results.probes import PROBE_FILES, PROBE_STEPS
from dfl_bench.results.stats import MIN_SEEDS
from dfl_bench.schema import CU_ANT, CU_CONS

HEADERS = {"accuracy": "Accuracy", "cons": "cons", CU_CONS: CU_CONS, CU_ANT: CU_ANT}
TEX_HEADERS = {
    "accuracy": "Accuracy",
    "cons": r"$c_{\mathrm{cons}}$",
    CU_CONS: r"$cu_{\mathrm{cons}}$",
    CU_ANT: r"$cu_{\mathrm{ant}}$",
}
MISSING, FAILED, UNDEFINED, NOT_PRINTED, FEW = "missing", "FAILED", "undef.", "n.p.", "(few)"
LEGEND = (
    f"Each row: the paper's value, ours (mean ± sample std over the seeds, n = ok runs) and the "
    f"difference ours - paper. Accuracy in %, ratios in [0, 1]. Accuracy is the final test "
    f"accuracy (at the end of the budget), the primary number of every cell, comparison and "
    f"claim; the best of the run's evaluations follows in parentheses, marked `best`: it is "
    f"selected on the test set (optimistic) and decides nothing (the paper says only 'accuracy "
    f"on the test set'). `k of n collapsed`: runs whose final accuracy is more than "
    f"{COLLAPSE_POINTS:g} points below the baseline's mean. `{MISSING}`: no run yet; "
    f"`{FAILED}`: every run failed (reason below); `{UNDEFINED}`: the ratio is undefined (the "
    f"paper's '-'; e.g. no antecedent derivative); `{NOT_PRINTED}`: the paper prints nothing "
    f"there. `{FEW}`: fewer than {MIN_SEEDS} ok seeds, so the cell decides no comparison or claim."
)


def plain(label: str) -> str:
    """A LaTeX row label as plain text: `$T_Y,\\ p=1.5$` -> `T_Y, p=1.5`."""
    text = label.replace("\\ ", " ").replace("\\&", "&").replace("\\log", "log")
    text = text.replace("\\sigma", "σ").replace("$", "")
    return re.sub(r"[{}]", "", text).strip()


def paper_value(cell: PaperCell | None, column: str) -> str:
    """The printed value (bold kept), `undef.` for '-', `n.p.` for a blank."""
    if cell is None:
        return ""
    value = cell.values[column]
    if value == DASH:
        return UNDEFINED
    if value is None:
        return NOT_PRINTED
    digits = (2 if cell.std is not None else 1) if column == "accuracy" else 2
    text = f"{value:.{digits}f}"
    text += f" ± {cell.std:g}" if cell.std is not None and column == "accuracy" else ""
    text += " (text)" if cell.source == "text" and column == "accuracy" else ""
    return f"**{text}**" if column in cell.bold else text


def ours_value(ours: Ours | None, column: str) -> str:
    """Mean ± std, or a mark for a missing cell, a failed run or an undefined ratio."""
    if ours is None:
        return MISSING
    if ours.n_ok == 0:
        return FAILED
    if ours.undefined(column):
        return UNDEFINED
    digits = 2 if column == "accuracy" else 3
    text = mean_std(ours.mean[column], ours.std[column], digits)
    if ours.n[column] < ours.n_ok:
        text += f" ({ours.n[column]} defined)"
    if column == "accuracy" and ours.best[0] is not None:
        text += f" (best {mean_std(*ours.best, digits)})"
    if column == "accuracy" and ours.n_collapsed:
        text += f" ({ours.n_collapsed} of {ours.n['accuracy']} collapsed)"
    return text


def mean_std(mean: float, std: float | None, digits: int) -> str:
    """`mean ± std` (std left out when there is none)."""
    return f"{mean:.{digits}f}" + ("" if std is None else f" ± {std:.{digits}f}")


def difference(cell: PaperCell | None, ours: Ours | None, column: str) -> str:
    """ours - paper, when both are numbers."""
    if cell is None or ours is None or cell.number(column) is None:
        return ""
    mine = ours.number(column)
    if mine is None:
        return ""
    delta = mine - cell.number(column)
    return f"{delta:+.2f}" if column == "accuracy" else f"{delta:+.3f}"


def ours_label(ours: Ours | None, marks: list[int]) -> str:
    """`ours n=3 [1]`, with failed runs and footnote numbers."""
    if ours is None:
        return "ours"
    text = f"ours n={ours.n_ok}" + (f" {FEW}" if ours.n_ok < MIN_SEEDS else "")
    text += f", {ours.n_failed} failed" if ours.n_failed else ""
    return text + "".join(f" [{m}]" for m in marks)


def footnotes(table: Table) -> tuple[dict[str, int], dict[int, list[int]]]:
    """Numbered notes of the table ({text: number}) and, per row index, its note numbers."""
    numbers: dict[str, int] = {}
    per_row: dict[int, list[int]] = {}
    for index, row in enumerate(table.rows):
        for paper, ours in row.cells:
            texts = list(ours.notes if ours else ())
            if ours is not None and ours.reasons:
                texts += [f"failed: {reason}" for reason in ours.reasons]
            key = paper.key if paper is not None else row.label
            texts += commit_notes(table, key)
            for text in texts:
                number = numbers.setdefault(text, len(numbers) + 1)
                if number not in per_row.setdefault(index, []):
                    per_row[index].append(number)
    return numbers, per_row


def commit_notes(table: Table, key: str) -> list[str]:
    """The note on a cell whose runs come from several commits: by the committed probes
    (results/commit_probes.json) they train it alike, or differently, or git says the training
    code may differ (a warning), or nothing (the same training code)."""
    ours = table.ours().get(key)
    alike = table.probes.get(key)
    if ours is None or (alike is None and key not in table.mixed_commits):
        return []
    commits = ", ".join(c[:10] for c in ours.commits)
    if alike:
        return [
            f"commits {commits} train the cell to the same numbers (its configuration, "
            f"{PROBE_STEPS} steps at each commit on one machine: {PROBE_FILES})"
        ]
    if alike is False:
        return [
            f"WARNING: `{key}` mixes commits that train it to different numbers ({PROBE_FILES}): "
            f"{commits}"
        ]
    return [f"WARNING: `{key}` mixes commits that may differ in training code: {commits}"]


def markdown(
    table: Table,
    agreement: Agreement,
    orders: dict[str, Agreement] | None = None,
    closing: Sequence[str] = (),
) -> str:
    """The table (paper / ours / difference sub-rows), notes, agreement and the orders of its
    halves as Markdown, then the lines `closing` (a report's: `report.Report.under_table`)."""
    paper = table.paper
    if paper.beyond:
        raise ValueError(f"{paper.experiment} is a table beyond the paper: render_beyond.markdown")
    notes, per_row = footnotes(table)
    out = [
        f"## {paper.experiment}, profile `{table.profile}`",
        "",
        f"Paper: {paper.label or 'text'} ({paper.where}). {paper.caption}",
        "",
        *md.table(_paper_header(paper), _paper_body(table, per_row)),
        "",
        LEGEND,
        *_paper_notes(paper, notes),
    ]
    commits = table.commits()
    out += [
        "",
        f"Records: {len(table.records)} ({int((table.records['status'] == 'ok').sum())} ok); "
        f"commits: {', '.join(f'`{c[:12]}`' for c in commits) or '-'}; devices: "
        f"{device_counts(table)}",
    ]
    if table.mixed_commits:
        out.append(f"WARNING: {len(table.mixed_commits)} cell(s) mix commits (see the notes).")
    out += ["", agreement_markdown(agreement)]
    if orders:
        out += ["", *orders_markdown(table, orders)]
    return "\n".join([*out, *closing]) + "\n"


def _paper_header(paper: PaperTable) -> list[str]:
    """Per column group, its columns (and its row label where the groups print their own)."""
    header = [""]
    for number, group in enumerate(paper.groups):
        header += ([f"{group}: row"] if paper.group_labels and number else []) + [
            f"{group}: {HEADERS[c]}" for c in COLUMNS
        ]
    return header


def _paper_body(table: Table, per_row: Mapping[int, list[int]]) -> list[list[str]]:
    """Per printed row, three lines: the paper's numbers, ours and the difference."""
    labels = table.paper.group_labels
    body = []
    for index, row in enumerate(table.rows):
        label = plain(row.label)
        if row.extra:  # a record's row or settings: one line of text
            label = md.text(" ".join(label.split())) + " (not in the paper)"
        for kind in ("paper", "ours", "diff"):
            cells = [f"**{label}** paper" if kind == "paper" else ""]
            for number, (paper_cell, ours) in enumerate(row.cells):
                if labels and number:
                    cells.append(plain(paper_cell.label) if paper_cell and kind == "paper" else "")
                for column in COLUMNS:
                    if kind == "paper":
                        cells.append(paper_value(paper_cell, column))
                    elif kind == "ours":
                        cells.append(
                            ours_value(ours, column) if paper_cell is None or paper_cell.key else ""
                        )
                    else:
                        cells.append(difference(paper_cell, ours, column))
            if kind == "ours":
                present = [o for _, o in row.cells if o is not None]
                cells[0] = ours_label(present[0] if present else None, per_row.get(index, []))
            elif kind == "diff":
                cells[0] = "Δ"
            body.append(cells)
    return body


def _paper_notes(paper: PaperTable, notes: Mapping[str, int]) -> list[str]:
    """What is not printed, the numbered notes, the shared rows and the paper's own notes."""
    out = ["", f"Not printed: {paper.not_printed}"] if paper.not_printed else []
    if notes:
        out += ["", "Notes:", ""] + [f"{n}. {md.one_line(text)}" for text, n in notes.items()]
    for key, reason in paper.shared.items():
        out += ["", f"Shared row `{key}`: {reason}"]
    for note in paper.notes:
        shows = f" The table shows: {note['shows']}." if note.get("shows") else ""
        values = note.get("values")
        both = f" Values: {', '.join(f'{k} {v}' for k, v in values.items())}." if values else ""
        out += ["", f"Paper note: {' '.join(note['text'].split())}{both}{shows}"]
    return out


def _tex_body(table: Table, per_row: Mapping[int, list[int]]) -> list[str]:
    """Per printed row, three LaTeX lines (the paper's numbers, ours, the difference), a rule."""
    labels = table.paper.group_labels
    body = []
    for index, row in enumerate(table.rows):
        written = not row.extra and (row.label.startswith("$") or "\\&" in row.label)
        label = row.label if written else tex_escape(row.label)  # a record's row: text only
        marks = "".join(f"$^{{{m}}}$" for m in per_row.get(index, []))
        for kind in ("paper", "ours", r"$\Delta$"):
            cells = [label if kind == "paper" else "", kind + (marks if kind == "ours" else "")]
            for number, (paper_cell, ours) in enumerate(row.cells):
                if labels and number:
                    cells.append(
                        paper_cell.label if paper_cell is not None and kind == "paper" else ""
                    )
                for column in COLUMNS:
                    if kind == "paper":
                        cells.append(tex_value(paper_value(paper_cell, column)))
                    elif kind == "ours":
                        cells.append(
                            tex_value(ours_value(ours, column))
                            if paper_cell is None or paper_cell.key
                            else ""
                        )
                    else:
                        cells.append(tex_escape(difference(paper_cell, ours, column)))
            body.append(" & ".join(cells) + r" \\")
        body.append(r"\hline")
    return body


def device_counts(table: Table) -> str:
    """`cpu 40, gpu 12`: the table's records per device they trained on."""
    where = devices(table.records)
    return ", ".join(f"{device} {len(seeds)}" for device, seeds in where.items()) or "-"


def agreement_markdown(agreement: Agreement) -> str:
    """Spearman per column and the shares within tolerance."""
    rho = ", ".join(
        f"{c} {signed(r)} (n={agreement.n_pairs[c]})" for c, r in agreement.spearman.items()
    )
    return (
        f"Agreement: Spearman rho paper vs ours: {rho}. {WITHIN[0]}: "
        f"{Agreement.share(agreement.accuracy_within)}; {WITHIN[1]}: "
        f"{Agreement.share(agreement.ratio_within)}."
    )


def orders_markdown(table: Table, orders: dict[str, Agreement]) -> list[str]:
    """Both orders of a two-half table, the compared one marked, and why it is compared so."""
    paper = table.paper
    body = [
        [
            order + (" (compared)" if order == paper.order else ""),
            *(signed(a.spearman[c]) for c in COLUMNS),
            Agreement.share(a.accuracy_within),
            Agreement.share(a.ratio_within),
        ]
        for order, a in orders.items()
    ]
    header = ["paper's halves", *(f"rho {HEADERS[c]}" for c in COLUMNS)]
    header += list(WITHIN)
    why = f" Why: {paper.order_reason}" if paper.order_reason else ""
    return [
        f"Order of the halves: the paper's values are compared (and shown above) in the "
        f"`{paper.order}` order; `header` is the printed table's order.{why}",
        "",
        *md.table(header, body),
    ]


def signed(value: float | None) -> str:
    """A correlation as printed, `-` when undefined."""
    return "-" if value is None else f"{value:+.2f}"


TEX = {"\\": r"\textbackslash{}", "^": r"\textasciicircum{}", "~": r"\textasciitilde{}"}
TEX |= {c: "\\" + c for c in "&%#_{}$"} | {"±": r"$\pm$", "Δ": r"$\Delta$", "σ": r"$\sigma$"}


def tex_escape(text: str) -> str:
    """Text for LaTeX: each special character escaped in one pass (no escape escaped again)."""
    return "".join(TEX.get(char, char) for char in text)


def tex_value(text: str) -> str:
    """A Markdown cell as LaTeX (bold kept)."""
    bold = text.startswith("**") and text.endswith("**")
    text = tex_escape(text.strip("*"))
    return rf"\textbf{{{text}}}" if bold else text


def latex(table: Table) -> str:
    """The table in the paper's layout as a LaTeX table (three sub-rows per row)."""
    paper = table.paper
    labels = paper.group_labels
    extra = [bool(labels and number) for number in range(len(paper.groups))]
    spec = "ll" + "|".join(("l" if e else "") + "r" * len(COLUMNS) for e in extra)
    groups = " & ".join(
        rf"\multicolumn{{{len(COLUMNS) + e}}}{{c}}{{{tex_escape(g)}}}"
        for g, e in zip(paper.groups, extra, strict=True)
    )
    header = " & ".join(
        " & ".join(([""] if e else []) + [TEX_HEADERS[c] for c in COLUMNS]) for e in extra
    )
    notes, per_row = footnotes(table)
    body = _tex_body(table, per_row)
    caption = tex_escape(
        f"{paper.experiment} (profile {table.profile}): the paper's {paper.label or 'text'} "
        f"({paper.where}) beside this reproduction. {paper.caption}"
        + (f" The paper's halves are compared {paper.order}." if paper.order != "header" else "")
    )
    foot = [rf"\par\footnotesize {n}. {tex_escape(text)}" for text, n in notes.items()]
    return "\n".join(
        [
            r"\begin{table}",
            r"\centering",
            r"\scriptsize",
            rf"\begin{{tabular}}{{{spec}}}",
            rf" & & {groups} \\",
            r"\hline",
            rf" & & {header} \\",
            r"\hline",
            *body,
            r"\end{tabular}",
            *foot,
            rf"\caption{{{caption}}}",
            rf"\label{{tab:ours-{paper.experiment}-{table.profile}}}",
            r"\end{table}",
            "",
        ]
    )
