"""The paper's task (Section 9.3): semi-supervised MNIST with 1% labels, the NTN heads of the
knowledge base's binary predicates, the `same`/`sum9`/`both` knowledge bases (`kb=`); its
step is DFLModule's (dfl_bench/run/dfl_module.py), its data MnistDataModule's."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from dfl_bench.operators import OperatorSet
from dfl_bench.run.dfl_module import DFLModule
from dfl_bench.run.mnist_data import MnistDataModule
from dfl_bench.run.optim import settings

NAME = "mnist_kb"
STACKS = True


def build(config: Mapping[str, Any], operators: OperatorSet) -> DFLModule:
    """The LightningModule of Section 9.3 for this knowledge base, operators, optimizer and
    budget."""
    kb, profile = dict(config["kb"]), config["profile"]
    name, w_dfl = kb.pop("name"), kb.pop("w_dfl")
    return DFLModule(
        kb=name,
        operators=operators,
        w_dfl=w_dfl,
        optimizer=settings(config),
        kb_options=kb,
        ntn_k=config["model"]["ntn_k"],
        ntn_bias=config["model"]["ntn_bias"],
        log_every=profile["log_every"],
        eval_every=profile["eval_every"],
        metrics_tail=profile["metrics_tail"],
        max_steps=profile["max_steps"],
        seed=config["seed"],
    )


def data(config: Mapping[str, Any]) -> MnistDataModule:
    """The semi-supervised split of Section 9.3."""
    return MnistDataModule(**config["data"], seed=config["seed"])
