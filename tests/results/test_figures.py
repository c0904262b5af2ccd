"""Figures are redrawn only when what they show changes (their fingerprint, in the PNG)."""

from __future__ import annotations

import os
from pathlib import Path

import matplotlib.pyplot as plt
import pytest

from dfl_bench.results import figures


def figure(ys, label="ours", sizes=18):
    fig, ax = plt.subplots()
    ax.plot([1, 2], ys, label=label)
    ax.scatter([1, 2], [3, 3], s=sizes)
    ax.legend()
    return fig


def test_a_figure_is_rewritten_only_when_what_it_shows_changes(tmp_path):
    path = tmp_path / "f.png"
    figures._save(figure([3, 4]), path)
    first = figures._stored(path)
    assert first and first.startswith(figures.FINGERPRINT)
    os.utime(path, (1, 1))
    figures._save(figure([3, 4]), path)
    assert path.stat().st_mtime == 1  # the same picture: kept
    figures._save(figure([3, 5]), path)
    assert path.stat().st_mtime > 1 and figures._stored(path) != first


def test_the_fingerprint_sees_data_labels_and_marker_sizes():
    shown = [figure([3, 4]), figure([3, 4.001]), figure([3, 4], "paper"), figure([3, 4], sizes=5)]
    prints = {figures.fingerprint(fig) for fig in shown}
    plt.close("all")
    assert len(prints) == 4
    assert figures._stored(Path(__file__)) is None  # not a PNG


def test_paper_vs_ours_shows_seed_intervals_collapsed_runs_and_names_the_cells_off_the_line(
    tmp_path, monkeypatch
):
    from dfl_bench.results.cells import build_table, collapse_threshold
    from dfl_bench.results.load import load_records
    from dfl_bench.results.paper import load_paper
    from tests.results.test_results import REPO, write

    for seed in range(3):
        write(tmp_path, "baseline", "b", row="ce_pair", seed=seed, accuracy=0.95)
        # godel: the paper's 20.4, ours the same; product: the paper's 20.3, ours 97 with a collapse
        write(tmp_path, "tnorms", "g", row="godel", seed=seed, accuracy=0.204 + seed / 1000)
        product = (0.97 + seed / 1000, 0.21, 0.972)[seed]
        cu_ant = (0.99, 0.5, 0.90)[seed]  # kept: 0.99 and 0.90, a 95% t-interval beyond 1
        write(tmp_path, "tnorms", "p", row="product", seed=seed, accuracy=product, cu_ant=cu_ant)
    frame = load_records(tmp_path)
    below = collapse_threshold(frame, "quick")
    table = build_table(load_paper().tables["tnorms"], frame, "quick", REPO, below)
    drawn = []
    monkeypatch.setattr(figures, "_save", lambda fig, path: drawn.append(fig) or path)
    figures.scatter_figure(table, tmp_path / "f.png", paper_sigma=0.204)
    accuracy = drawn[0].axes[0]
    assert [t.get_text() for t in accuracy.texts] == ["product"]  # godel lies on the line
    crosses = [
        offset[1]
        for c in accuracy.collections
        if type(c).__name__ == "PathCollection"
        for offset in c.get_offsets()
    ]
    # godel's three runs collapsed (as the paper's did) and product's one, apart from its mean
    assert sorted(crosses) == pytest.approx([20.4, 20.5, 20.6, 21.0])
    bars = [c for c in accuracy.collections if type(c).__name__ == "LineCollection"]
    assert bars  # error bars: ours over seeds, the paper's from its stated std
    ratio_bars = [c for c in drawn[0].axes[3].collections if type(c).__name__ == "LineCollection"]
    tops = [y for c in ratio_bars for segment in c.get_segments() for _, y in segment]
    assert max(tops) == pytest.approx(1.0)  # cut at the ratio's range, not 0.945 + 0.57
    plt.close("all")
