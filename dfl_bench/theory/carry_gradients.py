"""`python -m dfl_bench.theory.carry_gradients`: the paper's derivative view (Section 7: where an
operator's derivative vanishes, no learning signal reaches the network) applied to multi-digit
MNIST addition. For each row of `conf/experiment/mnist_addition_digits.yaml` (and its pairs at
one digit), at the untrained digit network: the sum's valuation and the norm of the DFL loss's
gradient on the network's parameters. Below the log-product's floor (numerics.EPS) the floored
log's derivative is the constant 1/EPS instead of 1/x, so the gradient shrinks with the
valuation; the exact pair (product, bounded sum) takes the log of the probability itself.
Written to results/theory/carry_gradients.md."""

from __future__ import annotations

import argparse
import statistics
from collections.abc import Sequence
from functools import cache
from pathlib import Path

import torch
import yaml

from dfl_bench import markdown
from dfl_bench.operators import OperatorSet
from dfl_bench.operators.numerics import EPS
from dfl_bench.paths import REPO_DIR
from dfl_bench.tasks import mnist_addition as addition
from dfl_bench.tasks.mnist.model import MnistNet

EXPERIMENT = REPO_DIR / "conf" / "experiment" / "mnist_addition_digits.yaml"
OUT = REPO_DIR / "results" / "theory" / "carry_gradients.md"


@cache
def experiment() -> dict:
    """The experiment's yaml (read once): its rows and the universal aggregator over the batch."""
    return yaml.safe_load(EXPERIMENT.read_text())


def rows() -> dict[str, tuple[dict, dict, int]]:
    """The experiment's rows (t-norm, existential, digits), each pair also at one digit."""
    spec = experiment()["rows"]
    out = {}
    for name, row in spec.items():
        out[name] = (row["tnorm"], row["exists"], int(row["digits"]))
        out.setdefault(name.rsplit("_n", 1)[0] + "_n1", (row["tnorm"], row["exists"], 1))
    return dict(sorted(out.items(), key=lambda kv: (kv[1][2], kv[0])))


def measure(tnorm: dict, exists: dict, digits: int, sums: int, seed: int) -> tuple[float, float]:
    """Median valuation of `sums` random sums and the parameters' gradient norm, untrained net."""
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
    exact = addition.is_exact(ops)
    valuation = addition.sum_valuation(log_probs, target, ops, exact)
    addition.dfl_loss(valuation, ops, exact).backward()
    norm = torch.sqrt(sum((p.grad**2).sum() for p in net.parameters() if p.grad is not None))
    shown = valuation.exp() if exact else valuation
    return float(shown.detach().median()), float(norm)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m dfl_bench.theory.carry_gradients")
    parser.add_argument("--images", type=int, default=128, help="images per batch at every N")
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args(argv)
    table = []
    for name, (tnorm, exists, digits) in rows().items():
        sums = max(1, args.images // (2 * digits))
        runs = [measure(tnorm, exists, digits, sums, seed) for seed in range(args.seeds)]
        value = statistics.median(v for v, _ in runs)
        grad = statistics.median(g for _, g in runs)
        where = "below" if value < EPS and not name.startswith("product_sum") else "-"
        table.append([name, str(digits), f"{value:.1e}", where, f"{grad:.1e}"])
    command = "python -m dfl_bench.theory.carry_gradients " + " ".join(argv or [])
    markdown.report(
        args.out,
        [
            "# Multi-digit MNIST addition: the learning signal at the untrained network",
            "",
            f"`{command.strip()}` (median over {args.seeds} seeds of the network's "
            f"initialization and {args.images} random images a batch). Valuation: the median "
            f"sum valuation of a batch; `below`: under the log-product's floor EPS = {EPS:g}, "
            "where its derivative is the constant 1/EPS (the exact row takes the log of the "
            "probability itself, no floor); gradient: the norm of the DFL loss's gradient on "
            "the network's parameters (ADAM's epsilon is 1e-8).",
            "",
            *markdown.table(["row", "N", "valuation", "floor", "gradient norm"], table),
            "",
        ],
    )


if __name__ == "__main__":
    main()
