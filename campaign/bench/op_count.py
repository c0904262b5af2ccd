"""`python -m campaign.bench count-ops`: how many tensor operations one run's step launches
after the network (its DFL term and its whole loss, forward and backward), per row of a table.

On a GPU each such operation is a kernel, and a replayed CUDA graph of a stack still launches
every run's own: this count, taken on the CPU (aten operations that compute, views and other
metadata operations left out), is what `compile_dfl` fuses (docs/scaling.md).
"""

from __future__ import annotations

import argparse
from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any

import torch
from torch import Tensor
from torch.utils._python_dispatch import TorchDispatchMode

from campaign.bench import steps
from campaign.bench.stack_timing import table_rows
from dfl_bench import markdown
from dfl_bench.tasks.mnist.dfl_run import DFLRun, both_pair_logits, dfl_term

# aten operations that only make views or metadata: no kernel on a GPU
NO_KERNEL = frozenset(
    "alias as_strided detach expand permute select slice split squeeze t transpose unbind "
    "unsqueeze view _unsafe_view _reshape_alias".split()
)


class OpCounter(TorchDispatchMode):
    """Counts the aten operations dispatched inside it, by name (overload left out)."""

    def __init__(self) -> None:
        super().__init__()
        self.counts: Counter[str] = Counter()

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):  # noqa: ANN001
        self.counts[func.__name__.split(".")[0]] += 1
        return func(*args, **(kwargs or {}))

    @property
    def kernels(self) -> int:
        """Operations that compute (a kernel each on a GPU)."""
        return sum(n for name, n in self.counts.items() if name not in NO_KERNEL)


def count(fn: Callable[[], Tensor]) -> int:
    """Computing operations of `fn()` and its backward."""
    with OpCounter() as counter:
        fn().backward()
    return counter.kernels


def run_counts(module: DFLRun, batch: steps.Batch) -> dict[str, int]:
    """One run's DFL term and whole loss (from fixed network outputs), forward + backward."""
    (x_l, y_l), (x_u, y_u) = batch["labeled"], batch["unlabeled"]
    with torch.no_grad():
        logits, emb = module.net(torch.cat([x_l, x_u]))
        e_l, e_u = emb[: len(x_l)], emb[len(x_l) :]
        pair_l, pair_u = both_pair_logits(module.net.pair_logits, e_l, e_u, 0)

    def leaf(t: Tensor) -> Tensor:
        return t.detach().requires_grad_()

    def dfl() -> Tensor:
        return dfl_term(module.kb, module.ops, leaf(logits[len(x_l) :]), _leaves(pair_u))

    def loss() -> Tensor:
        outs = (leaf(logits), _leaves(pair_l), _leaves(pair_u), y_l, y_u)
        return module.loss(*outs, module.generator(), False)[0]

    return {"dfl_term": count(dfl), "loss": count(loss)}


def _leaves(pairs: dict[str, Tensor]) -> dict[str, Tensor]:
    return {k: v.detach().requires_grad_() for k, v in pairs.items()}


def table(experiments: Sequence[str]) -> list[dict[str, Any]]:
    """Counts of the default configuration and of every row of `experiments`."""
    batch = steps.draw_batches(steps.load_data(64, torch.device("cpu"), 500), 64, 1)[0]
    jobs = [("default", "same", [])]
    for experiment in experiments:
        kb, rows = table_rows(experiment)
        jobs += [(f"{experiment} {row[1][4:]}", kb, list(row)) for row in rows]
    out = []
    for name, kb, overrides in jobs:
        module = steps.build_module(kb, steps.NEVER, torch.device("cpu"), overrides)
        out.append({"run": name, "kb": kb, **run_counts(module, batch)})
    return out


def stack_counts(runs: Sequence[int] = (1, 4, 16), kb: str = "same") -> list[dict[str, int]]:
    """Computing operations of one whole training iteration (network, loss, backward, update)
    of R runs of `kb`'s default configuration stacked in the StackNet layout (the GPU's;
    counted on the CPU, without the CUDA graph), for each R: on a GPU each is a kernel launch,
    so a step whose count grows with R is bound by launches, not arithmetic."""
    from campaign.bench.stack_timing import stack_batch, stack_runs
    from dfl_bench.training import RunsModule

    data = steps.load_data(64, torch.device("cpu"), 500)
    out = []
    for r in runs:
        modules, batches = stack_runs(kb, r, data, 64, 1)
        stack = RunsModule(modules, [None] * r, grouped=True, cuda_graph=False).train()
        optimizer = stack.configure_optimizers()
        batch = stack_batch([run[0] for run in batches])
        stack.iterate(optimizer, batch, 1)  # the first step builds what later steps reuse
        with OpCounter() as counter:
            stack.iterate(optimizer, batch, 2)
        out.append({"runs": r, "operations": counter.kernels})
    return out


def main(argv: Sequence[str] | None = None) -> None:
    """Print the counts as Markdown."""
    parser = argparse.ArgumentParser(
        prog="python -m campaign.bench count-ops", description=__doc__.splitlines()[0]
    )
    parser.add_argument("--tables", nargs="*", default=["same_symmetric", "sum9_symmetric"])
    parser.add_argument(
        "--stacks", type=int, nargs="*", default=[], help="also count a stacked iteration at R"
    )
    args = parser.parse_args(argv)
    if args.stacks:
        counts = stack_counts(args.stacks)
        stacks = " ".join(map(str, args.stacks))
        print(
            f"`python -m campaign.bench count-ops --tables --stacks {stacks}`"
            ": computing tensor operations (a kernel each on a GPU) of one whole training "
            "iteration of R stacked runs (StackNet layout, default configuration of `same`, "
            "b = 64; counted on the CPU without the CUDA graph).\n"
        )
        base = counts[0]["operations"] / counts[0]["runs"]
        rows = [
            (
                c["runs"],
                c["operations"],
                f"{c['operations'] / c['runs']:.0f}",
                f"{c['operations'] / base:.2f}",
            )
            for c in counts
        ]
        print(
            "\n".join(
                markdown.table(["R", "operations", "per run", f"/ R={counts[0]['runs']}"], rows)
            )
        )
        print()
        if not args.tables:
            return
    rows = table(args.tables)
    print(
        "`python -m campaign.bench count-ops --tables "
        + " ".join(args.tables)
        + "`: computing tensor operations (a kernel each on a GPU) of one run's step after "
        "the network, forward + backward, b = 64.\n"
    )
    print(
        "\n".join(
            markdown.table(
                ["run", "kb", "DFL term", "whole loss"],
                [(r["run"], r["kb"], r["dfl_term"], r["loss"]) for r in rows],
            )
        )
    )
