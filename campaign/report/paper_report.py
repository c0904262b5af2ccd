"""The paper campaign's report (`python -m campaign`; the framework's `Report` hooks): the paper's
claims decided on each profile (profile_verdicts.py), in words under each table, in the index,
in tables/verdicts.md and in the write-up (results/README.md: verdict_report.py, beyond_words.py,
writeup.py)."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from functools import partial
from pathlib import Path

import pandas as pd

from campaign.report import beyond_words, budget_runs, verdict_report, writeup
from campaign.report.claims import SECTIONS, VERDICTS, Claim, Verdict
from campaign.report.profile_verdicts import Decided, decide
from dfl_bench import markdown as md
from dfl_bench import outputs
from dfl_bench.results.cell_configs import PAPER_PROFILE
from dfl_bench.results.paper import Paper
from dfl_bench.results.profile_results import Rendered
from dfl_bench.results.report import Report
from dfl_bench.untrusted import read_text

ClaimVerdicts = list[tuple[Claim, Verdict, Verdict]]  # a claim, on the paper's numbers, on ours


class PaperReport(Report):
    """The paper's claims in the framework's files and the write-up's."""

    columns = (
        "claims paper (holds/fails/inconclusive/n.m.)",
        "claims ours",
        "ours differ on best",
        "ours differ paired by seed",
    )

    def decide(self, r: Rendered, paper: Paper, frame: pd.DataFrame, repo: Path) -> Decided:
        return decide(r, paper, frame, repo)

    def under_table(self, r: Decided, name: str) -> list[str]:
        mine = of_table(r, name)
        return ["", claims_markdown(mine, r.on_paired)] if mine else []

    def index_opening(self) -> str:
        return (
            " Claims are checked on the paper's own numbers and on ours; `not measurable` means "
            "a needed cell is missing, failed, undefined or not printed.\n\n"
            + "\n".join(verdict_report.rules())
        )

    def index_cells(self, r: Decided, name: str) -> list[str]:
        mine = of_table(r, name)
        return [
            _counts([p for _, p, _ in mine]),
            _counts([o for _, _, o in mine]),
            _differ(mine, r.on_best),
            _differ(mine, r.on_paired),
        ]

    def index_sections(self, r: Decided) -> list[str]:
        lines = []
        for section, title in SECTIONS.items():
            lines += ["", f"### {title}", "", claims_markdown(of_table(r, section), r.on_paired)]
        return lines

    def index_closing(self, r: Decided) -> list[str]:
        return budget_runs.runs_table(r) if r.profile == PAPER_PROFILE else []

    def files(self, results: Sequence[Decided], out: Path) -> dict[Path, outputs.Mark]:
        """tables/verdicts.md and, where `out` holds the records, the searches' pages (`write`'s
        files that carry a Mark; results/README.md is patched between its markers)."""
        files = {out / "tables" / "verdicts.md": outputs.RENDERED[".md"]}
        if (out / "records").is_dir():
            files |= {path: mark for path, (mark, _) in writeup.searches(out).items()}
            files[writeup.final_figure_path(out)] = outputs.PNG
        return files

    def write(self, results: Sequence[Decided], out: Path, command: str) -> list[Path]:
        """tables/verdicts.md, then the write-up's blocks (results/README.md, where it has their
        markers: `readme_blocks`, then the campaign's, writeup.py)."""
        verdicts = out / "tables" / "verdicts.md"
        page = verdict_report.markdown_text(results, command)
        outputs.write_text(verdicts, page, outputs.RENDERED[".md"])  # new, or a rendering's
        written, readme = [verdicts], out / "README.md"
        text = read_text(readme) if readme.exists() else ""
        for begin, end, block in readme_blocks(results):
            if begin in text and verdict_report.patch(readme, block(), begin, end):
                written.append(readme)
        return written + writeup.write(results, out)


def readme_blocks(results: Sequence[Decided]) -> Iterator[tuple[str, str, Callable[[], str]]]:
    """The write-up's blocks of the verdicts, each its markers and what renders it (called only
    where the write-up has the markers): the summary, its glance, then per table beyond the
    paper its rows, its words, its sentence beside published numbers (at the profile its
    records have, and at each profile with its records) and its runs by seed; then the
    contrasts between rows of two tables."""
    yield verdict_report.BEGIN, verdict_report.END, lambda: verdict_report.summary(results)
    yield *verdict_report.FRONT_MARKERS, lambda: verdict_report.front_verdicts(results)
    for name in (n for n, t in results[0].tables.items() if t.paper.beyond):
        yield *beyond_words.table_markers(name), partial(beyond_words.table_block, name, results)
        yield *beyond_words.beyond_markers(name), partial(beyond_words.beyond_block, name, results)
        yield *beyond_words.seeds_markers(name), partial(beyond_words.seeds_block, name, results)
        if not results[0].tables[name].paper.published:
            continue
        block = partial(beyond_words.published_block, name, results)
        yield *beyond_words.published_markers(name), block
        for profile in (r.profile for r in results):
            yield *beyond_words.published_markers(name, profile), partial(block, profile)
    for name in beyond_words.CONTRASTS:
        block = partial(beyond_words.contrast_block, name, results)
        yield *beyond_words.contrast_markers(name), block


def of_table(r: Decided, name: str) -> ClaimVerdicts:
    """The claims of table (or section) `name` with their verdicts at `r.profile`."""
    return [v for v in r.verdicts if v[0].experiment == name]


def claims_markdown(verdicts: ClaimVerdicts, paired: Mapping[str, Verdict] | None = None) -> str:
    """A table's claims: the paper's sentence, the verdict on the paper's numbers and on ours;
    where ours paired by seed (`paired`, claim name -> Verdict) differs, that verdict after it."""
    rows = [
        [
            f"`{item.name}` ({item.where})",
            item.sentence,
            f"**{on_paper.status}**: {on_paper.detail}",
            f"**{on_ours.status}**: {on_ours.detail}"
            + (
                " (as coded, the paper's own numbers fail it too)"
                if on_paper.status == "fails"
                else ""
            )
            + _paired_note(on_ours, (paired or {}).get(item.name)),
        ]
        for item, on_paper, on_ours in verdicts
    ]
    header = ["claim", "paper's sentence", "on the paper's numbers", "on ours"]
    return "\n".join(md.table(header, rows))


def _paired_note(ours: Verdict, paired: Verdict | None) -> str:
    """The verdict paired by seed where it differs from ours (a secondary view: decides
    nothing), else nothing."""
    if paired is None or paired.status == ours.status:
        return ""
    return f". Paired by seed (secondary, decides nothing): **{paired.status}**: {paired.detail}"


def _differ(mine: ClaimVerdicts, other: Mapping[str, Verdict]) -> str:
    """How many of a table's verdicts on ours differ in `other` (claim name -> Verdict)."""
    return str(sum(o.status != other[item.name].status for item, _, o in mine)) if mine else "-"


def _counts(verdicts: list[Verdict]) -> str:
    """`holds/fails/inconclusive/not measurable` counts."""
    if not verdicts:
        return "-"
    count = {s: sum(v.status == s for v in verdicts) for s in VERDICTS}
    return "/".join(str(n) for n in count.values())
