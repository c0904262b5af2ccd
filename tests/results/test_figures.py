"""Figures are redrawn only when what they show changes (their fingerprint, in the PNG)."""

from __future__ import annotations

import os
from pathlib import Path

import matplotlib.pyplot as plt

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
