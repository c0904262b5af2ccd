"""The digit network is a choice (conf/net/, tasks/mnist/nets.py): the field's LeNet exactly, a
stronger one, a user's own as one class and one yaml; a network without the embedding the
paper's task reads is refused before training; the paper's network keeps every record's hash;
light augmentation is declared, drawn from the run's stream and hashed."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest
import torch
import warm_cli
from hydra import compose, initialize_config_dir
from jobs import refused_on_cli

from dfl_bench.lifecycle import records
from dfl_bench.lifecycle.guards import check_config
from dfl_bench.lifecycle.migrate import migrate_config
from dfl_bench.lifecycle.record_config import config_refusal
from dfl_bench.lifecycle.resolve import resolved_config
from dfl_bench.operators import OperatorSet
from dfl_bench.tasks import task_of
from dfl_bench.tasks.mnist import augment, nets
from dfl_bench.tasks.mnist.nets import MnistNet
from dfl_bench.tasks.net_names import net_refusal

REPO = Path(__file__).resolve().parents[2]


def resolved(*overrides: str) -> dict:
    with initialize_config_dir(config_dir=str(REPO / "conf"), version_base="1.3"):
        return resolved_config(compose("config", overrides=list(overrides)))


def test_lenet_is_deepproblogs_network_layer_for_layer():
    net = nets.LeNet()
    assert sum(p.numel() for p in net.parameters()) == 44_426
    shapes = [tuple(p.shape) for p in net.parameters()]
    assert shapes == [
        (6, 1, 5, 5), (6,), (16, 6, 5, 5), (16,), (120, 256), (120,), (84, 120), (84,), (10, 84),
        (10,),
    ]  # fmt: skip
    logits, embedding = net(torch.zeros(3, 1, 28, 28))
    assert logits.shape == (3, 10) and embedding.shape == (3, nets.LeNet.EMBEDDING)
    assert not any(isinstance(m, torch.nn.Dropout | torch.nn.BatchNorm2d) for m in net.modules())


@pytest.mark.parametrize("name", ["paper", "lenet", "bn_wide", "bn_deep"])
def test_every_shipped_network_builds_from_its_yaml_and_draws_dropout_from_the_run(name):
    config = resolved(f"net={name}")
    net = nets.build_net(config["net"]).train()
    x = torch.randn(8, 1, 28, 28)
    first = net(x, torch.Generator().manual_seed(1))[0]
    again = net(x, torch.Generator().manual_seed(1))[0]
    assert torch.equal(first, again)  # the run's stream, nothing global
    assert net.EMBEDDING is not None and net(x)[1].shape == (8, net.EMBEDDING)


def test_the_papers_network_keeps_every_records_hash():
    default = resolved()
    assert default["net"] == {"_target_": "dfl_bench.tasks.mnist.nets.MnistNet", "name": "paper"}
    without = {k: v for k, v in default.items() if k not in ("net", "augment")}  # a record
    assert records.config_hash(migrate_config(without)) == records.config_hash(default)  # before
    assert records.config_hash(resolved("net=lenet")) != records.config_hash(default)
    assert type(task_of(default).build(default, OperatorSet.from_config(default)).net.digits) is (
        MnistNet
    )


def test_a_network_without_an_embedding_is_refused_for_the_ntn_heads_before_training(
    tmp_path, monkeypatch
):
    (tmp_path / "plain_net.py").write_text(
        "import torch\nfrom dfl_bench.tasks.mnist.nets import DigitNet\n\n"
        "class Plain(DigitNet):\n"
        "    def __init__(self):\n        super().__init__()\n"
        "        self.fc = torch.nn.Linear(784, 10)\n\n"
        "    def forward(self, x, generator=None):\n        return self.fc(x.flatten(1)), None\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    plain = "+net._target_=plain_net.Plain"
    config = resolved("~net", plain, "+net.name=plain")
    with pytest.raises(ValueError, match=r"net Plain returns no embedding, and the NTN heads"):
        task_of(config).build(config, OperatorSet.from_config(config))
    alone = resolved("~net", plain, "+net.name=plain", "kb=ce_only")
    run = task_of(alone).build(alone, OperatorSet.from_config(alone))  # no heads: it trains
    assert isinstance(run.net.digits, nets.DigitNet)


def test_a_target_that_is_no_network_is_one_line():
    with pytest.raises(ValueError, match="is not a digit network"):
        nets.build_net({"_target_": "torch.nn.Linear", "name": "x"})
    with pytest.raises(ValueError, match="does not import"):
        nets.build_net({"_target_": "no_such.Net", "name": "x"})


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        (("net.name=lenet",), "net.name='lenet', but its _target_ builds net 'paper'"),
        (("net=lenet", "net.name=paper"), "net.name='paper', but its _target_ builds net 'lenet'"),
    ],
)
def test_a_networks_name_that_is_not_its_targets_is_refused_before_training(overrides, message):
    """The name is hashed and the _target_ is not: lenet's name on the paper's class would
    train the paper's network under lenet's hash (a plan's or record's config too)."""
    config = resolved(*overrides)
    with pytest.raises(ValueError, match=f"^{message}$"):
        task_of(config).build(config, OperatorSet.from_config(config))


CHOICES = "valid choices: ['bn_deep', 'bn_wide', 'lenet', 'paper']"
LENET = "net._target_=dfl_bench.tasks.mnist.nets.LeNet"


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        (("net.name=mine", LENET), "net.name='mine' is no network of conf/net, and its _target_ "
         f"builds net 'lenet'; {CHOICES}"),
        (("net.name=mine",), "net.name='mine' is no network of conf/net, and its _target_ builds "
         f"net 'paper'; {CHOICES}"),
        (("net.name=null", LENET), f"net.name=None names no network; {CHOICES}"),
        (("net.name=null",), f"net.name=None names no network; {CHOICES}"),
        (("net.name=''",), f"net.name='' names no network; {CHOICES}"),
        (("net.name=paper", LENET), "net._target_='dfl_bench.tasks.mnist.nets.LeNet' is not net "
         "'paper''s _target_ 'dfl_bench.tasks.mnist.nets.MnistNet'"),
    ],
)  # fmt: skip
def test_a_name_another_network_could_train_under_is_refused_by_the_job_and_the_record_check(
    overrides, message
):
    """`net._target_` is not hashed: `net.name=mine` (or null) with LeNet's class and then with
    the paper's had one hash, and the second job skipped on the first's record. A job refuses
    it at its start and in a sweep's plan (check_config), a record's check refuses its config,
    and the network refuses it where it is built (by class)."""
    config = resolved(*overrides)
    with pytest.raises(ValueError, match=f"^{re.escape(message)}"):
        check_config(config)
    assert config_refusal(config).startswith(message)
    if "net.name=paper" not in overrides:  # a record's may name where its class lived before
        with pytest.raises(ValueError, match=re.escape(message[:30])):
            nets.build_net(config["net"])


def test_a_networks_name_passes_with_its_own_class_and_a_record_with_its_old_module():
    """The shipped networks and a network of one's own (its yaml on Hydra's search path, its
    class no network of conf/net's) pass; a record whose class lived in another module
    (`dfl_bench.tasks.mnist.model.MnistNet`, before nets.py) keeps counting under its name."""
    for name in nets.choices():
        config = resolved(f"net={name}")
        check_config(config)
        assert config_refusal(config) is None
    own = {"_target_": "my_nets.Tiny", "name": "tiny"}
    assert net_refusal(own) is None and net_refusal({"name": "tiny"}) is not None
    old = {"_target_": "dfl_bench.tasks.mnist.model.MnistNet", "name": "paper"}
    assert net_refusal(old, job=False) is None and net_refusal(old) is not None
    aliased = rf"^net.name='mine' .* net 'paper'; {re.escape(CHOICES)}$"
    with pytest.raises(ValueError, match=aliased):  # the paper's class by another module's name
        nets.build_net({"_target_": "dfl_bench.tasks.mnist.dfl_run.MnistNet", "name": "mine"})


def test_a_foreign_network_name_is_refused_on_the_command_line_before_any_record(tmp_path):
    said = refused_on_cli(tmp_path, "net.name=mine")
    assert "net.name='mine' is no network of conf/net" in said and CHOICES in said


def test_augmentation_is_off_by_default_draws_nothing_then_and_is_hashed():
    generator = torch.Generator().manual_seed(0)
    state = generator.get_state()
    x = torch.randn(4, 1, 28, 28)
    assert augment.augmented(x, {"degrees": 0.0, "shift": 0.0}, generator) is x
    assert torch.equal(generator.get_state(), state)
    moved = augment.augmented(x, {"degrees": 10.0, "shift": 2.0}, generator)
    assert moved.shape == x.shape and not torch.equal(moved, x)
    again = augment.augmented(x, {"degrees": 10.0, "shift": 2.0}, torch.Generator().manual_seed(0))
    assert torch.equal(moved, again)
    on = resolved("augment.degrees=10")
    assert records.config_hash(on) != records.config_hash(resolved())
    with pytest.raises(ValueError, match=r"augment.shift must be at most 6"):
        check_config(resolved("augment.shift=9"))


def test_a_shift_moves_an_image_by_whole_pixels():
    x = torch.zeros(1, 1, 28, 28)
    x[0, 0, 10, 10] = 1.0
    generator = torch.Generator()
    generator.manual_seed(0)
    draws = torch.rand(1, 3, generator=torch.Generator().manual_seed(0)).mul(2).sub(1)
    moved = augment.augmented(x, {"shift": 3.0}, generator)
    dx, dy = (draws[0, 1:] * 3.0).tolist()
    row, col = divmod(int(moved.flatten().argmax()), 28)
    assert (abs(col - (10 - dx)) <= 1, abs(row - (10 - dy)) <= 1) == (True, True)


@pytest.mark.slow
def test_mnist_addition_at_15_digits_trains_with_the_lenet(tmp_path):
    env = {**os.environ, "WANDB_MODE": "disabled"}
    done = warm_cli.run(
        [
            "+experiment=mnist_addition_digits", "row=product_sum_n15", "net=lenet",
            "profile=smoke", "logger=none", f"records_dir={tmp_path / 'r'}",
            f"checkpoint_dir={tmp_path / 'c'}",
        ],
        tmp_path,
        env,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    (record,) = [json.loads(p.read_text()) for p in (tmp_path / "r").rglob("*.json")]
    assert record["status"] == "ok" and record["config"]["net"]["name"] == "lenet"
    assert record["config"]["task"]["digits"] == 15


@pytest.mark.parametrize(
    "experiment",
    ["mnist_addition_budget_nets", "mnist_addition_frontier_nets", "digit_ceiling_nets"],
)
def test_the_network_experiments_train_each_network_as_its_yaml_gives_it(experiment):
    from omegaconf import OmegaConf

    spec = OmegaConf.to_container(
        OmegaConf.load(REPO / "conf" / "experiment" / f"{experiment}.yaml")
    )
    if experiment != "mnist_addition_budget_nets":
        for row, entry in spec["rows"].items():
            shipped = OmegaConf.load(REPO / "conf" / "net" / f"{entry['net']['name']}.yaml")
            assert entry["net"] == OmegaConf.to_container(shipped), row
        frontier = OmegaConf.to_container(
            OmegaConf.load(REPO / "conf" / "experiment" / "mnist_addition_frontier_nets.yaml")
        )
        budget = {e["net"]["name"]: e["steps"] for e in frontier["rows"].values()}
        for row, entry in spec["rows"].items():  # each network on the frontier's budget for it
            assert entry["steps"] == budget[entry["net"]["name"]], row
        return
    for row, entry in spec["rows"].items():
        shipped = OmegaConf.to_container(
            OmegaConf.load(REPO / "conf" / "net" / f"{row.split('_e')[0]}.yaml")
        )
        assert entry["net"] == shipped, row
    assert spec["rule"]["metric"] == "validation_accuracy" and spec["rule"]["seeds"] >= 3
    assert "rule" not in resolved("+experiment=mnist_addition_budget_nets")  # never hashed


def test_bn_deep_replaces_bn_wides_second_convolution_by_two_3x3_ones():
    net = nets.BnDeep()
    convs = [m.weight.shape for m in net.modules() if isinstance(m, torch.nn.Conv2d)]
    assert convs == [(16, 1, 5, 5), (40, 16, 3, 3), (40, 40, 3, 3)]
    assert (
        sum(isinstance(m, torch.nn.BatchNorm2d | torch.nn.BatchNorm1d) for m in net.modules()) == 4
    )
    assert net.eval()(torch.zeros(2, 1, 28, 28))[1].shape == (2, 128)
    with pytest.raises(ValueError, match="width2"):
        nets.BnDeep(width2=0)


def test_an_unknown_network_names_every_shipped_choice():
    with pytest.raises(ValueError, match="paper") as err:
        nets.net_class("no_such_module.Net")
    assert all(name in str(err.value) for name in ("lenet", "bn_wide", "bn_deep"))


@pytest.mark.parametrize(
    ("override", "said"),
    [
        ("net.embedding=abc", "net.embedding must be an integer in [1, 1024], got 'abc'"),
        ("net.width=2.5", "net.width must be an integer in [1, 1024], got 2.5"),
        ("net.embedding=true", "net.embedding must be an integer in [1, 1024], got True"),
        ("net.width=100000", "net.width must be an integer in [1, 1024], got 100000"),
        ("net.p_fc=1.0", "net.p_fc must be a fraction in [0, 1), got 1.0"),
    ],
)
def test_a_networks_bad_setting_is_refused_naming_its_key(override, said):
    config = resolved("net=bn_wide", override)
    with pytest.raises(ValueError) as err:  # where the job builds its run, before it trains
        task_of(config).build(config, OperatorSet.from_config(config))
    assert said in str(err.value)
