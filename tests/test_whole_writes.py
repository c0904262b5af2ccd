"""A whole file the framework writes (`untrusted.writer` "w", `write_text`, `write_bytes`) is put
at its name only once written whole: a write cut off (a full disk, a file-size limit) leaves the
file there byte for byte as it was, no temporary beside it, and one NotWritten line naming it."""

from __future__ import annotations

import errno
import gc
import importlib
import json
import os
import resource
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from dfl_bench import untrusted
from dfl_bench.untrusted import NotWritten, UntrustedFile, write_text, writer

ROOT = Path(__file__).resolve().parent.parent
FAILURES = ("write", "fsync", "replace")


def _no_room(*args: object, **kwargs: object) -> None:
    raise OSError(errno.ENOSPC, "No space left on device")


@given(
    old=st.binary(max_size=3000),
    new=st.binary(min_size=1, max_size=30000),
    cut=st.floats(0, 1),
    binary=st.booleans(),
    fails=st.sampled_from(FAILURES),
)
def test_a_write_that_fails_anywhere_leaves_the_old_file_and_no_temporary(
    old, new, cut, binary, fails
):
    """Whether the disk fills while the caller writes, at the fsync or at the os.replace, the
    file keeps its old bytes, its folder holds nothing else, and the error names the file."""
    text = new.decode("latin-1")  # any bytes, as text too
    with tempfile.TemporaryDirectory() as folder, pytest.MonkeyPatch.context() as patch:
        path = Path(folder) / "probes.json"
        path.write_bytes(old)
        if fails != "write":
            patch.setattr(untrusted.os, fails, _no_room)
        with pytest.raises(NotWritten) as raised:
            with writer(path, "wb" if binary else "w") as out:
                whole = new if binary else text
                out.write(whole[: int(cut * len(whole))])
                out.flush()  # the part written reaches the temporary
                if fails == "write":
                    _no_room()
                out.write(whole[int(cut * len(whole)) :])
        patch.undo()
        assert path.read_bytes() == old
        assert os.listdir(folder) == ["probes.json"]
    said = str(raised.value)
    assert said == f"{path}: not written (No space left on device); the file there is as it was"
    assert raised.value.strerror == "No space left on device"  # as an OSError's reason
    assert isinstance(raised.value, OSError) and isinstance(raised.value, UntrustedFile)


@given(old=st.binary(max_size=3000), new=st.binary(max_size=30000))
def test_a_whole_write_puts_exactly_the_new_bytes_at_the_name(old, new):
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "table.md"
        path.write_bytes(old)
        untrusted.write_bytes(path, new)
        assert path.read_bytes() == new and os.listdir(folder) == ["table.md"]


def test_an_error_that_is_no_os_error_leaves_the_old_file_and_goes_on_as_it_was(tmp_path):
    path = write_text(tmp_path / "plan.json", "old\n")
    with pytest.raises(KeyError, match="mine"):
        with writer(path) as out:
            out.write("half")
            raise KeyError("mine")
    assert path.read_text() == "old\n" and os.listdir(tmp_path) == ["plan.json"]


def test_a_file_dropped_before_its_close_is_never_put_at_its_name(tmp_path):
    """An error between `writer(...)` and its `with` block (cuda_session opens, then packs)."""
    path = write_text(tmp_path / "records.tar.gz", "old\n")
    out = writer(path)
    out.write("part")
    del out
    gc.collect()
    assert path.read_text() == "old\n" and os.listdir(tmp_path) == ["records.tar.gz"]


def test_a_folder_at_a_files_name_is_one_line_and_nothing_is_written(tmp_path):
    (tmp_path / "traces.json").mkdir()
    with pytest.raises(UntrustedFile, match=r"traces.json: a folder, not a file$"):
        write_text(tmp_path / "traces.json", "{}")
    assert os.listdir(tmp_path) == ["traces.json"]


def test_a_probe_file_cut_off_by_a_file_size_limit_is_kept_byte_for_byte(tmp_path):
    """commit_probe rewrites its probe file (here 100 probed cells, 161 KB) under `ulimit -f 64`:
    it exits 2 with one line naming the file, which keeps every probe."""
    from campaign.commit_probe import machine

    probes = json.loads((ROOT / "results" / "commit_probes.json").read_text())
    probes["machine"] = machine()
    out = tmp_path / "probes.json"
    out.write_text(json.dumps(probes, indent=1, sort_keys=True) + "\n")
    before = out.read_bytes()
    assert len(before) > 2 * 65536
    (tmp_path / "records").mkdir()
    argv = ["--records-dir", str(tmp_path / "records"), "--out", str(out), "--cells", "zzzz"]
    done = subprocess.run(
        [sys.executable, "-m", "campaign.commit_probe", *argv],
        cwd=ROOT,
        env={**os.environ, "DFL_BENCH_CACHE": "off", "PYTHONDONTWRITEBYTECODE": "1"},
        preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_FSIZE, (65536, 65536)),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 2, done.stderr
    assert done.stderr == (
        f"[commit_probe] {out}: not written (File too large); the file there is as it was\n"
    )
    assert out.read_bytes() == before
    assert sorted(os.listdir(tmp_path)) == ["probes.json", "records"]


def test_a_log_grows_in_place_readable_while_it_is_written(tmp_path):
    """A log ("a": a run's output) is at its name from its first line on, and kept as it is
    where its writing stops with an error."""
    path = tmp_path / "run.log"
    with pytest.raises(RuntimeError):
        with writer(path, "a") as log:
            log.write("first line\n")
            log.flush()
            assert path.read_text() == "first line\n"
            raise RuntimeError("killed")
    assert path.read_text() == "first line\n"


@pytest.mark.parametrize("binary", [False, True])
def test_a_temporary_that_cannot_be_made_is_one_line_naming_the_file(
    tmp_path, refuse_temporary, binary
):
    path = write_text(tmp_path / "table.md", "old\n")
    refuse_temporary()
    with pytest.raises(NotWritten) as raised:
        writer(path, "wb" if binary else "w")
    assert str(raised.value) == (
        f"{path}: not written (Permission denied); the file there is as it was"
    )
    assert path.read_text() == "old\n" and os.listdir(tmp_path) == ["table.md"]


def _probe_file(folder: Path) -> Path:
    """A probe file of this machine, as commit_probe rewrites it."""
    from campaign.commit_probe import machine

    probes = json.loads((ROOT / "results" / "commit_probes.json").read_text())
    return write_text(folder / "probes.json", json.dumps({**probes, "machine": machine()}))


@pytest.mark.parametrize("tool", ["commit_probe", "recipe_search", "collapse_search"])
def test_each_tool_whose_temporary_cannot_be_made_exits_2_with_one_line(
    tool, tmp_path, refuse_temporary, capsys
):
    """A read-only --out folder: one line naming the file, exit 2, its old file as it was and
    nothing beside it."""
    records, out = tmp_path / "records", tmp_path / "out"
    records.mkdir()
    out.mkdir()
    if tool == "commit_probe":
        target = _probe_file(out)
        argv = ["--out", str(target), "--cells", "zzzz"]
    else:
        name = "README.md" if tool == "collapse_search" else "digit_ceiling_search.md"
        # its own old page (any other file there is refused: outputs.replaceable)
        target = write_text(out / name, f"# old\n\nGenerated by `python -m campaign.{tool}`\n")
        argv = ["--out", str(out)]
    before = target.read_bytes()
    refuse_temporary()
    main = importlib.import_module(f"campaign.{tool}").main
    assert main(["--records-dir", str(records), *argv]) == 2
    said = capsys.readouterr().err
    error = "" if tool == "commit_probe" else "error: "  # outputs.refused's words
    assert said == (
        f"[{tool}] {error}{target}: not written (Permission denied); the file there is as it was\n"
    )
    assert target.read_bytes() == before and os.listdir(out) == [target.name]
