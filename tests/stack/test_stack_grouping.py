"""Which runs share a stack and when a stack trains in the grouped layout: runs
that differ in augmentation or network never share a stack, and a stack trains grouped only when
every run is GROUPED, so that no augmented run trains unaugmented under a record that says it
augmented."""

from __future__ import annotations

from pathlib import Path

import pytest
from jobs import composed

from dfl_bench.lifecycle import job as lifecycle
from dfl_bench.lifecycle import stack_sweep, train
from dfl_bench.tasks.mnist_kb import MnistKB
from dfl_bench.training import RunsModule

SHORT = ("profile.max_steps=12", "profile.subset_train=640")


def key(*overrides: str) -> str:
    """The stack key of a smoke job with `overrides`."""
    cfg, _ = composed(Path("/tmp"), *overrides)
    return stack_sweep.stack_key(train.resolved_config(cfg))


def test_runs_that_differ_in_augmentation_or_network_share_no_stack():
    assert key("seed=0") == key("seed=1")
    assert key("seed=0") != key("augment.degrees=10")
    assert key("augment.shift=2") != key("augment.degrees=10")
    assert key("seed=0") != key("net=lenet")


def prepared_jobs(tmp: Path, *runs: tuple[str, ...]) -> list[lifecycle.Job]:
    """Jobs prepared as `stack_sweep.run_sweep` prepares them."""
    jobs = [lifecycle.Job(*composed(tmp, *SHORT, *overrides)) for overrides in runs]
    for job in jobs:
        job.config, job.module, job.data = train.prepared(job.cfg, job.hydra_cfg.overrides.task)
    return jobs


@pytest.mark.parametrize("other", ["augment.degrees=10", "augment.shift=2", "net=lenet"])
def test_a_stack_trains_grouped_on_cuda_only_when_every_run_is_grouped(
    tmp_path, monkeypatch, other
):
    plain, odd = prepared_jobs(tmp_path, ("seed=0",), ("seed=1", other))
    both = prepared_jobs(tmp_path / "both", ("seed=0",), ("seed=1",))
    monkeypatch.setattr(lifecycle, "uses_cuda", lambda cfg: True)
    monkeypatch.setattr(MnistKB, "data", lambda self, configs: None)  # no training data needed
    assert plain.module.GROUPED and not odd.module.GROUPED
    _, module = lifecycle._built([plain, odd], [None, None])
    assert not module.grouped and not module.cuda_graph  # each run's own network: it augments
    assert lifecycle._built(both, [None, None])[1].grouped  # all GROUPED: grouped, as before


def test_a_grouped_runs_module_refuses_any_run_without_a_grouped_layout(tmp_path):
    plain, odd = prepared_jobs(tmp_path, ("seed=0",), ("seed=1", "augment.degrees=10"))
    with pytest.raises(ValueError, match="GROUPED"):
        RunsModule([plain.module, odd.module], grouped=True)
    assert RunsModule([plain.module, odd.module], grouped=False).run_nets is not None
