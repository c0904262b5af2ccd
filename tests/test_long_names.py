"""A name longer than this system allows (an --out of 300 characters) is one UntrustedFile line
naming it, shortened (`untrusted.shown`), wherever the reader or the writer checks a name, and
a tool given one exits 2 with that line, nothing written."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from campaign import collapse_search, commit_probe, recipe_search
from dfl_bench.untrusted import (
    NAME_BYTES,
    UntrustedFile,
    out_folder,
    read_json,
    shown,
    unlinked,
    write_text,
)

LONG = "p" * 300
SAID = f"{'p' * 40}...(305 characters): a name longer than this system allows (File name too long)"


@pytest.mark.parametrize("check", [unlinked, read_json, lambda p: write_text(p, "{}")])
def test_a_name_too_long_is_one_line_naming_it_shortened(tmp_path, check):
    with pytest.raises(UntrustedFile) as raised:
        check(tmp_path / f"{LONG}.json")
    assert str(raised.value) == f"{tmp_path}/{SAID}"
    assert raised.value.path == tmp_path / f"{LONG}.json"  # the path itself, whole
    assert os.listdir(tmp_path) == []


def test_a_folder_too_long_or_that_cannot_be_made_is_one_line_and_nothing_is_made(tmp_path):
    with pytest.raises(UntrustedFile, match=r"\.\.\.\(300 characters\): a name longer"):
        out_folder(tmp_path / LONG, "README.md")
    (tmp_path / "file").write_text("")
    with pytest.raises(UntrustedFile, match=r"file/sub: no folder can be made there \(Not a"):
        out_folder(tmp_path / "file" / "sub")
    assert os.listdir(tmp_path) == ["file"]


@pytest.mark.parametrize(
    ("tool", "out"),
    [(commit_probe, f"{LONG}.json"), (recipe_search, LONG), (collapse_search, LONG)],
)
def test_each_tool_given_an_out_too_long_exits_2_with_one_line(tmp_path, capsys, tool, out):
    (tmp_path / "records").mkdir()
    argv = ["--records-dir", str(tmp_path / "records"), "--out", str(tmp_path / out)]
    assert tool.main(argv) == 2
    said = capsys.readouterr().err
    name, error = tool.__name__.split(".")[-1], "" if tool is commit_probe else "error: "
    prefix = f"[{name}] {error}{tmp_path}/{'p' * 40}...({len(out)} characters)"
    assert said.startswith(prefix) and said.count("\n") == 1
    assert os.listdir(tmp_path) == ["records"]


chars = st.characters(blacklist_characters="/\0", blacklist_categories=["Cs"])
names = st.text(chars, min_size=1) | st.builds(str.__mul__, chars, st.integers(60, 400))


@given(st.lists(names, min_size=1, max_size=4))
def test_a_path_shows_as_itself_but_each_name_too_long_cut_short(parts):
    path = Path("/", *parts)
    kept = [p for p in path.parts if len(p.encode()) <= NAME_BYTES]
    if len(kept) == len(path.parts):
        assert shown(path) == str(path)
    else:
        assert len(shown(path)) < len(str(path))
        assert set(kept) <= set(Path(shown(path)).parts)
