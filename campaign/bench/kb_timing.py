"""`python -m campaign.bench time-kb`: forward+backward time of each knowledge base vs batch
size (appendix "Implementation": cost O(|K| * P * b^d)), with the product operators and the
log-product aggregator, printed as a Markdown table."""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Sequence

import torch

from dfl_bench import markdown
from dfl_bench.logic import build_kb
from dfl_bench.operators import OperatorSet

PRODUCT = {
    "tnorm": {"name": "product"},
    "tconorm": {"name": "product"},
    "implication": {"name": "reichenbach"},
    "forall": {"name": "log_product", "reduction": "mean"},
    "exists": {"name": "probabilistic_sum"},
}


def batch(b: int, seed: int = 0) -> tuple[dict[str, torch.Tensor], dict[str, torch.Tensor]]:
    """A random interpretation (leaves requiring grad) and matching crisp labels."""
    g = torch.Generator().manual_seed(seed)
    y = torch.randint(0, 10, (b,), generator=g)
    interp = {
        "digit": torch.softmax(torch.randn(b, 10, generator=g), -1),
        "same": torch.rand(b, b, generator=g),
        "sum9": torch.rand(b, b, generator=g),
    }
    labels = {
        "digit": torch.nn.functional.one_hot(y, 10).float(),
        "same": (y[:, None] == y[None]).float(),
        "sum9": (y[:, None] + y[None] == 9).float(),
    }
    return {k: v.requires_grad_() for k, v in interp.items()}, labels


def time_step(kb, ops, interp, labels, repeats: int) -> tuple[float, float]:
    """Median and minimum milliseconds of one loss evaluation plus its backward pass."""
    times = []
    for i in range(repeats + 5):
        for t in interp.values():
            t.grad = None
        start = time.perf_counter()
        kb(interp, ops, labels).loss.backward()
        if i >= 5:
            times.append(time.perf_counter() - start)
    return 1000 * statistics.median(times), 1000 * min(times)


def main(argv: Sequence[str] | None = None) -> None:
    """Time every chosen knowledge base at every batch size and print the table."""
    parser = argparse.ArgumentParser(
        prog="python -m campaign.bench time-kb", description=__doc__.splitlines()[0]
    )
    parser.add_argument("--batch-sizes", type=int, nargs="+", default=[16, 32, 64, 128, 256])
    parser.add_argument("--kbs", nargs="+", default=["same", "sum9", "both"])
    parser.add_argument("--repeats", type=int, default=50)
    parser.add_argument("--threads", type=int, default=torch.get_num_threads())
    args = parser.parse_args(argv)
    torch.set_num_threads(args.threads)
    ops = OperatorSet.from_config(PRODUCT)
    rows = []
    for name in args.kbs:
        kb = build_kb(name)
        for b in args.batch_sizes:
            interp, labels = batch(b)
            plain = time_step(kb, ops, interp, None, args.repeats)
            metrics = time_step(kb, ops, interp, labels, args.repeats)
            n = sum(kb.groundings(b).values())
            rows.append(
                [
                    name,
                    b,
                    n,
                    f"{plain[0]:.2f} / {plain[1]:.2f}",
                    f"{metrics[0]:.2f} / {metrics[1]:.2f}",
                ]
            )
    header = [
        "kb",
        "b",
        "groundings",
        "fwd+bwd ms (median / min)",
        "with metrics ms (median / min)",
    ]
    print(f"torch {torch.__version__}, {torch.get_num_threads()} threads; ops: {PRODUCT}")
    print("\n".join(markdown.table(header, rows)))
