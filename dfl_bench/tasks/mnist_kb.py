"""The paper's task (Section 9.3): semi-supervised MNIST with 1% labels, the NTN heads of the
knowledge base's binary predicates, the `same`/`sum9`/`both` knowledge bases (`kb=`); a run is a
DFLRun (tasks/mnist/dfl_run.py), the runs' data a StackDataModule (tasks/mnist/stack_data.py).
conf/task/mnist_kb.yaml names `MnistKB`."""

from __future__ import annotations

import inspect
from collections.abc import Mapping, Sequence
from typing import Any

from dfl_bench.logic import from_target
from dfl_bench.logic.kb import build_kb
from dfl_bench.operators import OperatorSet
from dfl_bench.schema import CONS_RATIO, CU_ANT, CU_CONS, split_seed_of
from dfl_bench.tasks.contract import Task
from dfl_bench.tasks.mnist.data_checks import check_data
from dfl_bench.tasks.mnist.dfl_run import DFLRun
from dfl_bench.tasks.mnist.stack_data import StackDataModule
from dfl_bench.tasks.values import TASKS, check_augment, check_kb_options, check_model


def registered(kb: Mapping[str, Any]) -> None:
    """Register the knowledge base `kb._target_` names, where it names one (idempotent)."""
    if kb.get("_target_"):
        from_target(str(kb["_target_"]), str(kb.get("name")))


def kb_keys() -> list[str]:
    """The keys of a `kb` mapping: its name, DFL weight and `_target_`, and `build_kb`'s options."""
    return sorted({"_target_", "name", "w_dfl", *inspect.signature(build_kb).parameters})


def check_kb_keys(kb: Mapping[str, Any]) -> None:
    """No key in `kb` that `build_kb` does not take (`+kb.foo=1` failed in it with a TypeError)."""
    extra = sorted(set(map(str, kb)) - set(kb_keys()))
    if extra:
        raise ValueError(
            f"kb.{extra[0]} is no key of kb: nothing reads it; valid keys: {kb_keys()}"
        )


class MnistKB(Task):
    """Section 9.3's model and loss for one knowledge base, operators, optimizer and budget."""

    NAME = "mnist_kb"
    MEASURES = (("cons", CONS_RATIO), (CU_CONS, CU_CONS), (CU_ANT, CU_ANT))

    def check(self, config: Mapping[str, Any]) -> None:
        """The knowledge base (one of a user's own folder imported by its `_target_`), the data
        and the NTN heads' settings (the DFL weight: where its run is built, `DFLRun`)."""
        check_kb_keys(config["kb"])
        check_kb_options(config["kb"])
        registered(config["kb"])
        super().check(config)
        check_data(config["data"])
        TASKS[self.NAME].check_data(self.NAME, config["data"])
        check_augment(config.get("augment") or {})
        check_model(config["model"])

    def stack_key(self, config: Mapping[str, Any]) -> Any:
        """One knowledge base per stack, its runs all with a DFL term or all without."""
        return [config["kb"]["name"], config["kb"]["w_dfl"] > 0]

    def build(self, config: Mapping[str, Any], operators: OperatorSet) -> DFLRun:
        kb, profile = dict(config["kb"]), config["profile"]
        registered(kb)
        name, w_dfl = kb.pop("name"), kb.pop("w_dfl")
        kb.pop("_target_", None)
        return DFLRun(
            kb=name,
            operators=operators,
            w_dfl=w_dfl,
            optimizer=config["optimizer"],
            kb_options=kb,
            ntn_k=config["model"]["ntn_k"],
            ntn_bias=config["model"]["ntn_bias"],
            net=config.get("net"),
            augment=config.get("augment"),
            log_every=profile["log_every"],
            eval_every=profile["eval_every"],
            metrics_tail=profile["metrics_tail"],
            max_steps=profile["max_steps"],
            seed=config["seed"],
        )

    def data(self, configs: Sequence[Mapping[str, Any]]) -> StackDataModule:
        """The semi-supervised split of Section 9.3 for runs that differ in their seeds only
        (each its own split, schema.split_seed_of's)."""
        return StackDataModule(
            configs[0]["data"],
            seeds=[c["seed"] for c in configs],
            split_seeds=[split_seed_of(c) for c in configs],
        )
