"""`python -m campaign.bench time-families`: the DFL term (forward + backward, the `same`
knowledge base, one thread) of every parametric family's symmetric construction
(conf/families/parametric.yaml: T, S, S-implication, A_T, E_S) and of the default
configuration, against the product set (`kb_timing.PRODUCT`), timed round-robin in one process;
written as a Markdown table to results/bench/families.md."""

from __future__ import annotations

import argparse
import shlex
import statistics
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import torch
from omegaconf import OmegaConf

from campaign.bench import kb_timing, sections
from campaign.bench.timing import interleaved, refuse_low
from dfl_bench import markdown, outputs
from dfl_bench.logic import build_kb
from dfl_bench.operators import KINDS, OperatorSet
from dfl_bench.paths import REPO_DIR

CONF = REPO_DIR / "conf"
TITLE = "The DFL term of each operator family against the product set"
OWN = outputs.headed(  # its page's header (--out: new or its own), older name too
    TITLE, "python -m campaign.bench time-families", "python -m dfl_bench.bench time-families"
)
TARGET = 2.0  # a family's DFL term at most twice the product set's
DEFAULT_TARGET = 1.5  # and the default configuration's at most 1.5 times


def family_sets() -> dict[str, dict[str, Any]]:
    """Row -> operator configs of conf/families/parametric.yaml's own rows (S-implication)."""
    rows = OmegaConf.to_container(OmegaConf.load(CONF / "families" / "parametric.yaml"))
    rows.pop("defaults", None)
    return {
        row: {
            kind: (family[kind]["S"] if kind == "implication" else family[kind]) for kind in KINDS
        }
        for row, family in rows.items()
    }


def default_set() -> dict[str, Any]:
    """The default configuration's operators (`python -m dfl_bench` with no overrides)."""
    from dfl_bench.lifecycle.sweep import job_config

    config = OmegaConf.to_container(job_config([]), resolve=True)
    return {kind: config[kind] for kind in KINDS}


def time_sets(
    sets: Mapping[str, Mapping[str, Any]], b: int, repeats: int, warmup: int
) -> dict[str, list[float]]:
    """Seconds of one DFL term (loss and backward) per operator set, round-robin."""
    kb = build_kb("same")
    interp, _ = kb_timing.batch(b)

    def step(ops: OperatorSet):
        def run() -> None:
            for t in interp.values():
                t.grad = None
            kb(interp, ops, None).loss.backward()

        return run

    fns = {name: step(OperatorSet.from_config(cfg)) for name, cfg in sets.items()}
    return interleaved(fns, repeats, warmup, torch.device("cpu"))


def report(samples: Mapping[str, list[float]], b: int, command: str) -> str:
    """The Markdown page: per set its minimum and median and its ratio to the product's."""
    base = min(samples["product"])
    rows = []
    for name, seconds in samples.items():
        ratio = min(seconds) / base
        target = DEFAULT_TARGET if name == "default" else TARGET
        verdict = "" if name == "product" else ("yes" if ratio <= target else "no")
        rows.append(
            [
                name,
                f"{1000 * min(seconds):.2f}",
                f"{1000 * statistics.median(seconds):.2f}",
                f"{ratio:.2f}",
                f"{target:g}x" if name != "product" else "",
                verdict,
            ]
        )
    header = ["operator set", "min ms", "median ms", "min / product's", "target", "met"]
    machine = sections.machine(torch.device("cpu"))
    return "\n".join(
        [
            f"# {TITLE}",
            "",
            f"`{command}` (generated). The `same` knowledge base, b = {b}, loss and backward, one "
            f"thread, every set timed round-robin in one process ({len(samples['product'])} "
            "rounds); a ratio is of the minima. Families: conf/families/parametric.yaml's "
            "symmetric construction (T, S, S-implication, A_T, E_S); product: "
            "`bench/kb_timing.PRODUCT`; default: `python -m dfl_bench`'s operators.",
            "",
            f"Machine: {machine['cpu']}, {machine['cores']} cores, torch {machine['torch']}, "
            f"commit {machine['git_commit'][:10]}, load {machine['load_average_start']}.",
            "",
            *markdown.table(header, rows),
            "",
        ]
    )


def main(argv: Sequence[str] | None = None) -> None:
    """Time every family and the default configuration against the product set."""
    parser = argparse.ArgumentParser(
        prog="python -m campaign.bench time-families", description=__doc__.splitlines()[0]
    )
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--repeats", type=int, default=30)
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--rows", nargs="+", default=None, help="families' rows (default: all)")
    parser.add_argument("--out", type=Path, default=REPO_DIR / "results" / "bench" / "families.md")
    args = parser.parse_args(argv)
    outputs.checked("time-families", args.out, OWN)  # before anything is timed
    least = {"--batch-size": (args.batch_size, 1), "--repeats": (args.repeats, 1)}
    refuse_low("time-families", least | {"--warmup": (args.warmup, 0)})
    torch.set_num_threads(1)
    families = family_sets()
    unknown = sorted(set(args.rows or ()) - set(families))
    if unknown:
        why = ValueError(f"--rows: no such family row(s) {unknown}; valid: {sorted(families)}")
        raise SystemExit(outputs.refused("time-families", why))
    sets = {"product": kb_timing.PRODUCT, "default": default_set()}
    sets.update({row: families[row] for row in args.rows or families})
    samples = time_sets(sets, args.batch_size, args.repeats, args.warmup)
    command = shlex.join(["python", "-m", "campaign.bench", "time-families", *sys.argv[2:]])
    page = report(samples, args.batch_size, command)
    outputs.write_text(args.out, page, OWN)
    print(page)
