"""`python -m dfl_bench.theory.carry_gradients`: the paper's derivative view (Section 7: where an
operator's derivative vanishes, no learning signal reaches the network) applied to multi-digit
MNIST addition. For each (t-norm, existential) pair of `conf/experiment/mnist_addition_digits.yaml`
at N = 1, 4, 15, 100 and 1,000 digits, at the untrained digit network: the sum's valuation (as a
power of ten: at N = 1,000 it is far below float32's range) and the norm of the DFL loss's
gradient on the network's parameters, with the valuation in log space (`task.valuation: log`,
tasks/mnist_addition.py) and as a value (`probability`). As a value it underflows or falls below
the log-product's floor (numerics.EPS), where the floored log's derivative is the constant 1/EPS
instead of 1/x: the gradient vanishes with the valuation, an artefact of float32 and the floor;
in log space it does not. Written to results/theory/carry_gradients.md."""

from __future__ import annotations

import argparse
import math
import statistics
from collections.abc import Sequence
from functools import cache
from pathlib import Path
from typing import NamedTuple

import torch
import yaml

from dfl_bench import markdown, outputs
from dfl_bench.operators import OperatorSet
from dfl_bench.operators.numerics import EPS
from dfl_bench.paths import REPO_DIR
from dfl_bench.tasks import mnist_addition as addition
from dfl_bench.tasks.mnist.nets import MnistNet

EXPERIMENT = REPO_DIR / "conf" / "experiment" / "mnist_addition_digits.yaml"
OUT = REPO_DIR / "results" / "theory" / "carry_gradients.md"
TITLE = "Multi-digit MNIST addition: the learning signal at the untrained network"
OWN = outputs.headed(TITLE, "python -m dfl_bench.theory.carry_gradients")  # --out: new or its own
DIGITS = (1, 4, 15, 100, 1000)
VALUATIONS = ("log", "probability")


@cache
def experiment() -> dict:
    """The experiment's yaml (read once): its rows and the universal aggregator over the batch."""
    return yaml.safe_load(EXPERIMENT.read_text())


def pairs() -> dict[str, tuple[dict, dict]]:
    """The experiment's distinct (t-norm, existential) pairs, by their row's name without N."""
    out: dict[str, tuple[dict, dict]] = {}
    for name, row in experiment()["rows"].items():
        pair = (row["tnorm"], row["exists"])
        if pair not in out.values():
            out[name.split("_n", 1)[0]] = pair
    return out


class Signal(NamedTuple):
    """What the DFL loss sends back at the untrained network, for one batch of sums."""

    log10: float  # the median valuation's log10 (-inf: the value is 0)
    norm: float  # the gradient's norm on the network's parameters
    reached: float  # the share of the batch's digit images whose outputs get a nonzero gradient


def measure(
    tnorm: dict, exists: dict, digits: int, sums: int, seed: int, valuation: str = "log"
) -> Signal:
    """Median log10 valuation of `sums` random sums, the parameters' gradient norm and the share
    of digit images the gradient reaches, at the untrained network."""
    torch.manual_seed(seed)
    net = MnistNet().eval()  # no dropout: the network's own output at initialization
    ops = OperatorSet.from_config(
        {
            "tnorm": tnorm,
            "tconorm": {"name": "product"},
            "implication": {"name": "reichenbach"},
            "forall": experiment()["forall"],
            "exists": exists,
        }
    )
    images = torch.randn(sums * 2 * digits, 1, 28, 28)
    numbers = torch.randint(0, 10, (sums, 2, digits))
    target = addition.add_digits(numbers[:, 0], numbers[:, 1])
    log_probs = net(images)[0].log_softmax(-1).view(sums, 2 * digits, 10)
    log_probs.retain_grad()
    log = addition.in_log(ops, valuation)
    value = addition.sum_valuation(log_probs, target, ops, log)
    addition.dfl_loss(value, ops, log).backward()
    norm = torch.sqrt(sum((p.grad**2).sum() for p in net.parameters() if p.grad is not None))
    logs = value.detach() if log else value.detach().log()
    reached = (log_probs.grad != 0).any(-1).float().mean()
    return Signal(float(logs.median()) / math.log(10.0), float(norm), float(reached))


def exact(tnorm: dict, exists: dict) -> bool:
    """Whether the pair is the exact probability (its valuation is a log in either mode)."""
    return (tnorm["name"], exists["name"]) == ("product", "bounded_sum")


def power(log10: float) -> str:
    """A valuation given as its log10, as 10^x (0 where it is 0)."""
    return (
        "0" if log10 == float("-inf") else f"1e{log10:+.0f}" if log10 < -3 else f"{10**log10:.3f}"
    )


def row(name: str, tnorm: str, exists: str, digits: int, sums: int, seeds: int) -> list[str]:
    """One pair at N digits: per valuation, the median valuation (and in log space the images
    reached) and the median gradient norm over the seeds' initializations."""
    cells = [name, str(digits)]
    for valuation in VALUATIONS:
        runs = [measure(tnorm, exists, digits, sums, s, valuation) for s in range(seeds)]
        value = statistics.median(run.log10 for run in runs)
        grad = statistics.median(run.norm for run in runs)
        if valuation == "log":
            reached = statistics.median(run.reached for run in runs)
            cells += [power(value), f"{reached:.1%}"]
        elif exact(tnorm, exists):
            cells.append("log either way")  # the probability's own log, no floor
        else:
            cells.append("below" if value < math.log10(EPS) else "-")
        cells.append(f"{grad:.1e}")
    return cells


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m dfl_bench.theory.carry_gradients")
    parser.add_argument(
        "--images", type=int, default=128, help="images per batch (at least one sum)"
    )
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--digits", default=",".join(map(str, DIGITS)))
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args(argv)
    outputs.checked("carry_gradients", args.out, OWN)  # before anything is computed
    table = [
        row(name, tnorm, exists, digits, max(1, args.images // (2 * digits)), args.seeds)
        for name, (tnorm, exists) in pairs().items()
        for digits in map(int, args.digits.split(","))
    ]
    command = "python -m dfl_bench.theory.carry_gradients " + " ".join(argv or [])
    markdown.report(
        args.out,
        [
            f"# {TITLE}",
            "",
            f"`{command.strip()}` (median over {args.seeds} seeds of the network's "
            f"initialization, {args.images} random images a batch, at least one sum). "
            "Valuation: the median sum valuation of a batch, computed in log space; gradient: "
            "the norm of the DFL loss's gradient on the network's parameters (ADAM's epsilon "
            "is 1e-8), with the valuation in log space (`task.valuation: log`, the default) "
            "and as a value (`probability`, the records made before log space); `floor`: the "
            f"value is under the log-product's floor EPS = {EPS:g} (or 0 in float32), where the "
            "floored log's derivative is the constant 1/EPS. The product's pairs keep a "
            "gradient at every N in log space; as values they lose it where they pass the "
            "floor. Images reached: the share of the batch's digit images whose 10 outputs get "
            "a nonzero gradient (in log space), what says why a pair learns or not where the "
            "norm does not. Goedel and Lukasiewicz with the maximum are computed as values "
            "either way: Goedel's valuation is its weakest digit's (no underflow; a norm like "
            "the product's, but sent to one digit of one tuple: one image of a sum's 2N), "
            "Lukasiewicz's is 0 with a zero derivative (no gradient at all).",
            "",
            *markdown.table(
                [
                    "pair",
                    "N",
                    "valuation",
                    "images reached",
                    "gradient (log)",
                    "floor (value)",
                    "gradient (value)",
                ],
                table,
            ),
            "",
        ],
        OWN,
    )


if __name__ == "__main__":
    main()
