"""The benchmark's figure: scaling.png (cost vs batch size, log-log)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from dfl_bench import outputs  # noqa: E402


def plot(result: dict[str, Any], path: Path) -> None:
    """Log-log plot of the scaling section with b^1 and b^2 reference slopes."""
    rows = result["scaling"]["rows"]
    fig, ax = plt.subplots(figsize=(6, 4.5))
    for part in ("iteration", "cnn", "logic"):
        pts = [r for r in rows if r["part"] == part]
        b = [r["b"] for r in pts]
        med = [r["median_ms"] for r in pts]
        err = [
            [r["median_ms"] - r["q1_ms"] for r in pts],
            [r["q3_ms"] - r["median_ms"] for r in pts],
        ]
        k = result["scaling"]["slopes"][part].get(
            "largest_3", result["scaling"]["slopes"][part]["all"]
        )
        ax.errorbar(b, med, yerr=err, marker="o", capsize=3, label=f"{part} (k={k:.2f})")
    ref = [r for r in rows if r["part"] == "logic"]
    b0, t0 = ref[-1]["b"], ref[-1]["median_ms"]
    bs = sorted({r["b"] for r in rows})
    ax.plot(bs, [t0 * (x / b0) ** 2 for x in bs], "k--", lw=0.8, label="~ b^2")
    ax.plot(bs, [t0 * (x / b0) for x in bs], "k:", lw=0.8, label="~ b")
    ax.set(
        xscale="log",
        yscale="log",
        xlabel="batch size b (labeled = unlabeled)",
        ylabel="median ms",
        title="Iteration cost vs batch size (same)",
    )
    ax.legend(fontsize=8)
    fig.tight_layout()
    with outputs.writer(path, outputs.PNG, "wb") as out:
        fig.savefig(out, format=Path(path).suffix.lstrip(".") or "png", dpi=120)
    plt.close(fig)
