"""`python -m campaign.bench time-ntn`: CPU time of one training iteration and of its NTN part
with the text's NTN (k = 50, Section 9.3) and the authors' code's head (`SameNet`: k = 10 and an
output bias), timed round-robin in one process, printed as Markdown (docs/fidelity.md)."""

from __future__ import annotations

import argparse
from collections.abc import Sequence

import torch

from campaign.bench import steps
from campaign.bench.timing import interleaved, load, summary_ms
from dfl_bench import markdown
from dfl_bench.lifecycle.origin import cpu_model

HEADS = {
    "k=50 (text)": ["model.ntn_k=50", "model.ntn_bias=false"],
    "k=10 + bias (code)": ["model.ntn_k=10", "model.ntn_bias=true"],
}
PARTS = ("iteration", "cnn", "ntn")


def timings(
    kb: str, repeats: int, warmup: int, subset_test: int | None = None
) -> dict[str, dict[str, float]]:
    """Median ms per head of the iteration (`steps.iteration`) and of its CNN and NTN parts
    (`steps.parts`), all timed round-robin."""
    device = torch.device("cpu")
    batches = steps.draw_batches(steps.load_data(64, device, subset_test), 64, 8)
    calls = {}
    for head, overrides in HEADS.items():
        module = steps.build_module(kb, steps.NEVER, device, overrides)
        parts = steps.parts(module, batches[0])
        calls[head, "iteration"] = steps.iteration(module, batches)
        calls[head, "cnn"], calls[head, "ntn"] = parts["cnn"], parts["ntn"]
    samples = interleaved(calls, repeats, warmup, device)
    return {
        head: {part: summary_ms(samples[head, part])["median_ms"] for part in PARTS}
        for head in HEADS
    }


def main(argv: Sequence[str] | None = None) -> None:
    """Time both heads and print the table and the k=50 / k=10 ratios."""
    parser = argparse.ArgumentParser(
        prog="python -m campaign.bench time-ntn", description=__doc__.splitlines()[0]
    )
    parser.add_argument("--kb", default="same")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--repeats", type=int, default=60)
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--subset-test", type=int, default=None, help="tests: fewer test images")
    args = parser.parse_args(argv)
    torch.set_num_threads(args.threads)
    before = load()
    ms = timings(args.kb, args.repeats, args.warmup, args.subset_test)
    text, code = ms.values()
    rows = [[head, *(f"{v[p]:.2f}" for p in PARTS)] for head, v in ms.items()]
    rows.append(["ratio k=50 / k=10", *(f"{text[p] / code[p]:.2f}" for p in PARTS)])
    print(
        f"\n## CPU step time\n\n`python -m campaign.bench time-ntn --threads {args.threads}`: "
        f"knowledge base {args.kb}, default operators, b = 64, {args.threads} torch thread(s), "
        f"median of {args.repeats} round-robin repeats (ms), {cpu_model()}, "
        f"load average {before[0]:.1f} -> {load()[0]:.1f}. `cnn`: the CNN forward + backward "
        "on the step's images; `ntn`: every head on all pairs of both batches, forward + "
        "backward.\n"
    )
    print("\n".join(markdown.table(["head", *(f"{p} ms" for p in PARTS)], rows)))
