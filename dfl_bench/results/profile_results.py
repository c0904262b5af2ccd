"""What rendering one profile gives (`publish.build`): its tables, agreements and the paper's
noise, the one value a report (`report.Report`), the W&B tables and the files (`publish`) read."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from dfl_bench.results.cells import row_configuration
from dfl_bench.results.stats import MIN_SEEDS

if TYPE_CHECKING:
    from dfl_bench.results.agreement import Agreement
    from dfl_bench.results.cells import Table
    from dfl_bench.results.paper import Noise


@dataclass(frozen=True)
class Rendered:
    """One profile's tables and agreements."""

    profile: str
    tables: dict[str, Table]
    agreements: dict[str, Agreement]
    selected: tuple[str, ...]  # the tables whose files are (re)written; the index lists all
    orders: dict[str, dict[str, Agreement]]  # two-half tables compared out of header order
    noise: Noise  # the paper's (its cells are single runs); ours compare their own seeds

    def cell_seeds(self, beyond: bool = False) -> dict[str, int]:
        """Every cell of the paper's tables at this profile (those beyond the paper with
        `beyond`) once (its configuration; a row of two tables is one cell), with its ok seeds;
        a cell without records counts 0. Other configurations of a row (labelled rows of their
        own) are no cells of the tables."""
        cells: dict[str, int] = {}
        for table in self.tables.values():
            if table.paper.beyond != beyond:
                continue
            ours = table.ours()
            for key in table.paper.keys():
                mine = ours.get(key)
                digest = mine.configuration if mine is not None else None
                digest = digest or row_configuration(table.paper, table.profile, key)
                digest = digest or f"{table.paper.experiment}/{key}"
                cells[digest] = max(cells.get(digest, 0), mine.n["accuracy"] if mine else 0)
        return cells

    def seeded(self) -> str:
        """The paper's cells with enough seeds to decide a comparison, of all, and the seeds
        missing; then the same of the tables beyond the paper."""

        def count(cells: dict[str, int]) -> str:
            missing = sum(max(0, MIN_SEEDS - n) for n in cells.values())
            enough = sum(n >= MIN_SEEDS for n in cells.values())
            return f"{enough} of {len(cells)} ({missing} seeds missing)"

        return f"{count(self.cell_seeds())}; beyond the paper {count(self.cell_seeds(True))}"
