"""Figures: the sigmoidal sweeps (App. fig. mnist_s_experiments), the analytical measures
(fig. analyze_measures, Section 10.3) and a paper-vs-ours scatter per table (matplotlib, Agg)."""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Container, Mapping
from functools import partial
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from PIL import Image  # noqa: E402
from scipy.stats import t as t_dist  # noqa: E402

from dfl_bench import outputs  # noqa: E402
from dfl_bench.results import stats  # noqa: E402
from dfl_bench.results.agreement import pearson  # noqa: E402
from dfl_bench.results.cells import Table  # noqa: E402
from dfl_bench.results.paper import COLUMN_FIELDS, COLUMNS, main_tables  # noqa: E402
from dfl_bench.schema import CU_ANT, CU_CONS

LABELS = {"accuracy": "test accuracy (%)", "cons": "cons", CU_CONS: CU_CONS, CU_ANT: CU_ANT}
RANGES = {"accuracy": (0.0, 100.0), "cons": (0.0, 1.0), CU_CONS: (0.0, 1.0), CU_ANT: (0.0, 1.0)}
KB_COLOURS = {"same": "tab:blue", "sum9": "tab:red"}
POINT = {"fmt": "o", "ms": 4, "color": "tab:blue", "ecolor": "tab:blue", "elinewidth": 0.8,
         "capsize": 2}  # fmt: skip


def sweep_figure(table: Table, parameter: str, path: Path) -> Path:
    """Four panels (accuracy, cons, cu_cons, cu_ant) against the swept value: ours ± std, paper."""
    fig, axes = plt.subplots(1, 4, figsize=(16, 3.6))
    xs, ours = [], []
    for key, mine in table.ours().items():
        if mine.n_ok:
            xs.append(float(key))
            ours.append(mine)
    order = sorted(range(len(xs)), key=xs.__getitem__)
    for ax, column in zip(axes, COLUMNS, strict=True):
        points = [(xs[i], ours[i].mean[column], ours[i].std[column] or 0.0) for i in order]
        points = [p for p in points if p[1] is not None]
        if points:
            x, y, sd = zip(*points, strict=True)
            bars = np.hstack([_within(m, d, column) for m, d in zip(y, sd, strict=True)])
            label = f"ours ({table.profile}; mean ± sd over seeds)"
            ax.errorbar(x, y, yerr=bars, marker="o", capsize=3, label=label)
        cells = [c for c in table.paper.cells() if c.key is not None]
        printed = [(float(c.key), c.number(column)) for c in cells if c.number(column) is not None]
        if printed:
            ax.plot(*zip(*printed, strict=True), "k*", markersize=12, label="paper (text)")
        ax.set(xlabel=parameter, ylabel=LABELS[column])
        ax.grid(alpha=0.3)
        if points or printed:
            ax.legend(fontsize=8)
        else:
            ax.text(0.5, 0.5, "no runs yet", ha="center", transform=ax.transAxes)
    fig.suptitle(f"Reichenbach-sigmoidal implication: {parameter} sweep ({table.paper.where})")
    return write_png(fig, path)


def measures_figure(frame: pd.DataFrame, profile: str, path: Path) -> Path:
    """Fig. analyze_measures: accuracy vs cu_cons and cu_ant, cons vs both; same and sum9 runs."""
    runs = frame[
        (frame["profile"] == profile)
        & (frame["status"] == "ok")
        & frame["experiment"].isin(main_tables())
    ]
    panels = [(CU_CONS, "accuracy"), (CU_ANT, "accuracy"), ("cons", CU_CONS), ("cons", CU_ANT)]
    fig, axes = plt.subplots(2, 2, figsize=(10, 8))
    for ax, (x, y) in zip(axes.flat, panels, strict=True):
        for kb, colour in KB_COLOURS.items():
            sub = runs[runs["kb"] == kb]
            xs, ys = _column(sub, x), _column(sub, y)
            keep = xs.notna() & ys.notna()
            r = pearson(xs[keep].tolist(), ys[keep].tolist())
            text = "r n/a" if r is None else f"r = {r:+.2f}"
            ax.scatter(
                xs[keep], ys[keep], s=14, color=colour, label=f"{kb} ({text}, n={keep.sum()})"
            )
        ax.set(xlabel=LABELS[x], ylabel=LABELS[y])
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
    fig.suptitle(f"Analytical measures of every run of the main-text tables (profile {profile})")
    return write_png(fig, path)


def scatter_figure(table: Table, path: Path, paper_sigma: float | None = None) -> Path:
    """Paper vs ours per column, one point per config row with the identity line: our mean with
    its 95% seed interval as an error bar (over the runs that did not collapse, where a cell
    mixes them: stats.kept_runs) (the paper's accuracy with its own, from its stated
    seed std `paper_sigma`), each collapsed run as a red cross, and the rows that lie off the
    diagonal beyond their intervals named."""
    fig, axes = plt.subplots(1, 4, figsize=(16, 3.8))
    for ax, column in zip(axes, COLUMNS, strict=True):
        points = [
            (paper.number(column), ours, key)
            for key, (paper, ours) in table.pairs().items()
            if ours is not None and ours.number(column) is not None
        ]
        points = [p for p in points if p[0] is not None]
        if not points:
            ax.text(0.5, 0.5, "no comparable cells", ha="center", transform=ax.transAxes)
        for x, ours, key in points:
            kept = stats.kept_runs(ours.values.get(column, ()), ours.collapsed.get(column, ()))
            y, half = float(np.mean(kept)), _half(kept)
            across = 1.96 * paper_sigma if paper_sigma and column == "accuracy" else 0.0
            ax.errorbar(x, y, yerr=_within(y, half, column), xerr=across or None, **POINT)
            runs = zip(ours.values.get(column, ()), ours.collapsed.get(column, ()), strict=False)
            fell = [v for v, c in runs if c]
            if fell:
                ax.scatter([x] * len(fell), fell, marker="x", color="tab:red", s=22)
            if abs(y - x) > half + across + 1e-9:
                ax.annotate(key, (x, y), fontsize=6, xytext=(3, 3), textcoords="offset points")
        if points:
            values = [v for x, o, _ in points for v in (x, *o.values.get(column, ()))]
            low, high = min(values), max(values)
            ax.plot([low, high], [low, high], "k--", linewidth=0.8, label="ours = paper")
            ax.scatter([], [], marker="x", color="tab:red", s=22, label="a collapsed run")
            ax.legend(fontsize=7)
        ax.set(xlabel=f"paper: {LABELS[column]}",
               ylabel=f"ours: {LABELS[column]} (mean, 95% seed interval)")  # fmt: skip
        ax.grid(alpha=0.3)
    fig.suptitle(
        f"{table.paper.experiment}: paper vs ours (profile {table.profile}); named: off the "
        "diagonal beyond the intervals"
    )
    return write_png(fig, path)


def with_runs(tables: Mapping[str, Table]) -> dict[str, Table]:
    """The tables with runs at their profile (a cell of ours)."""
    return {n: t for n, t in tables.items() if any(o is not None for _, o in t.pairs().values())}


def comparable(table: Table) -> bool:
    """Whether a cell of `table` has a number of the paper's and one of ours in a column."""
    pairs = table.pairs().values()
    return any(o and p.number(c) is not None and o.number(c) is not None
               for p, o in pairs for c in COLUMNS)  # fmt: skip


def _half(values) -> float:
    """Half the 95% interval of a mean over seeds (Student's t); 0 below two seeds."""
    n = len(values)
    if n < 2:
        return 0.0
    return float(t_dist.ppf(0.975, n - 1) * np.std(values, ddof=1) / np.sqrt(n))


def _within(y: float, half: float, column: str) -> np.ndarray:
    """The (below, above) error bar of y ± half cut at the column's range (a ratio's interval
    never leaves [0, 1], accuracy's [0, 100]), shaped (2, 1) for matplotlib's yerr."""
    low, high = RANGES[column]
    return np.array([[min(half, max(y - low, 0.0))], [min(half, max(high - y, 0.0))]])


def _column(frame: pd.DataFrame, column: str) -> pd.Series:
    """A record column in the paper's units (accuracy in %)."""
    values = pd.to_numeric(frame[COLUMN_FIELDS[column]], errors="coerce")
    return values * 100 if column == "accuracy" else values


def write_png(fig: plt.Figure, path: Path) -> Path:
    """Write a PNG and close the figure; a PNG drawn from what this one shows (its fingerprint,
    kept in the file's metadata) is left as it is, so re-rendering draws only what changed."""
    digest = FINGERPRINT + fingerprint(fig)
    if not path.is_file() or _stored(path) != digest:
        path.parent.mkdir(parents=True, exist_ok=True)
        fig.tight_layout()
        with outputs.writer(path, outputs.PNG, "wb") as out:
            fig.savefig(out, format="png", dpi=DPI, metadata={"Description": digest})
    plt.close(fig)
    return path


DPI = 110
FINGERPRINT = "dfl_bench figure "  # the PNG Description's prefix


def fingerprint(fig: plt.Figure) -> str:
    """A hash of what a figure shows: its size, title and per axes the labels, every line's
    and collection's data and style, the texts and the legend (and matplotlib's version)."""
    digest = hashlib.sha256()

    def add(*parts: object) -> None:
        for part in parts:
            digest.update(part if isinstance(part, bytes) else repr(part).encode())

    add(matplotlib.__version__, DPI, tuple(fig.get_size_inches()), fig.get_suptitle())
    for ax in fig.axes:
        add(ax.get_title(), ax.get_xlabel(), ax.get_ylabel())
        for line in ax.lines:
            add(line.get_xydata().tobytes(), line.get_linestyle(), line.get_marker())
            add(str(line.get_color()), line.get_markersize(), line.get_linewidth())
        for collection in ax.collections:
            add(type(collection).__name__, np.asarray(collection.get_offsets()).tobytes())
            add(*(path.vertices.tobytes() for path in collection.get_paths()))
            add(np.asarray(getattr(collection, "get_sizes", list)()).tobytes())
            add(np.asarray(collection.get_facecolor()).tobytes())
        add(*((text.get_text(), text.get_position()) for text in ax.texts))
        legend = ax.get_legend()
        add(*(text.get_text() for text in legend.get_texts()) if legend else ())
    return digest.hexdigest()[:16]


def stale(folder: Path, drawn: Container[Path]) -> list[Path]:
    """The figures of ours in `folder` (our fingerprint in the PNG; no link) not in `drawn`."""
    return [p for p in sorted(folder.glob("*.png")) if p not in drawn and not p.is_symlink()
            and (_stored(p) or "").startswith(FINGERPRINT)]  # fmt: skip


def _stored(path: Path) -> str | None:
    """The fingerprint a PNG was written with (None for another file)."""
    try:
        with Image.open(path) as image:
            return getattr(image, "text", {}).get("Description")
    except OSError:
        return None


def all_figures(
    tables: Mapping[str, Table],
    frame: pd.DataFrame,
    profile: str,
    out: Path,
    paper_sigma: float | None = None,
) -> dict[Path, Callable[[Path], Path]]:
    """Every figure of one profile under `out` (figures/<name>_<profile>.png) of the tables
    that have runs at that profile (its paper-vs-ours scatter where `comparable`), each with
    what draws it there; `paper_sigma` the paper's stated seed std (its accuracies' errors)."""
    tables = with_runs(tables)
    scatter = partial(scatter_figure, paper_sigma=paper_sigma)
    drawn = {
        out / f"{n}_paper_vs_ours_{profile}.png": partial(scatter, t)
        for n, t in tables.items()
        if comparable(t)
    }
    for name, parameter in (("sigmoidal_s", "s"), ("sigmoidal_b0", "b0")):
        if name in tables:
            drawn[out / f"{name}_{profile}.png"] = partial(sweep_figure, tables[name], parameter)
    if set(main_tables()) & set(tables):
        drawn[out / f"analyze_measures_{profile}.png"] = partial(measures_figure, frame, profile)
    return drawn
