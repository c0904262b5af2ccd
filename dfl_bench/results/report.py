"""What a report adds to a rendering of the records (`publish.build`, `publish.write`): its
decisions on each profile's tables, their words in the framework's files (a paper table's file,
the index) and files of its own. `Report` itself adds nothing (`PLAIN`: an experiment's tables
render without one); this repository's paper campaign passes the paper's claims (campaign/report/,
`python -m campaign`)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pandas as pd

    from dfl_bench.outputs import Mark
    from dfl_bench.results.paper import Paper
    from dfl_bench.results.profile_results import Rendered


class Report:
    """The hooks of a report, in the order a rendering calls them; here each adds nothing."""

    columns: tuple[str, ...] = ()  # the index's columns after the framework's (`index_cells`)

    def decide(self, r: Rendered, paper: Paper, frame: pd.DataFrame, repo: Path) -> Rendered:
        """One profile's rendering with the report's decisions on its tables."""
        return r

    def under_table(self, r: Rendered, name: str) -> list[str]:
        """Lines that close a paper table's section of its file, after its agreement."""
        return []

    def index_opening(self) -> str:
        """What the index's opening paragraph goes on to say (and paragraphs of its own)."""
        return ""

    def index_cells(self, r: Rendered, name: str) -> list[str]:
        """Table `name`'s cells of `columns` in the index's table of `r.profile`."""
        return []

    def index_sections(self, r: Rendered) -> list[str]:
        """Lines of the index's section of `r.profile` after its tables' orders."""
        return []

    def index_closing(self, r: Rendered) -> list[str]:
        """Lines that close the index's section of `r.profile`, after the seed spread."""
        return []

    def files(self, results: Sequence[Rendered], out: Path) -> dict[Path, Mark]:
        """The report's own files `write` may write under `out`, each with its Mark."""
        return {}

    def write(self, results: Sequence[Rendered], out: Path, command: str) -> list[Path]:
        """The report's own files under `out`, written after the framework's by a rendering of
        every profile present (they sum every profile): the paths written."""
        return []


PLAIN = Report()  # the framework's rendering alone
