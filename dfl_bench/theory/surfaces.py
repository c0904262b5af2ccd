"""Surfaces of binary operators and of their partial derivatives (figures of Sections 7 and 8).

Every value is computed from `dfl_bench.operators.build` and every derivative by autograd on a
grid of cell midpoints of [0, 1]^2 (so singular borders such as a = 0 for Goguen are avoided).
For an implication I(a, c), dMP = dI/dc (consequent) and dMT = -dI/da (negated antecedent).
"""

from __future__ import annotations

import io
import math
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import torch  # noqa: E402
from PIL import Image  # noqa: E402
from torch import Tensor  # noqa: E402

from dfl_bench import outputs  # noqa: E402
from dfl_bench.operators import build  # noqa: E402

Binary = Callable[[Tensor, Tensor], Tensor]
RMSE_OTHER_TRUTH = 1 - math.sqrt(0.9)


@dataclass(frozen=True)
class Panel:
    """One surface z = values(a, c) with its title and axis names; `log` plots log10(z)."""

    title: str
    values: Callable[[Tensor, Tensor], Tensor]
    xlabel: str = "a"
    ylabel: str = "c"
    log: bool = False
    cap: float | None = None


def grid(resolution: int) -> tuple[Tensor, Tensor]:
    """Midpoints of a resolution x resolution grid on [0, 1]^2 as (a, c) with a along columns."""
    points = (torch.arange(resolution, dtype=torch.float64) + 0.5) / resolution
    c, a = torch.meshgrid(points, points, indexing="ij")
    return a, c


def partial(op: Binary, wrt: int) -> Callable[[Tensor, Tensor], Tensor]:
    """The autograd partial derivative of op(a, c) in argument `wrt` (0 for a, 1 for c)."""

    def derivative(a: Tensor, c: Tensor) -> Tensor:
        args = [a.detach().requires_grad_(True), c.detach().requires_grad_(True)]
        (grad,) = torch.autograd.grad(op(*args).sum(), args[wrt])
        return grad

    return derivative


def dmp(op: Binary) -> Callable[[Tensor, Tensor], Tensor]:
    """Consequent derivative dI(a, c)/dc (Section 8.2)."""
    return partial(op, 1)


def dmt(op: Binary) -> Callable[[Tensor, Tensor], Tensor]:
    """Negated-antecedent derivative -dI(a, c)/da (Section 8.2)."""
    da = partial(op, 0)
    return lambda a, c: -da(a, c)


def under_forall(op: Binary, aggregator: str, other: float | None = None) -> Binary:
    """A(I(a, c)), or A(other, I(a, c)) for n = 2 (Fig. reichenbach-aggregators)."""
    A = build("forall", aggregator)

    def composed(a: Tensor, c: Tensor) -> Tensor:
        value = op(a, c).unsqueeze(-1)
        if other is not None:
            value = torch.cat([torch.full_like(value, other), value], dim=-1)
        return A(value, dim=-1)

    return composed


def norm_panels() -> list[Panel]:
    """Figs. yager2_norm, prod_norm and yager2_deriv: T and S (Yager p=2, product), dT/da, dS/da."""
    TY, SY = build("tnorm", "yager", p=2.0), build("tconorm", "yager", p=2.0)
    TP, SP = build("tnorm", "product"), build("tconorm", "product")
    return [
        Panel("Yager t-norm T_Y (p=2)", TY, ylabel="b"),
        Panel("Yager t-conorm S_Y (p=2)", SY, ylabel="b"),
        Panel("Product t-norm T_P", TP, ylabel="b"),
        Panel("Product t-conorm S_P", SP, ylabel="b"),
        Panel("dT_Y/da (p=2)", partial(TY, 0), ylabel="b"),
        Panel("dS_Y/da (p=2)", partial(SY, 0), ylabel="b"),
    ]


IMPLICATIONS: list[tuple[str, str, dict]] = [
    ("Kleene-Dienes I_KD", "kleene_dienes", {}),
    ("Goedel I_G", "godel", {}),
    ("Yager S-impl. I_Y (p=2)", "yager_s", {"p": 2.0}),
    ("Yager R-impl. I_TY (p=2)", "yager_r", {"p": 2.0}),
    ("Reichenbach I_RC", "reichenbach", {}),
    ("Goguen I_GG", "goguen", {}),
]


def implication_panels() -> list[Panel]:
    """Figs. kd_godel, yager-r-s-impl and goguen-i: the implications themselves."""
    return [Panel(title, build("implication", name, **p)) for title, name, p in IMPLICATIONS]


def implication_derivative_panels(cap: float) -> list[Panel]:
    """Figs. deriv_yager_sI2, yager-r-deriv, deriv_goguen and Eq. god_imp_deriv: dMP and dMT."""
    panels = []
    for title, name, params in IMPLICATIONS:
        op = build("implication", name, **params)
        short = title.split(" I_")[0]
        panels.append(Panel(f"{short}: dMP = dI/dc", dmp(op), cap=cap))
        panels.append(Panel(f"{short}: dMT = -dI/da", dmt(op), cap=cap))
    return panels


SIGMOIDAL_VARIANTS = [(9.0, -0.5), (9.0, -0.2), (0.01, -0.5), (20.0, -0.5)]


def sigmoidal(s: float, b0: float) -> Binary:
    """The Reichenbach-sigmoidal implication (Definition sigmoidal)."""
    return build("implication", "sigmoidal", base="reichenbach", s=s, b0=b0)


def sigmoidal_panels() -> list[Panel]:
    """Figs. probsum_sigm_s (four s, b0 variants) and deriv_rcsigm (s=9 derivatives)."""
    panels = [
        Panel(f"Reichenbach-sigmoidal s={s:g}, b0={b0:g}", sigmoidal(s, b0))
        for s, b0 in SIGMOIDAL_VARIANTS
    ]
    op = sigmoidal(9.0, -0.5)
    return panels + [
        Panel("R.-sigmoidal s=9: dMP = dI/dc", dmp(op)),
        Panel("R.-sigmoidal s=9: dMT = -dI/da", dmt(op)),
    ]


def log_derivative_panels() -> list[Panel]:
    """Figs. log_dmp, reichenbach-aggregators and deriv_goguen: derivatives through aggregators."""
    rc, gg = build("implication", "reichenbach"), build("implication", "goguen")
    return [
        Panel("log-Reichenbach: dMP (log10)", dmp(under_forall(rc, "log_product")), log=True),
        Panel(
            "log-R.-sigmoidal s=9: dMP (log10)",
            dmp(under_forall(sigmoidal(9.0, -0.5), "log_product")),
            log=True,
        ),
        Panel("Reichenbach, log-product: dMT", dmt(under_forall(rc, "log_product"))),
        Panel(
            "Reichenbach, RMSE (n=2): dMT",
            dmt(under_forall(rc, "rmse", other=RMSE_OTHER_TRUTH)),
        ),
        Panel("Goguen: dMP (log10)", dmp(gg), log=True),
        Panel("Goguen: dMT (log10)", dmt(gg), log=True),
    ]


def surface_values(panel: Panel, resolution: int) -> tuple[Tensor, Tensor, Tensor]:
    """(a, c, z) on the grid; log panels show log10 z with z = 0 masked, capped panels clip z."""
    a, c = grid(resolution)
    z = panel.values(a, c).detach().to(torch.float64)
    if panel.log:
        z = torch.where(z > 0, z.clamp(min=1e-300).log10(), torch.full_like(z, math.nan))
    if panel.cap is not None:
        z = z.clamp(max=panel.cap)
    return a, c, z


def front_azimuth(a: Tensor, c: Tensor, z: Tensor) -> float:
    """View azimuth that puts the smallest value in front, as the paper rotates its plots."""
    index = int(torch.nan_to_num(z, nan=math.inf).argmin())
    return math.degrees(
        math.atan2(float(c.flatten()[index]) - 0.5, float(a.flatten()[index]) - 0.5)
    )


def draw(panels: list[Panel], path: Path, ncols: int = 3, resolution: int = 41) -> Path:
    """Draw the panels as 3D surfaces into one PNG."""
    nrows = math.ceil(len(panels) / ncols)
    fig = plt.figure(figsize=(4.2 * ncols, 3.6 * nrows), dpi=80)
    for i, panel in enumerate(panels):
        ax = fig.add_subplot(nrows, ncols, i + 1, projection="3d")
        a, c, z = surface_values(panel, resolution)
        ax.plot_surface(
            a.numpy(), c.numpy(), z.numpy(), cmap="viridis", linewidth=0, rstride=1, cstride=1
        )
        ax.view_init(elev=25, azim=front_azimuth(a, c, z))
        suffix = (
            f" (clipped at {panel.cap:g})" if panel.cap is not None and z.max() >= panel.cap else ""
        )
        ax.set_title(panel.title + suffix, fontsize=9)
        ax.set_xlabel(panel.xlabel)
        ax.set_ylabel(panel.ylabel)
        ax.tick_params(labelsize=7)
    fig.subplots_adjust(left=0.0, right=0.97, bottom=0.03, top=0.95, wspace=0.05, hspace=0.15)
    save_png(fig, path)
    return path


def save_png(fig: plt.Figure, path: Path) -> None:
    """Save a figure as a 256-colour PNG (keeps the committed images small)."""
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png")
    plt.close(fig)
    buffer.seek(0)
    path.parent.mkdir(parents=True, exist_ok=True)
    with outputs.writer(path, outputs.PNG, "wb") as out:  # new, or a PNG
        Image.open(buffer).convert("RGB").quantize(colors=256).save(out, "PNG", optimize=True)


def draw_all(out: Path, resolution: int) -> list[Path]:
    """All surface figures of Sections 7 and 8 under `out`."""
    figures = {
        "surfaces_norms.png": (norm_panels(), 3),
        "surfaces_implications.png": (implication_panels(), 3),
        "surfaces_implication_derivatives.png": (implication_derivative_panels(cap=5.0), 4),
        "surfaces_sigmoidal.png": (sigmoidal_panels(), 3),
        "surfaces_log_derivatives.png": (log_derivative_panels(), 3),
    }
    return [
        draw(panels, out / name, ncols, resolution) for name, (panels, ncols) in figures.items()
    ]
