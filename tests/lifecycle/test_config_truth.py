"""What the user asked is what trains, and what the record says: a budget's optimizer settings
are defaults a command line overrides, the config holds the optimizer that trains, and a key or
a value no task or optimizer declares is one line before anything loads."""

from __future__ import annotations

from pathlib import Path

import pytest
from hydra import compose, initialize_config_dir

from dfl_bench.lifecycle.guards import check_config
from dfl_bench.lifecycle.resolve import resolved_config
from dfl_bench.operators import OperatorSet
from dfl_bench.tasks import task_of

CONF = Path(__file__).resolve().parents[2] / "conf"


def resolved(*overrides: str) -> dict:
    """The resolved config of one job."""
    with initialize_config_dir(config_dir=str(CONF), version_base="1.3"):
        return resolved_config(compose("config", overrides=list(overrides)))


def trained_with(config: dict) -> dict:
    """The optimizer arguments the run `config` builds trains with."""
    return dict(task_of(config).build(config, OperatorSet.from_config(config)).optimizer.kwargs)


def test_a_command_line_rate_wins_over_the_budgets_and_is_what_the_run_trains_with():
    budget = resolved("+experiment=mnist_addition")  # profile minute: 0.002
    assert budget["optimizer"] == {"name": "adam", "lr": 0.002, "fused": True}
    asked = resolved("+experiment=mnist_addition", "optimizer.lr=0.5", "+optimizer.warmup=10")
    assert asked["optimizer"] == {"name": "adam", "lr": 0.5, "fused": True, "warmup": 10}
    assert trained_with(asked)["lr"] == 0.5
    assert "optimizer" not in asked["profile"]


def test_a_budget_without_optimizer_settings_keeps_the_groups():
    config = resolved("+experiment=mnist_addition", "profile=long")
    assert config["optimizer"] == {"name": "adam", "lr": 0.001, "fused": True}
    assert trained_with(config)["lr"] == 0.001


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        (["+task.digits=-1"], r"task 'mnist_kb' has no setting task\.digits; its settings: none"),
        (
            ["task=mnist_addition", "+task.digit=2"],
            r"has no setting task\.digit; its settings: \['digits', 'loss'",
        ),
        (["optimizer.lr=abc"], r"^optimizer\.lr must be a number, got 'abc'$"),
        (["+optimizer.amsgrad=yes"], r"^optimizer\.amsgrad is no key of optimizer: .*\['cosine"),
        (["optimizer.fused=yes"], r"^optimizer\.fused must be true or false, .*, got 'yes'$"),
        (["+profile.optimizer.lr=0.1"], r"profile has no keys \['optimizer'\] \(valid: \['name'"),
    ],
)
def test_an_undeclared_key_or_a_mistyped_value_is_one_line(overrides, message):
    with pytest.raises(ValueError, match=message):
        config = resolved(*overrides)
        check_config(config)
        trained_with(config)
