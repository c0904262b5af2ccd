"""What an experiment declares is not the command line's to edit (dfl_bench/lifecycle/declared.py):
its rows, its stages and the values it takes from its stage, its rule, and the seeds of its
final stage are each refused in one line naming what to do instead, by the preflight and by each
job's check (the checked sweeper's too), while the searches' own command lines still pass."""

from __future__ import annotations

import subprocess
import sys

import pytest
from jobs import composed

from dfl_bench.lifecycle import preflight, sweep, train

MINUTE = ("+experiment=mnist_addition_minute_search", "row=s2500_lr2e3")
CEILING = ("+experiment=digit_ceiling_search", "row=lenet_cos_1x")
REFUSED = [
    (
        (*MINUTE, "stage=final", "task.validation=0.2"),
        "task.validation=0.2 is refused: experiment 'mnist_addition_minute_search' sets "
        "task.validation from its stage (stages: {'search': 0.2, 'final': 0.0}); pick a stage "
        "(stage=search or stage=final), or run without +experiment and set task.validation "
        "yourself",
    ),
    (
        (*CEILING, "data.validation=0.3"),
        "data.validation=0.3 is refused: experiment 'digit_ceiling_search' sets data.validation "
        "from its stage",
    ),
    (
        (*MINUTE, "stage=final", "stages.final=0.2"),
        "stages.final=0.2 is refused: experiment 'mnist_addition_minute_search' declares its "
        "stages; pick a stage (stage=search or stage=final), or run without +experiment",
    ),
    (
        (*MINUTE, "rows.s2500_lr2e3.lr=0.02"),
        "rows.s2500_lr2e3.lr=0.02 is refused: experiment 'mnist_addition_minute_search' "
        "declares its rows; pick another row (valid rows: ['s2000_lr3e3', 's2500_lr1e3', "
        "'s2500_lr2e3', 's2500_lr2e3_cos', 's2500_lr3e3_cos']), or run without +experiment",
    ),
    (
        (*MINUTE, "+rows.mine={net: paper, steps: 10, lr: 0.1}"),
        "+rows.mine={net: paper, steps: 10, lr: 0.1} is refused: experiment "
        "'mnist_addition_minute_search' declares its rows",
    ),
    (
        (*MINUTE, "stage=final", "seed=3", "rule.final.seeds=[0,1,2,3,4]"),
        "rule.final.seeds=[0,1,2,3,4] is refused: experiment 'mnist_addition_minute_search' "
        "declares its rule; leave it out (the rule was declared before the runs)",
    ),
]
FINAL_SEED = (
    "seed=0 under stage=final: experiment 'mnist_addition_minute_search' declares its final "
    "seeds [3, 4, 5, 6, 7] (rule.final.seeds: its other seeds took part in the choice); pick "
    "one of them"
)


@pytest.mark.parametrize(("line", "said"), REFUSED)
def test_the_preflight_refuses_an_edit_of_what_the_experiment_declares(line, said):
    assert preflight.defect(list(line)).startswith(said)


@pytest.mark.parametrize(("line", "said"), REFUSED)
def test_each_job_refuses_an_edit_of_what_the_experiment_declares(line, said, tmp_path):
    cfg, hydra_cfg = composed(tmp_path, *line)
    with pytest.raises(ValueError) as refused:
        train.checked(cfg, hydra_cfg.overrides.task)
    assert str(refused.value).startswith(said)


def test_a_final_stage_trains_only_its_declared_final_seeds(tmp_path):
    cfg, hydra_cfg = composed(tmp_path, *MINUTE, "stage=final", "seed=0")
    with pytest.raises(ValueError) as refused:
        train.checked(cfg, hydra_cfg.overrides.task)
    assert str(refused.value) == FINAL_SEED
    cfg, hydra_cfg = composed(tmp_path, *CEILING, "stage=final", "seed=5")
    with pytest.raises(ValueError, match=r"final seeds \[0, 1, 2, 3, 4\]"):
        train.checked(cfg, hydra_cfg.overrides.task)
    # the search stage trains any seed; a final seed at the final stage trains
    for line in [(*MINUTE, "seed=0"), (*MINUTE, "stage=final", "seed=7"), (*CEILING, "seed=9")]:
        cfg, hydra_cfg = composed(tmp_path, *line)
        assert train.checked(cfg, hydra_cfg.overrides.task).config["seed"] == int(line[-1][5:])


def test_the_searches_final_command_lines_pass_and_a_used_seed_stops_the_sweep(tmp_path):
    """scripts/minute_search.sh and ceiling_search.sh's final stages, as the checked sweeper
    checks them before any job runs; a seed the choice used among them refuses the sweep."""
    rest = [f"records_dir={tmp_path}", "logger=none", "progress_bar=false", "threads=1"]
    minute = [*MINUTE, "stage=final", "seed=3,4,5,6,7", *rest]
    ceiling = [*CEILING, "stage=final", "seed=0,1,2,3,4", *rest]
    for line in (minute, ceiling):
        assert preflight.defect(line) is None
        assert sweep.invalid_jobs(sweep.expand(line)) == []
    (error,) = sweep.invalid_jobs(sweep.expand([*MINUTE, "stage=final", "seed=0,3", *rest]))
    assert error.endswith(FINAL_SEED)


def test_the_command_line_says_it_in_one_line_and_exits_2():
    done = subprocess.run(
        [sys.executable, "-m", "dfl_bench", *MINUTE, "rows.s2500_lr2e3.lr=0.02"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1
    assert done.stderr.startswith(
        "[dfl_bench] invalid configuration: rows.s2500_lr2e3.lr=0.02 is refused"
    )
