"""Composed configs kept on disk (results/config_cache.py): read back while conf/ and the code
are unchanged, recomputed when a file changes or caching is off; a plan is the same either way."""

from __future__ import annotations

import pytest

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
