"""GitHub Markdown tables, as theory/, bench/ and results/ write them."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path


def row(cells: Iterable[object]) -> str:
    """One table line: `| a | b |` (each cell as str)."""
    return "| " + " | ".join(str(c) for c in cells) + " |"


def table(header: Sequence[object], rows: Iterable[Iterable[object]]) -> list[str]:
    """The lines of a table: the header, its rule, one line per row."""
    return [row(header), "|" + "---|" * len(header), *(row(r) for r in rows)]


def report(path: Path, lines: Sequence[str]) -> str:
    """Write a Markdown report (its lines, newline-joined) to `path`, print it and return it."""
    text = "\n".join(lines)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    print(text)
    return text
