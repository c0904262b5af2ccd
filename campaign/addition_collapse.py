"""How a run of MNIST addition collapses (results/addition_collapse/): a row's run retrained for
its first steps as its job trains it (seeded as the job, its own data order, the same
`RunsModule.iterate`), its test digits read at a few steps: the accuracy per digit and of the
sums, and the share of each shift, (predicted - true) mod 10. A run whose digits are wrong at
random spreads its errors over the nine shifts; a run that fell into a shift the sums cannot see
puts them on one or two.

    python -m campaign.addition_collapse --row bn_wide_n15 --seeds 0 1
    python -m campaign.addition_collapse --experiment mnist_addition_warmup_nets \
        --row bn_wide_warm_n15 --seeds 1 --steps 600 2500 5000 12500 \
        --out results/addition_collapse/warmup
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import lightning as L
import torch

from campaign.bench.steps import compose_config
from dfl_bench import markdown, tasks
from dfl_bench.lifecycle import records
from dfl_bench.operators import KINDS, OperatorSet
from dfl_bench.tasks.sum_formula import add_digits
from dfl_bench.training import RunsModule
from dfl_bench.untrusted import UntrustedFile, out_folder, write_text

EXPERIMENT = "mnist_addition_frontier_nets"
STEPS = (0, 10, 20, 50, 100, 200, 500, 1000)
OUT = Path("results") / "addition_collapse"


@torch.inference_mode()
def reading(run: Any, batches: Sequence[tuple[torch.Tensor, ...]], digits: int) -> dict[str, Any]:
    """The test digits' accuracy, the sums' accuracy and each shift's share (eval mode)."""
    was_training = run.training
    run.eval()
    shifts = torch.zeros(10, dtype=torch.long)
    confusion = torch.zeros(10, 10, dtype=torch.long)  # true digit x predicted digit
    right_sums = n_sums = 0
    for images, truth, sums in batches:
        logits, _ = run.net(images.flatten(0, 1))
        predicted = logits.argmax(-1).view(truth.shape)
        shifts += torch.bincount(((predicted - truth) % 10).flatten(), minlength=10)
        confusion += torch.bincount((10 * truth + predicted).flatten(), minlength=100).view(10, 10)
        added = add_digits(predicted[:, :digits], predicted[:, digits:])
        right_sums += int((added == sums).all(-1).sum())
        n_sums += len(sums)
    run.train(was_training)
    share = (shifts / shifts.sum()).tolist()
    predicted_share = confusion.sum(0) / confusion.sum()
    return {
        "digit_accuracy": share[0],
        "sum_accuracy": right_sums / max(n_sums, 1),
        "shift_share": [round(s, 4) for s in share],
        "predicted_share": [round(float(s), 4) for s in predicted_share],
        "confusion": confusion.tolist(),
        "batch_norm": batch_norm_stats(run),
    }


def batch_norm_stats(run: Any) -> dict[str, dict[str, float]]:
    """Each batch-norm layer's running statistics, summarized: the mean |running mean| and the
    mean and smallest running variance over its channels (a layer whose statistics the first
    steps dragged far from the batch's shows here)."""
    out = {}
    for name, module in run.net.named_modules():
        if (
            isinstance(module, torch.nn.modules.batchnorm._BatchNorm)
            and module.running_var is not None
        ):
            out[name] = {
                "mean_abs_running_mean": round(float(module.running_mean.abs().mean()), 4),
                "mean_running_var": round(float(module.running_var.mean()), 4),
                "min_running_var": round(float(module.running_var.min()), 4),
            }
    return out


def digit_batches(data: Any, images: int) -> list[tuple[torch.Tensor, ...]]:
    """The first `images` training images' sums as evaluation batches (images, digits, sums):
    digits the diagnosis may read without reading the test set."""
    n = 2 * data.digits
    groups = data.train_groups[: max(1, images // n)].numpy()
    data.splits["train"] = (data.train_x, data.arrays.train_y, groups)
    return data.test_batches()["train"]


def trace(
    row: str, seed: int, steps: Sequence[int], experiment: str = EXPERIMENT, on: str = "test"
) -> dict[str, Any]:
    """Row `row`'s run of seed `seed` trained to max(steps), read at each of `steps` on the test
    digits or (`on="train"`) on the first 10,000 training images' digits."""
    config = compose_config([f"+experiment={experiment}", f"row={row}", f"seed={seed}"])
    L.seed_everything(seed, workers=True, verbose=False)  # as train.prepared, before the weights
    operators = OperatorSet.from_config({kind: config[kind] for kind in KINDS})
    run = tasks.task_of(config).build(config, operators)
    with torch.no_grad():
        checksum = float(sum(p.double().sum() for p in run.parameters()))
    data = tasks.task_of(config).data([config])
    data.setup()
    test = data.test_batches()["test"] if on == "test" else digit_batches(data, 10_000)
    module = RunsModule([run])
    configured = module.configure_optimizers()
    optimizer = configured["optimizer"] if isinstance(configured, dict) else configured
    schedule = configured["lr_scheduler"]["scheduler"] if isinstance(configured, dict) else None
    digits = config["task"]["digits"]
    readings = {0: reading(run, test, digits)} if 0 in steps else {}
    loader = data.train_dataloader()  # once, each pass a new iterator: as Lightning reads it
    batches = iter(loader)
    for step in range(1, max(steps) + 1):
        batch = next(batches, None)
        if batch is None:  # the pass ended: the next one
            batches = iter(loader)
            batch = next(batches)
        module.iterate(optimizer, batch, step)
        if schedule is not None:
            schedule.step()
        if step in steps:
            readings[step] = reading(run, test, digits)
            print(f"[addition_collapse] {row} seed {seed} step {step}: {readings[step]}")
    return {"row": row, "seed": seed, "init_checksum": round(checksum, 4), "on": on,
            "readings": readings}  # fmt: skip


def markdown_text(traces: Sequence[dict[str, Any]], command: str) -> str:
    """results/addition_collapse/README.md: per run, per step, the digits, sums and shifts."""
    lines = [
        "# How a run of MNIST addition collapses",
        "",
        f"Generated by `{command}` (campaign/addition_collapse.py): each run retrained for its "
        "first steps as its job trains it (seeded as the job, its data order, the same "
        "`RunsModule.iterate`), "
        + (
            "its 10,000 test digits"
            if traces[0].get("on", "test") == "test"
            else "the digits of its first 10,000 training images (not the test set)"
        )
        + " read in eval mode at each step shown. A shift is (predicted - true) mod 10; shift "
        "0 is the digit accuracy.",
        "",
    ]
    for t in traces:
        init = t["init_checksum"]
        lines += [f"## `{t['row']}`, seed {t['seed']} (its weights at init sum to {init})"]
        header = ["step", "digits (%)", "sums (%)", "largest wrong shifts (share %)"]
        extra = any("predicted_share" in r for r in t["readings"].values())  # newer traces
        if extra:
            header += ["most predicted digit (share %)", "batch norm: smallest running var"]
        body = []
        for step, r in sorted(t["readings"].items(), key=lambda kv: int(kv[0])):
            wrong = sorted(range(1, 10), key=lambda s: -r["shift_share"][s])[:2]
            shown = ", ".join(f"+{s}: {100 * r['shift_share'][s]:.1f}" for s in wrong)
            most = r.get("predicted_share")
            top = f"{max(range(10), key=most.__getitem__)}: {100 * max(most):.1f}" if most else "-"
            norms = r.get("batch_norm") or {}
            low = ", ".join(f"{k} {v['min_running_var']:.3g}" for k, v in norms.items()) or "-"
            body.append(
                [str(step), f"{100 * r['digit_accuracy']:.2f}", f"{100 * r['sum_accuracy']:.2f}",
                 shown, *([top, low] if extra else [])]
            )  # fmt: skip
        lines += ["", *markdown.table(header, body), ""]
        last = max(t["readings"], key=int)
        confusion = t["readings"][last]["confusion"]
        mapped = []
        for d, row in enumerate(confusion):
            top = max(range(10), key=lambda p: row[p])
            mapped.append(f"{d} -> {top} ({100 * row[top] / max(sum(row), 1):.0f}%)")
        lines += [f"At step {last}, each true digit's most frequent prediction: "
                  + ", ".join(mapped) + ".", ""]  # fmt: skip
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m campaign.addition_collapse")
    parser.add_argument("--experiment", default=EXPERIMENT)
    parser.add_argument("--row", default="bn_wide_n15")
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1])
    parser.add_argument("--steps", type=int, nargs="+", default=list(STEPS))
    parser.add_argument("--out", type=Path, default=OUT)
    parser.add_argument(
        "--on", choices=("test", "train"), default="test",
        help="whose digits a reading reads: the test set's, or the first 10,000 training images'",
    )  # fmt: skip
    args = parser.parse_args(argv)
    if any(s < 0 for s in args.steps):
        parser.error(f"--steps must be >= 0, got {args.steps}")
    try:  # refused before anything trains
        out_folder(args.out, "traces.json", "README.md")
    except UntrustedFile as err:
        print(f"[addition_collapse] {err}", file=sys.stderr)
        return 2
    torch.set_num_threads(1)
    steps = sorted(set(args.steps))
    traces = [trace(args.row, seed, steps, args.experiment, args.on) for seed in args.seeds]
    named = [] if args.experiment == EXPERIMENT else [f"--experiment {args.experiment}"]
    command = "python -m campaign.addition_collapse " + " ".join(
        [*named, f"--row {args.row}", "--seeds", *map(str, args.seeds), "--steps",
         *map(str, args.steps)]
    )  # fmt: skip
    if args.on != "test":
        command += f" --on {args.on}"
    if args.out != OUT:
        command += f" --out {args.out.as_posix()}"
    text = json.dumps(records.strict(traces), indent=1, allow_nan=False)
    write_text(args.out / "traces.json", text + "\n")
    write_text(args.out / "README.md", markdown_text(traces, command) + "\n")
    print(f"[addition_collapse] wrote {args.out / 'README.md'}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
