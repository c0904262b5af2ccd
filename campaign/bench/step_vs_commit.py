"""`python -m campaign.bench step-vs-commit --base REV`: the CPU single-run training iteration
of this checkout against the one of git revision REV, as a ratio measured in one run.

Each round times both checkouts once, each in its own process (the two versions of the package
cannot share one), alternating which goes first, so drifts in the machine's load hit both; the
ratio is the median over the rounds of this checkout's median iteration over REV's. REV is
checked out into a temporary git worktree (removed after). Writes `<out>/step_vs_commit.md`
and `.json`."""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

from campaign.child_env import child_env
from dfl_bench import markdown, outputs
from dfl_bench.lifecycle.origin import git
from dfl_bench.paths import REPO_DIR

OWN = {  # what its files start with (--out: a folder of them, or a new one)
    "step_vs_commit.json": outputs.Mark(b'{\n "base": '),
    "step_vs_commit.md": outputs.Mark(b"# One CPU training iteration: "),
}
# One process: the default configuration's module for `kb`, `steps` timed iterations
# (median ms on stdout), with the bench API both revisions have (bench/steps.py, timing.py).
TIMER = """
import json, sys, torch
torch.set_num_threads(1)
from campaign.bench import steps
from campaign.bench.timing import interleaved, summary_ms
kb, n, warmup = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
device = torch.device("cpu")
data = steps.load_data(64, device, 500)
module = steps.build_module(kb, 10**9, device)
run = steps.iteration(module, steps.draw_batches(data, 64, 8))
secs = interleaved({"it": run}, n, warmup, device)["it"]
print(json.dumps(summary_ms(secs)["median_ms"]))
"""


def time_checkout(folder: Path, kb: str, steps: int, warmup: int) -> float:
    """Median ms of one iteration in a fresh process of the checkout at `folder`."""
    env = child_env([str(folder)], OMP_NUM_THREADS="1")  # none of the caller's secrets
    done = subprocess.run(
        [sys.executable, "-c", TIMER, kb, str(steps), str(warmup)],
        cwd=folder,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        raise RuntimeError(f"timing in {folder} failed: {done.stderr[-2000:]}")
    return float(done.stdout.strip().splitlines()[-1])


def compare(base: str, kbs: Sequence[str], rounds: int, steps: int, warmup: int) -> dict:
    """{kb: {base_ms, head_ms, ratio}} and the revisions, from `rounds` alternating rounds."""
    head = git(REPO_DIR, "rev-parse", "--short", "HEAD") + (
        "-dirty" if git(REPO_DIR, "status", "--porcelain") else ""
    )
    out: dict = {
        "base": git(REPO_DIR, "rev-parse", "--short", base),
        "head": head,
        "rounds": rounds,
    }
    with tempfile.TemporaryDirectory(prefix="dfl_bench_base_") as tmp:
        worktree = Path(tmp) / "base"
        git(REPO_DIR, "worktree", "add", "--detach", str(worktree), base)
        try:
            for kb in kbs:
                ratios, base_ms, head_ms = [], [], []
                for i in range(rounds):
                    order = [(REPO_DIR, head_ms), (worktree, base_ms)]
                    for folder, samples in order if i % 2 == 0 else order[::-1]:
                        samples.append(time_checkout(folder, kb, steps, warmup))
                    ratios.append(head_ms[-1] / base_ms[-1])
                out[kb] = {
                    "base_ms": statistics.median(base_ms),
                    "head_ms": statistics.median(head_ms),
                    "ratio": statistics.median(ratios),
                    "ratios": ratios,
                }
        finally:
            git(REPO_DIR, "worktree", "remove", "--force", str(worktree))
    return out


def write(result: dict, out: Path, command: str) -> Path:
    """`out/step_vs_commit.md` (and .json): one row per knowledge base."""
    outputs.folder(out, OWN)
    data = json.dumps(result, indent=1) + "\n"
    outputs.write_text(out / "step_vs_commit.json", data, OWN["step_vs_commit.json"])
    kbs = [k for k, v in result.items() if isinstance(v, dict)]
    rows = [
        [
            p,
            f"{result[p]['base_ms']:.2f}",
            f"{result[p]['head_ms']:.2f}",
            f"{result[p]['ratio']:.3f}",
            ", ".join(f"{r:.3f}" for r in result[p]["ratios"]),
        ]
        for p in kbs
    ]
    text = [
        f"# One CPU training iteration: `{result['head']}` against `{result['base']}`",
        "",
        f"`{command}`: one torch thread, batch 64, the default configuration of each knowledge "
        f"base; {result['rounds']} rounds, each timing both revisions once in fresh processes "
        "(alternating which goes first); ratio = the median over the rounds of this revision's "
        "median iteration over the base's (below 1: faster).",
        "",
        *markdown.table(["kb", "base ms", "this ms", "ratio", "ratio per round"], rows),
        "",
    ]
    return outputs.write_text(out / "step_vs_commit.md", "\n".join(text), OWN["step_vs_commit.md"])


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m campaign.bench step-vs-commit")
    parser.add_argument("--base", required=True, help="git revision to compare with")
    parser.add_argument("--kbs", nargs="+", default=["same", "sum9"])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--steps", type=int, default=60, help="timed iterations per process")
    parser.add_argument("--warmup", type=int, default=10)
    parser.add_argument("--out", type=Path, default=Path("results/bench"))
    args = parser.parse_args(argv)
    outputs.checked("step-vs-commit", args.out, OWN)  # before anything is timed
    command = "python -m campaign.bench step-vs-commit " + " ".join(
        argv if argv is not None else sys.argv[1:]
    )
    result = compare(args.base, args.kbs, args.rounds, args.steps, args.warmup)
    print(write(result, args.out, command.strip()).read_text())
