"""A rendering reads its old table (its ok runs: kept where the new one has fewer) before it
replaces it, as `untrusted.read_text` reads: a pipe there (or a link to one) is refused, not
waited on for ever; a folder or a link is one line, exit 2, never a traceback."""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from pathlib import Path

import pytest

from dfl_bench.untrusted import UntrustedFile, read_text

ROOT = Path(__file__).resolve().parents[2]


def _within(seconds: float, call: Callable[[], object], pipe: Path) -> object:
    """`call()` in a thread; where it still waits after `seconds` (on the pipe at `pipe`), the
    pipe is opened to let it go and the test fails."""
    result: list[object] = []
    reader = threading.Thread(target=lambda: result.append(call()), daemon=True)
    reader.start()
    reader.join(timeout=seconds)
    if reader.is_alive():
        with open(pipe, "w"):
            pass
        reader.join(timeout=seconds)
        pytest.fail(f"still waiting on the pipe {pipe} after {seconds} s")
    return result[0]


def _plant(kind: str, path: Path, elsewhere: Path) -> Path:
    """A `kind` of no plain file at `path`; the pipe (or `path`) a waiting reader waits on."""
    if kind == "a pipe":
        os.mkfifo(path)
    elif kind == "a link to a pipe":
        os.mkfifo(elsewhere)
        path.symlink_to(elsewhere)
        return elsewhere
    elif kind == "a folder":
        path.mkdir()
    else:
        path.symlink_to(ROOT / "README.md")
    return path


SAID = {
    "a pipe": "not a plain file (a pipe, a device or a socket)",
    "a link to a pipe": "a symbolic link (not followed)",
    "a folder": "a folder, not a file",
    "a link to a file": "a symbolic link (not followed)",
}


@pytest.mark.parametrize("kind", SAID)
def test_read_text_reads_a_plain_file_only(kind, tmp_path):
    pipe = _plant(kind, tmp_path / "old.md", tmp_path / "elsewhere")

    def refused() -> str:
        with pytest.raises(UntrustedFile) as raised:
            read_text(tmp_path / "old.md")
        return str(raised.value)

    assert _within(30, refused, pipe) == f"{tmp_path / 'old.md'}: {SAID[kind]}"
    with pytest.raises(FileNotFoundError):
        read_text(tmp_path / "none.md")
    (tmp_path / "latin.md").write_bytes(b"caf\xe9")
    with pytest.raises(
        UntrustedFile, match=r"latin.md: not UTF-8 text \(unexpected end of data at byte 3\)$"
    ):
        read_text(tmp_path / "latin.md")


@pytest.mark.parametrize("kind", ["a pipe", "a link to a pipe", "a folder"])
def test_an_old_table_that_is_no_plain_file_is_one_line_and_exit_2(kind, tmp_path, capsys):
    """`python -m campaign --tables <table>` over a records folder whose tables/<table>.md is
    no plain file: refused in one line naming it, the thing there left as it was."""
    from dfl_bench.results.__main__ import main

    records = tmp_path / "records"
    (records / "formulas").mkdir(parents=True)
    committed = next((ROOT / "results" / "records" / "formulas").glob("*.json"))
    (records / "formulas" / committed.name).write_bytes(committed.read_bytes())
    (records / "tables").mkdir()
    table = records / "tables" / "formulas.md"
    pipe = _plant(kind, table, tmp_path / "elsewhere")
    argv = ["--records-dir", str(records), "--tables", "formulas", "--profile", "long"]
    assert _within(120, lambda: main(argv), pipe) == 2
    err = capsys.readouterr().err
    assert err == f"[dfl_bench.results] error: {table}: {SAID[kind]}\n"
    assert table.is_dir() if kind == "a folder" else not table.is_file()
