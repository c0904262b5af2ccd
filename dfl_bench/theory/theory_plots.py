"""Figures of the measured tables: Fig. ratio_2_yager and the gradient-ascent success rates."""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from matplotlib.ticker import MaxNLocator  # noqa: E402

from dfl_bench.theory import closed_forms  # noqa: E402
from dfl_bench.theory.surfaces import save_png  # noqa: E402


def _measured(ax: plt.Axes, rows: pd.DataFrame, x: str, color: str, label: str) -> None:
    """MC estimates with +-2 stderr bars; zero estimates cannot be drawn on a log axis."""
    shown = rows[rows["measured"] > 0]
    ax.errorbar(
        shown[x],
        shown["measured"],
        yerr=2 * shown["stderr"],
        fmt="o:",
        color=color,
        ms=3.5,
        capsize=2,
        label=label,
    )


def ratio_figure(fractions: pd.DataFrame, path: Path) -> Path:
    """Fig. ratio_2_yager: nonvanishing fraction vs n (Yager, nilpotent, Lukasiewicz) and vs p."""
    fig, (left, right) = plt.subplots(1, 2, figsize=(12, 4.8), dpi=90)
    colors = iter(plt.cm.tab10.colors)
    forall = fractions[fractions["operator"].str.startswith("forall:")]
    for (operator, p), rows in forall.groupby(["operator", "p"], dropna=False, sort=False):
        color = next(colors)
        name = operator.split(":")[1] + ("" if pd.isna(p) else f" p={p:g}")
        _measured(left, rows, "n", color, f"{name} (MC)")
        left.plot(rows["n"], rows["exact"], "-", color=color, lw=1, alpha=0.7)
        if p == 2:
            left.plot(
                rows["n"],
                rows["paper"],
                "--",
                color="gray",
                lw=1.2,
                label="Prop. vol_yager as printed",
            )
    left.set_yscale("log")
    left.xaxis.set_major_locator(MaxNLocator(integer=True))
    left.set_xlabel("n (number of aggregated inputs)")
    left.set_ylabel("fraction with nonvanishing derivative")
    left.set_title("Universal aggregators (lines: closed forms, points: Monte Carlo)", fontsize=10)
    left.legend(fontsize=7, ncol=2)

    ps = np.linspace(0.2, 10.0, 200)
    right.plot(
        ps,
        [closed_forms.yager_tnorm_paper(p) for p in ps],
        "-",
        color="k",
        lw=1,
        label="paper closed form",
    )
    binary = fractions[
        fractions["n"].eq(2) & ~fractions["operator"].str.startswith(("forall", "exists"))
    ]
    for operator, rows in binary.groupby("operator", sort=False):
        _measured(right, rows, "p", next(colors), f"{operator} (MC)")
    right.set_xlabel("p")
    right.set_ylabel("fraction with nonvanishing derivative")
    right.set_title("Yager t-norm, t-conorm and S-implication (n = 2)", fontsize=10)
    right.legend(fontsize=8)
    fig.tight_layout()
    save_png(fig, path)
    return path


def ascent_figure(ascent: pd.DataFrame, path: Path) -> Path:
    """Success rate of gradient ascent per formula, operators and protocol, beside the paper."""
    labels = [
        f"{r.formula} {r.tnorm}{'' if pd.isna(r.p) else f' p={r.p:g}'}\n"
        f"{r.parametrization} lr={r.lr:g}"
        for r in ascent.itertuples()
    ]
    y = np.arange(len(ascent))
    fig, ax = plt.subplots(figsize=(8, 0.32 * len(ascent) + 1.2), dpi=90)
    ax.barh(
        y,
        ascent["measured"],
        xerr=2 * ascent["stderr"],
        color="tab:blue",
        alpha=0.7,
        label="measured (+-2 stderr)",
    )
    paper = ascent["paper"].notna()
    ax.plot(ascent.loc[paper, "paper"], y[paper.to_numpy()], "r*", ms=10, label="paper")
    ax.set_yticks(y, labels, fontsize=6)
    ax.invert_yaxis()
    ax.set_xlim(0, 1.02)
    ax.set_xlabel("fraction of initializations reaching a global optimum")
    ax.legend(fontsize=8, loc="lower left")
    fig.tight_layout()
    save_png(fig, path)
    return path
