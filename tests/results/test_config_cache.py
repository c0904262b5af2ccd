"""Composed configs kept on disk (results/config_cache.py): read back while conf/ and the code
are unchanged, recomputed when a file changes or caching is off; a plan is the same either way."""

from __future__ import annotations

import os
import stat

import pytest

from dfl_bench import cache_place, untrusted
from dfl_bench.reproduction import plan
from dfl_bench.results import config_cache


@pytest.fixture
def cache_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("DFL_BENCH_CACHE", str(tmp_path / "cache"))
    return tmp_path / "cache"


def test_a_kept_value_is_read_back_and_off_computes_every_time(cache_dir, monkeypatch):
    calls = []

    def compute():
        calls.append(1)
        return {"x": [1, 2.5, None]}

    assert config_cache.cached("t", ["k", 1], compute) == {"x": [1, 2.5, None]}
    assert config_cache.cached("t", ["k", 1], compute) == {"x": [1, 2.5, None]}
    assert len(calls) == 1 and len(list(cache_dir.rglob("*.json"))) == 1
    config_cache.cached("t", ["k", 2], compute)  # another key: computed
    assert len(calls) == 2
    monkeypatch.setenv("DFL_BENCH_CACHE", "off")
    config_cache.cached("t", ["k", 1], compute)
    assert len(calls) == 3


def test_a_file_in_the_cache_that_is_no_json_of_ours_is_computed_again(cache_dir):
    """The cache folder is anyone's: a 300,000-deep file (or a link) there is no value, computed
    again and replaced, never a RecursionError."""
    assert config_cache.cached("t", ["k"], lambda: [1]) == [1]
    (kept,) = cache_dir.rglob("*.json")
    kept.write_text("[" * 300_000 + "]" * 300_000)
    assert config_cache.cached("t", ["k"], lambda: [2]) == [2]
    assert kept.read_text() == "[2]"


def test_the_fingerprint_follows_every_file_a_config_depends_on(tmp_path, monkeypatch):
    conf, package = tmp_path / "conf", tmp_path / "pkg"
    (conf / "tnorm").mkdir(parents=True)
    package.mkdir()
    (conf / "tnorm" / "product.yaml").write_text("name: product\n")
    (package / "registry.py").write_text("P = 1\n")
    monkeypatch.setattr(config_cache, "CONFIG_DIR", str(conf))
    monkeypatch.setattr(config_cache, "PACKAGE", package)

    def fingerprint():
        config_cache.fingerprint.cache_clear()
        return config_cache.fingerprint()

    try:
        first = fingerprint()
        (conf / "tnorm" / "product.yaml").write_text("name: product\np: 2\n")
        second = fingerprint()
        (package / "registry.py").write_text("P = 2\n")
        third = fingerprint()
        assert len({first, second, third}) == 3
        (conf / "tnorm" / "product.yaml").write_text("name: product\n")
        (package / "registry.py").write_text("P = 1\n")
        assert fingerprint() == first
        (package / "results").mkdir()
        # renders, composes none
        (package / "results" / "render_paper.py").write_text("WIDTH = 80\n")
        assert fingerprint() == first
        (package / "results" / "cell_configs.py").write_text("SEEDS = 3\n")
        assert fingerprint() != first
        (package / "results" / "cell_configs.py").unlink()
        (package / "reproduction").mkdir()
        (package / "reproduction" / "plan.py").write_text("SEEDS = 3\n")  # plans: composes
        assert fingerprint() != first
    finally:
        config_cache.fingerprint.cache_clear()


def test_a_plan_from_the_cache_is_the_plan_composed(tmp_path, cache_dir, monkeypatch):
    cold = plan.plan(["best", "baseline"], "smoke", 2, tmp_path / "records")
    assert len(list(config_cache.folder().joinpath("plan").glob("*.json"))) == 2

    def refused(*args):
        raise AssertionError("composed although the cache holds the experiment")

    monkeypatch.setattr(plan, "experiment_jobs", refused)
    assert plan.plan(["best", "baseline"], "smoke", 2, tmp_path / "records") == cold
    monkeypatch.undo()
    monkeypatch.setenv("DFL_BENCH_CACHE", "off")
    assert plan.plan(["best", "baseline"], "smoke", 2, tmp_path / "records") == cold


def test_invalid_jobs_are_named_every_time_and_never_kept(tmp_path, cache_dir):
    for _ in range(2):
        with pytest.raises(ValueError, match=r"2 invalid job\(s\): default seed=0"):
            plan.plan(["default"], "smoke", 2, tmp_path, overrides=["tnorm.p=-1"])
    assert not list(cache_dir.rglob("*.json"))


def test_a_value_computed_while_the_files_changed_is_not_kept(cache_dir, monkeypatch):
    """A file edited after this process loaded its code: what the old code computed is not
    filed under the new code's fingerprint (a later process would read it as the new code's)."""
    monkeypatch.setattr(config_cache, "files_fingerprint", lambda: "edited since")
    assert config_cache.cached("t", ["k"], lambda: None) is None
    assert not list(cache_dir.rglob("*.json"))
    monkeypatch.undo()
    monkeypatch.setenv("DFL_BENCH_CACHE", str(cache_dir))
    assert config_cache.cached("t", ["k"], lambda: {"now": 1}) == {"now": 1}
    assert len(list(cache_dir.rglob("*.json"))) == 1


def test_a_cell_composes_inside_a_running_hydra_app_and_leaves_the_app_as_it_was(cache_dir):
    """A multirun's sweeper prints its table from inside Hydra's app: a cell composes there
    too (it once came back None there, and the cache kept the None for every later process)."""
    from hydra import initialize_config_dir
    from hydra.core.global_hydra import GlobalHydra

    from dfl_bench.paths import CONFIG_DIR
    from dfl_bench.results import cell_configs

    cell_configs.cell_config.cache_clear()
    with initialize_config_dir(config_dir=CONFIG_DIR, version_base="1.3"):
        app = GlobalHydra.instance().hydra
        config = cell_configs.cell_config("mnist_addition", "smoke", "row", "product_sum_n2")
        assert config is not None and config["task"]["digits"] == 2
        assert GlobalHydra.instance().hydra is app
    cell_configs.cell_config.cache_clear()


@pytest.mark.parametrize(
    "planted",
    [
        5,  # no list
        [["a"]],  # no [overrides, experiment, hash]
        [[["seed=0"], "../..", "0123456789abcdef"]],  # a folder outside the records
        [[["seed=0"], "default", "../../etc/passwd"]],  # no config hash
        [[["seed=0", "\x1b[31m=x"], "default", "0123456789abcdef"]],  # no printable override
        [[["row=x"], "default", "0123456789abcdef"]],  # no seed of the plan's
    ],
)
def test_a_planted_plan_in_the_cache_of_another_shape_is_computed_again(
    planted, tmp_path, cache_dir
):
    """The cache folder is anyone's: a plan's entry that is no list of [overrides, experiment,
    hash] of plain names (it gave a traceback, or a job path outside the records folder) is a
    miss, computed again and replaced."""
    import json

    first = plan.plan(["default"], "smoke", 1, tmp_path)
    (kept,) = cache_dir.rglob("plan/*.json")
    kept.write_text(json.dumps(planted))
    again = plan.plan(["default"], "smoke", 1, tmp_path)
    assert again == first and all(job.path.parent.parent == tmp_path.resolve() for job in again)
    assert json.loads(kept.read_text()) != planted


def _planted(cache_dir, where: str) -> tuple:
    """A kept value of ours replaced by another one, and the place `where` of its cache made
    writable by others: (the entry, the place)."""
    (entry,) = cache_dir.rglob("t/*.json")
    entry.write_text("[666]")
    place = {
        "root": cache_dir,
        "configs": cache_dir / "configs",
        "fingerprint": entry.parent.parent,
        "kind": entry.parent,
        "entry": entry,
    }[where]
    place.chmod(place.stat().st_mode | stat.S_IWOTH)
    return entry, place


@pytest.mark.parametrize("where", ["root", "configs", "fingerprint", "kind", "entry"])
def test_a_cache_another_user_could_write_is_neither_read_nor_written(where, cache_dir, capsys):
    """A cache from others decides nothing: where the cache folder, a folder of it or the entry
    is writable by others, the value is computed (the planted one never read, nothing kept
    there) and that is said once on stderr, naming the place."""
    assert config_cache.cached("t", ["k"], lambda: [1]) == [1]
    entry, place = _planted(cache_dir, where)
    for _ in range(2):
        assert config_cache.cached("t", ["k"], lambda: [2]) == [2]
    assert entry.read_text() == "[666]"
    (line,) = capsys.readouterr().err.splitlines()
    assert f"[cache] not used: {place} is writable by its group or others" in line
    place.chmod(place.stat().st_mode & ~stat.S_IWOTH)  # as the user's own, it is read
    assert config_cache.cached("t", ["k"], lambda: [2]) == [666]


def test_a_linked_entry_or_one_of_another_user_is_not_read(cache_dir, tmp_path, capsys):
    assert config_cache.cached("t", ["k"], lambda: [1]) == [1]
    (entry,) = cache_dir.rglob("t/*.json")
    entry.unlink()
    (tmp_path / "elsewhere.json").write_text("[666]")
    entry.symlink_to(tmp_path / "elsewhere.json")
    assert config_cache.cached("t", ["k"], lambda: [2]) == [2]
    assert "is a symbolic link or no folder or plain file" in capsys.readouterr().err
    if os.geteuid() == 0:  # only root can give a file to another user
        entry.unlink()
        entry.write_text("[666]")
        os.chown(entry, 12345, 12345)
        assert config_cache.cached("t", ["k"], lambda: [3]) == [3]
        assert "is owned by another user (uid 12345)" in capsys.readouterr().err


def test_the_cache_makes_its_folders_for_this_user_only_whatever_the_umask(cache_dir):
    old = os.umask(0o002)
    try:
        assert config_cache.cached("t", ["k"], lambda: [1]) == [1]
    finally:
        os.umask(old)
    (entry,) = cache_dir.rglob("t/*.json")
    with cache_place.own_folder(entry.parent, cache_dir) as at:  # every part this user's own
        assert untrusted.read_json(entry, object, within=at) == [1]
    folders = [p for p in (cache_dir, *cache_dir.rglob("*")) if p.is_dir()]
    assert len(folders) == 4 and all(p.stat().st_mode & 0o077 == 0 for p in folders)
    assert config_cache.cached("t", ["k"], lambda: [2]) == [1]


def test_a_planted_plan_or_cell_in_a_cache_others_could_write_decides_nothing(tmp_path, cache_dir):
    """A well-formed plan entry that points best's kb=sum9 jobs at the kb=both records, and a
    cell entry that changes the row's configuration, are not read from a cache others could
    write: the jobs and the cell are the ones composed."""
    import json

    from dfl_bench.results import cell_configs

    honest = plan.plan(["best"], "smoke", 1, tmp_path)
    cell_configs.cell_config.cache_clear()
    config = cell_configs.cell_config("best", "smoke", "kb.name", "sum9")
    (kept,) = cache_dir.rglob("plan/*.json")
    jobs = json.loads(kept.read_text())
    both = next(digest for job, _, digest in jobs if "kb=both" in job)
    kept.write_text(json.dumps([[job, e, both] for job, e, _ in jobs]))
    (cell,) = cache_dir.rglob("cell/*.json")
    cell.write_text(json.dumps({**config, "model": {**config["model"], "ntn_k": -5}}))
    cache_dir.chmod(0o777)
    cell_configs.cell_config.cache_clear()
    try:
        assert plan.plan(["best"], "smoke", 1, tmp_path) == honest
        assert cell_configs.cell_config("best", "smoke", "kb.name", "sum9") == config
    finally:
        cell_configs.cell_config.cache_clear()


def _exchange(place, forged_entry, value):
    """Move the folder `place` of a cache aside (to `<place>.moved`) and put at its name a
    folder of the same names holding `value` at `forged_entry`: what a user who may write the
    folder above does between a check and a read (renameat2's exchange)."""
    place.rename(place.with_name(place.name + ".moved"))
    forged_entry.parent.mkdir(mode=0o700, parents=True)
    forged_entry.write_text(value)


@pytest.mark.parametrize("where", ["root", "configs", "fingerprint", "kind"])
def test_a_folder_exchanged_between_check_and_read_is_never_read(where, cache_dir, monkeypatch):
    """The entry is read in the folders as checked, not by its name again: a folder of the
    cache exchanged for another after the check leaves the value read the one kept."""
    assert config_cache.cached("t", ["k"], lambda: [1]) == [1]
    (entry,) = cache_dir.rglob("t/*.json")
    place = {
        "root": cache_dir,
        "configs": cache_dir / "configs",
        "fingerprint": entry.parent.parent,
        "kind": entry.parent,
    }[where]
    read = config_cache.read_json

    def exchanged_then_read(*args, **kwargs):
        _exchange(place, entry, "[666]")
        return read(*args, **kwargs)

    monkeypatch.setattr(config_cache, "read_json", exchanged_then_read)
    assert config_cache.cached("t", ["k"], lambda: [2]) == [1]


@pytest.mark.parametrize("where", ["root", "kind"])
def test_a_value_is_kept_in_the_folder_checked_not_in_one_exchanged_meanwhile(
    where, cache_dir, monkeypatch
):
    assert config_cache.cached("t", ["k"], lambda: [1]) == [1]
    (entry,) = cache_dir.rglob("t/*.json")
    entry.unlink()
    place = cache_dir if where == "root" else entry.parent
    write = cache_place.writer

    def exchanged_then_written(*args, **kwargs):
        _exchange(place, entry.with_name("other.json"), "[666]")
        return write(*args, **kwargs)

    monkeypatch.setattr(cache_place, "writer", exchanged_then_written)
    assert config_cache.cached("t", ["k"], lambda: [2]) == [2]
    moved = place.with_name(place.name + ".moved")
    assert not entry.exists() and (moved / entry.relative_to(place)).read_text() == "[2]"


@pytest.mark.parametrize(
    "mode, used", [(0o777, False), (0o775, False), (0o1777, True)], ids=["777", "775", "1777"]
)
def test_a_cache_whose_folder_above_others_may_write_is_not_used(
    mode, used, tmp_path, monkeypatch, capsys
):
    """Another user who may write a folder above the cache folder could exchange the cache
    for a folder of theirs: such a cache is neither read nor written (said once, naming that
    folder, before any folder of it is made), but where the folder is sticky (/tmp's 1777: each
    user moves only their own)."""
    shared = tmp_path / "shared"
    shared.mkdir()
    monkeypatch.setenv("DFL_BENCH_CACHE", str(shared / "deep" / "cache"))
    shared.chmod(mode)
    calls = []
    for _ in range(2):
        assert config_cache.cached("t", ["k"], lambda: calls.append(1) or [1]) == [1]
    assert len(calls) == (1 if used else 2)
    assert bool(list(shared.rglob("*.json"))) == used
    assert (shared / "deep").exists() == used
    said = capsys.readouterr().err.splitlines()
    assert said == ([] if used else [said[0]])
    assert used or f"[cache] not used: {shared} (above the cache) lets other users move" in said[0]
