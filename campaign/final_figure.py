"""The final rows of MNIST addition as a picture (results/final_nets/seeds.png, beside the page
campaign/final_nets.py writes): per row, each seed's final test accuracy of the sum (a collapsed
run, or a diverged one at 0, as a red cross), the mean over every seed, the row's target and the
published numbers of its digit count. It shows what the page decides; it decides nothing."""

from __future__ import annotations

import statistics
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from campaign import final_nets  # noqa: E402
from campaign.rule_runs import declared  # noqa: E402
from dfl_bench.results import figures  # noqa: E402

SPREAD = 0.25  # how far apart a row's seeds are drawn (x)
GAP = 3.0  # how far apart (points of accuracy) the published numbers' labels are drawn


def apart(values: list[float], gap: float = GAP) -> list[float]:
    """Heights for labels of `values` (descending) at least `gap` apart, none above its value.

    >>> apart([94.0, 93.5, 93.4, 80.0])
    [94.0, 91.0, 88.0, 80.0]
    """
    out: list[float] = []
    for v in values:
        out.append(v if not out else min(v, out[-1] - gap))
    return out


def draw(frame: Any, path: Path) -> Path:
    """The picture of every declared row's counted runs (final_nets.finals) at `path`, redrawn
    only when what it shows changed (figures.write_png)."""
    spec = declared(final_nets.EXPERIMENT)
    below = spec["rule"]["collapse_below"]
    rows = final_nets.finals(frame, spec)
    fig, ax = plt.subplots(figsize=(max(7.0, 1.9 * len(rows)), 5.0))
    for x, r in enumerate(rows):
        xs = [x - SPREAD / 2 + SPREAD * i / max(len(r.values) - 1, 1) for i in range(len(r.values))]
        fell = r.fell(below)
        learned = [(a, v) for a, v, f in zip(xs, r.values, fell, strict=True) if not f]
        collapsed = [(a, v) for a, v, f in zip(xs, r.values, fell, strict=True) if f]
        if learned:
            ax.scatter(*zip(*learned, strict=True), s=18, color="tab:blue", zorder=3)
        if collapsed:
            ax.scatter(*zip(*collapsed, strict=True), s=30, marker="x", color="tab:red", zorder=3)
        if r.values:
            ax.hlines(statistics.fmean(r.values), x - 0.3, x + 0.3, color="black", linewidth=1.2)
        target = r.spec.get("target")
        if target is not None:
            ax.hlines(target, x - 0.35, x + 0.35, color="tab:green", linestyles="dashed")
            named = sorted(final_nets.published(r.spec["digits"]), key=lambda p: -p.accuracy)
            for p, y in zip(named, apart([p.accuracy for p in named]), strict=True):
                ax.scatter([x + 0.4], [p.accuracy], marker="*", s=40, color="0.4", zorder=3)
                ax.annotate(f"{p.system} {p.accuracy:g}", (x + 0.4, p.accuracy), (x + 0.5, y),
                            fontsize=6, va="center", arrowprops={"arrowstyle": "-", "lw": 0.4,
                                                                 "color": "0.5"})  # fmt: skip
    ax.set_xlim(-0.6, len(rows) - 0.4 + 0.6)
    ax.set_xticks(range(len(rows)))
    ax.set_xticklabels(
        [f"{r.row}\n{r.net}, {r.spec['digits']} digits\n{len(r.values)} of {r.seeds} seeds"
         for r in rows], fontsize=7)  # fmt: skip
    ax.set_ylim(-3, 103)
    ax.set_ylabel("final test accuracy of the sum (%)")
    ax.grid(alpha=0.3, axis="y")
    fallen = f"a collapsed seed (per digit below {below:g})"
    proxies = [
        ax.scatter([], [], s=18, color="tab:blue", label="a seed"),
        ax.scatter([], [], s=30, marker="x", color="tab:red", label=fallen),
        ax.plot([], [], color="black", label="mean over every seed")[0],
        ax.plot([], [], color="tab:green", linestyle="dashed", label="the row's target")[0],
        ax.scatter([], [], marker="*", s=40, color="0.4", label="a published number"),
    ]
    ax.legend(handles=proxies, fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    ax.set_title("The final rows of MNIST addition: every seed on the test set", fontsize=10)
    return figures.write_png(fig, path)
