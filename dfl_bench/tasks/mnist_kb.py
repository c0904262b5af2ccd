"""The paper's task (Section 9.3): semi-supervised MNIST with 1% labels, the NTN heads of the
knowledge base's binary predicates, the `same`/`sum9`/`both` knowledge bases (`kb=`); a run is a
DFLRun (tasks/mnist/dfl_run.py), the runs' data a StackDataModule (tasks/mnist/stack_data.py)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from dfl_bench.operators import OperatorSet
from dfl_bench.tasks.mnist.dfl_run import DFLRun
from dfl_bench.tasks.mnist.optim import settings
from dfl_bench.tasks.mnist.stack_data import StackDataModule

NAME = "mnist_kb"


def build(config: Mapping[str, Any], operators: OperatorSet) -> DFLRun:
    """One run of Section 9.3 for this knowledge base, operators, optimizer and budget."""
    kb, profile = dict(config["kb"]), config["profile"]
    name, w_dfl = kb.pop("name"), kb.pop("w_dfl")
    return DFLRun(
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


def data(configs: Sequence[Mapping[str, Any]]) -> StackDataModule:
    """The semi-supervised split of Section 9.3 for runs that differ in their seeds only (each
    its own split, by `data.split_seed`, else its seed)."""
    return StackDataModule(
        configs[0]["data"],
        seeds=[c["seed"] for c in configs],
        split_seeds=[
            c["seed"] if c["data"].get("split_seed") is None else c["data"]["split_seed"]
            for c in configs
        ],
    )
