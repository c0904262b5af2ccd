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
    figures.write_png(figure([3, 4]), path)
    first = figures._stored(path)
    assert first and first.startswith(figures.FINGERPRINT)
    os.utime(path, (1, 1))
    figures.write_png(figure([3, 4]), path)
    assert path.stat().st_mtime == 1  # the same picture: kept
    figures.write_png(figure([3, 5]), path)
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
    monkeypatch.setattr(figures, "write_png", lambda fig, path: drawn.append(fig) or path)
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


def test_a_table_without_the_papers_numbers_draws_no_paper_vs_ours_scatter(tmp_path, monkeypatch):
    from dfl_bench.results import paper
    from dfl_bench.results.cells import build_table, collapse_threshold
    from dfl_bench.results.load import load_records
    from tests.results.test_results import REPO, write

    for seed in range(3):
        write(tmp_path, "baseline", "b", row="ce_pair", seed=seed, accuracy=0.95)
        write(tmp_path, "tnorms", "p", row="product", seed=seed, accuracy=0.97)
    frame = load_records(tmp_path)
    below = collapse_threshold(frame, "quick")
    table = build_table(paper.load_paper().tables["tnorms"], frame, "quick", REPO, below)
    scatter = tmp_path / "tnorms_paper_vs_ours_quick.png"
    assert scatter in figures.all_figures({"tnorms": table}, frame, "quick", tmp_path)
    monkeypatch.setattr(paper.PaperCell, "number", lambda cell, column: None)  # none printed
    assert not figures.comparable(table)  # an empty scatter says nothing: not drawn
    assert scatter not in figures.all_figures({"tnorms": table}, frame, "quick", tmp_path)


def test_a_full_rendering_removes_the_figures_of_ours_it_no_longer_draws(tmp_path):
    from dfl_bench.results.__main__ import main
    from tests.results.test_results import write

    records, out = tmp_path / "records", tmp_path / "out"
    write(records, "tnorms", "", row="godel")
    assert main([f"--records={records}", f"--out={out}"]) == 0
    drawn = out / "figures" / "tnorms_paper_vs_ours_quick.png"
    gone, foreign = out / "figures" / "tnorms_paper_vs_ours_long.png", out / "figures" / "x.png"
    figures.write_png(figure([3, 4]), gone)  # ours, of a profile with no runs now
    figure([3, 4]).savefig(foreign, format="png")  # another tool's figure: no fingerprint
    assert main([f"--records={records}", f"--out={out}", "--tables=tnorms"]) == 0
    assert gone.is_file()  # a rendering of some tables leaves the others' figures
    assert main([f"--records={records}", f"--out={out}"]) == 0
    assert drawn.is_file() and foreign.is_file() and not gone.exists()
