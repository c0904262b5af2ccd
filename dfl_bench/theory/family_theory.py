"""The paper's gradient measures (Sections 5-8) for the parametric families of
dfl_bench/operators/families.py, over each family's parameter p:

* the fraction of inputs with a nonvanishing derivative (Section 5's definition, as
  nonvanishing.py measures it) of the t-norm (n = 2), of its S- and R-implication, and of its
  universal aggregator A_T at n = 10 (Section 6: where A_T vanishes, no formula of a batch
  learns);
* the consequent share of the implication's derivative, cons = E|dI/dc| / (E|dI/dc| +
  E|dI/da|) (Section 9.1's cons, here over a distribution of truth values instead of a training
  run), under two distributions of (a, c): uniform on [0, 1]^2, where every S-implication gives
  exactly 1/2 by contraposition (I(a, c) = I(1 - c, 1 - a)), and the modus tollens corner
  U(0, 1/2)^2, the common case of Section 8 ("the agent most of the time predicts values around
  a = 0, c = 0"), where the share says how much of the gradient goes to the consequent.

    python -m dfl_bench.theory.family_theory --out results/theory/families [--samples N] [--seed S]

writes families.csv, one figure per family (families_<name>.png) and README.md.
"""

from __future__ import annotations

import argparse
import math
import shlex
import sys
import zlib
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402
import torch  # noqa: E402

from dfl_bench import markdown, outputs  # noqa: E402
from dfl_bench.operators import build  # noqa: E402
from dfl_bench.operators.families import FAMILIES  # noqa: E402
from dfl_bench.theory.nonvanishing import count_nonvanishing  # noqa: E402
from dfl_bench.untrusted import UntrustedFile  # noqa: E402

OWN = {  # what its files start with (--out: a folder of them, or a new one)
    "families.csv": outputs.Mark(b"family,p,tnorm,"),
    "README.md": outputs.Mark(b"# Gradient measures of the parametric t-norm families"),
}

PARAMETERS = {  # each family's p grid: both sides of its named members and limits
    "hamacher": (0.0, 0.25, 0.5, 1.0, 2.0, 5.0, 10.0, 50.0),
    "frank": (0.001, 0.01, 0.1, 0.5, 1.0, 2.0, 10.0, 100.0, 1000.0),
    "dombi": (0.1, 0.25, 0.5, 1.0, 2.0, 5.0, 10.0),
    "schweizer_sklar": (-10.0, -5.0, -2.0, -1.0, -0.5, 0.0, 0.5, 1.0, 2.0, 5.0),
    "aczel_alsina": (0.1, 0.25, 0.5, 1.0, 2.0, 5.0, 10.0),
}
AGGREGATED = 10  # inputs of the universal aggregator
REGIMES = {"uniform": 1.0, "corner": 0.5}  # (a, c) ~ U(0, high)^2
SAMPLES = 100_000


def _generator(seed: int, *key: object) -> torch.Generator:
    """A generator per measured quantity (adding cases changes no other estimate)."""
    return torch.Generator().manual_seed(seed * 1_000_003 + zlib.crc32(repr(key).encode()))


def fraction(kind: str, name: str, p: float, n: int, samples: int, seed: int) -> float:
    """The Monte Carlo fraction of U(0, 1)^n where the operator's gradient is nonzero."""
    op = build(kind, name, p=p)
    some, _ = count_nonvanishing(op, kind, n, samples, _generator(seed, kind, name, p, n))
    return some / samples


def consequent_share(name: str, p: float, high: float, samples: int, seed: int) -> float:
    """E|dI/dc| / (E|dI/dc| + E|dI/da|) for (a, c) ~ U(0, high)^2; nan when both vanish."""
    implication = build("implication", name, p=p)
    x = torch.rand(samples, 2, generator=_generator(seed, name, p, high), dtype=torch.float64)
    x = (x * high).requires_grad_(True)
    (grad,) = torch.autograd.grad(implication(x[:, 0], x[:, 1]).sum(), x)
    antecedent, consequent = grad[:, 0].abs().mean().item(), grad[:, 1].abs().mean().item()
    total = antecedent + consequent
    return consequent / total if total > 0 else math.nan


def family_table(samples: int, seed: int) -> pd.DataFrame:
    """One row per (family, p): the nonvanishing fractions and the consequent shares."""
    rows: list[dict[str, Any]] = []
    for family in FAMILIES:
        for p in PARAMETERS[family]:
            row: dict[str, Any] = {"family": family, "p": p}
            row["tnorm"] = fraction("tnorm", family, p, 2, samples, seed)
            row["s_implication"] = fraction("implication", f"{family}_s", p, 2, samples, seed)
            row["r_implication"] = fraction("implication", f"{family}_r", p, 2, samples, seed)
            row[f"forall_n{AGGREGATED}"] = fraction("forall", family, p, AGGREGATED, samples, seed)
            for regime, high in REGIMES.items():
                for which in ("s", "r"):
                    share = consequent_share(f"{family}_{which}", p, high, samples, seed)
                    row[f"cons_{which}_{regime}"] = share
            rows.append(row)
    return pd.DataFrame(rows)


COLUMNS = {
    "tnorm": "T (n=2)",
    "s_implication": "S-implication",
    "r_implication": "R-implication",
    f"forall_n{AGGREGATED}": f"A_T (n={AGGREGATED})",
}


def figure(table: pd.DataFrame, family: str, path: Path) -> Path:
    """Left: the nonvanishing fractions over p; right: the consequent shares over p."""
    rows = table[table["family"] == family]
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4.2), dpi=90)
    for column, label in COLUMNS.items():
        left.plot(rows["p"], rows[column], "o-", ms=3.5, label=label)
    for regime in REGIMES:
        for which, style in (("s", "-"), ("r", "--")):
            right.plot(rows["p"], rows[f"cons_{which}_{regime}"], "o" + style, ms=3.5,
                       label=f"{which.upper()}-implication, {regime}")  # fmt: skip
    right.axhline(0.5, color="gray", lw=0.8)
    positive = (rows["p"] > 0).all()
    for ax in (left, right):
        if positive:
            ax.set_xscale("log")
        ax.set_xlabel("p")
        ax.legend(fontsize=7)
    left.set_ylabel("fraction with nonvanishing derivative")
    right.set_ylabel("consequent share of |dI|")
    left.set_title(f"{family}: where the derivative does not vanish", fontsize=10)
    right.set_title(f"{family}: cons under uniform and corner truth values", fontsize=10)
    fig.tight_layout()
    with outputs.writer(path, outputs.PNG, "wb") as out:  # new, or a PNG
        fig.savefig(out, format="png")
    plt.close(fig)
    return path


def readme(table: pd.DataFrame, command: str, samples: int, seed: int) -> str:
    """The generated README: command, settings and the whole table."""
    body = [[_fmt(v) for v in row] for row in table.itertuples(index=False)]
    return "\n".join(
        [
            "# Gradient measures of the parametric t-norm families",
            "",
            f"Generated by `{command}` ({samples:,} samples per estimate, seed {seed}); the "
            "definitions are in `dfl_bench/theory/family_theory.py`. Fractions are Monte Carlo "
            "estimates over U(0,1)^n (binomial standard error at most "
            f"{0.5 / math.sqrt(samples):.4f}); `cons_s_*` / `cons_r_*` are the consequent "
            "shares of the S- and R-implication under uniform truth values and in the modus "
            "tollens corner U(0, 1/2)^2 (an S-implication's uniform share is exactly 1/2 by "
            "contraposition: a check; where the t-norm is near the drastic one, small p of Dombi "
            "and Aczel-Alsina, the gradient is heavy-tailed and the estimates are noisy). One "
            "figure per family: `families_<name>.png`.",
            "",
            *markdown.table(list(table.columns), body),
            "",
        ]
    )


def _fmt(value: object) -> str:
    if isinstance(value, float):
        return "undef." if math.isnan(value) else f"{value:.4g}"
    return str(value)


def write(out: Path, samples: int, seed: int, command: str) -> list[Path]:
    """families.csv, the figures and README.md under `out` (each new or this command's own:
    `OWN`, checked before anything is computed)."""
    outputs.folder(out, OWN)
    table = family_table(samples, seed)
    with outputs.writer(out / "families.csv", OWN["families.csv"]) as csv:
        table.to_csv(csv, index=False)
    files = [out / "families.csv"]
    files += [figure(table, family, out / f"families_{family}.png") for family in FAMILIES]
    outputs.write_text(out / "README.md", readme(table, command, samples, seed), OWN["README.md"])
    return [*files, out / "README.md"]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m dfl_bench.theory.family_theory", description=__doc__
    )
    parser.add_argument("--out", type=Path, default=Path("results/theory/families"))
    parser.add_argument("--samples", type=int, default=SAMPLES)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    if args.samples < 1:
        parser.error(f"--samples must be a positive integer, got {args.samples}")
    given = sys.argv[1:] if argv is None else argv
    command = shlex.join(["python", "-m", "dfl_bench.theory.family_theory", *given])
    try:
        files = write(args.out, args.samples, args.seed, command)
    except UntrustedFile as err:  # the --out refused, left as it was
        return outputs.refused("family_theory", err)
    print(f"wrote {len(files)} files to {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
