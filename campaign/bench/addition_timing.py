"""`python -m campaign.bench time-addition`: the MNIST-addition training step per image at N
digits per number (the digit network's forward and backward and the sum's valuation: enumerated
up to mnist_addition.ENUMERATED digits, over the carries above), as a ratio to N = 1 measured in
the same run; written to results/bench/addition_digits.md."""

from __future__ import annotations

import argparse
import time
from collections.abc import Sequence
from pathlib import Path

import torch

from campaign.bench.timing import refuse_low
from dfl_bench import markdown, outputs
from dfl_bench.operators import OperatorSet
from dfl_bench.paths import REPO_DIR
from dfl_bench.tasks import mnist_addition as addition
from dfl_bench.tasks.mnist.nets import MnistNet

OUT = REPO_DIR / "results" / "bench" / "addition_digits.md"
TITLE = "MNIST addition: the training step per image against the digits per number"
OWN = outputs.headed(  # its page's header (--out: new or its own), older name too
    TITLE, "python -m campaign.bench time-addition", "python -m dfl_bench.bench time-addition"
)
PAIR = {  # the headline pair: the exact probability
    "tnorm": {"name": "product"},
    "tconorm": {"name": "product"},
    "implication": {"name": "reichenbach"},
    "forall": {"name": "log_product", "reduction": "mean"},
    "exists": {"name": "bounded_sum"},
}


def step_seconds(digits: int, sums: int, repeats: int, net: MnistNet, ops: OperatorSet) -> float:
    """The fastest of `repeats` training steps of `sums` sums at `digits` digits per number."""
    g = torch.Generator().manual_seed(digits)
    images = torch.randn(sums * 2 * digits, 1, 28, 28, generator=g)
    numbers = torch.randint(0, 10, (sums, 2, digits), generator=g)
    target = addition.add_digits(numbers[:, 0], numbers[:, 1])
    best = float("inf")
    for _ in range(repeats + 1):  # the first warms up
        start = time.perf_counter()
        logits, _ = net(images)
        log_probs = logits.log_softmax(-1).view(sums, 2 * digits, 10)
        valuation = addition.sum_valuation(log_probs, target, ops, log=True)
        addition.dfl_loss(valuation, ops, log=True).backward()
        best = min(best, time.perf_counter() - start)
    return best


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m campaign.bench time-addition")
    parser.add_argument("--digits", type=int, nargs="+", default=[1, 2, 4, 15])
    parser.add_argument("--images", type=int, default=120, help="images per step at every N")
    parser.add_argument("--repeats", type=int, default=10)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args(argv)
    outputs.checked("time-addition", args.out, OWN)  # before anything is timed
    given = {"--digits": min(args.digits), "--images": args.images, "--repeats": args.repeats}
    given["--threads"] = args.threads
    refuse_low("time-addition", {key: (value, 1) for key, value in given.items()})
    torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    net, ops = MnistNet(), OperatorSet.from_config(PAIR)
    rows, base = [], None
    for digits in args.digits:
        sums = max(1, args.images // (2 * digits))
        seconds = step_seconds(digits, sums, args.repeats, net, ops)
        per_image = seconds / (sums * 2 * digits)
        base = per_image if base is None else base
        how = "enumerated" if digits <= addition.ENUMERATED else "over the carries"
        rows.append(
            [str(digits), str(sums), how, f"{1e3 * per_image:.3f}", f"{per_image / base:.2f}"]
        )
    markdown.report(
        args.out,
        [
            f"# {TITLE}",
            "",
            f"`python -m campaign.bench time-addition {' '.join(argv or [])}`".replace(" `", "`"),
            f"({args.threads} thread(s), the fastest of {args.repeats} steps; product t-norm and "
            "bounded sum, the exact probability; about the same number of images per step at "
            "every N). The ratio is to the first row, measured in the same run.",
            "",
            *markdown.table(["N", "sums per step", "valuation", "ms per image", "ratio"], rows),
            "",
        ],
        OWN,
    )
