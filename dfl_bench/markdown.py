"""GitHub Markdown tables, as theory/, bench/ and results/ write them."""

from __future__ import annotations

import html
import re
from collections.abc import Iterable, Sequence
from pathlib import Path

from dfl_bench import outputs


def text(value: object) -> str:
    """Text read from a file shown as text: HTML escaped and `|` kept from splitting a cell.

    >>> print(text("<script>x</script> | y"))
    &lt;script&gt;x&lt;/script&gt; \\| y
    """
    return html.escape(str(value), quote=False).replace("|", "\\|")


def one_line(note: str) -> str:
    """A note, which may quote a record (its failure, its settings), as one line of Markdown
    with no HTML: a line break or a tag in a record's text starts nothing of its own.

    >>> one_line("failed: x<img src=y>\\n# heading")
    'failed: x&lt;img src=y> # heading'
    """
    return re.sub(r"[\r\n]+", " ", note).replace("<", "&lt;")


def row(cells: Iterable[object]) -> str:
    """One table line: `| a | b |` (each cell as str)."""
    return "| " + " | ".join(str(c) for c in cells) + " |"


def table(header: Sequence[object], rows: Iterable[Iterable[object]]) -> list[str]:
    """The lines of a table: the header, its rule, one line per row."""
    return [row(header), "|" + "---|" * len(header), *(row(r) for r in rows)]


def report(path: Path, lines: Sequence[str], mark: outputs.Mark) -> str:
    """Write a Markdown report (its lines, newline-joined; `outputs.write_text`: a new file or
    one carrying `mark`) to `path`, print it and return it."""
    text = "\n".join(lines)
    outputs.write_text(path, text, mark)
    print(text)
    return text
