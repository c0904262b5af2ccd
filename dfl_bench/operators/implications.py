"""Fuzzy implications I(a, c): S-implications (Table "simplications"), R-implications (Table
"rimplications"), the Yager S/R-implications and the sigmoidal implications (Section 8).

Singular points (Goguen as a -> 0, Yager R as a -> c) follow `dfl_bench.operators.numerics`.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable

import torch
import torch.nn.functional as F
from torch import Tensor

from dfl_bench.operators.numerics import floor_, pnorm2_eps, pow_, root_eps
from dfl_bench.operators.registry import ROOT_EPS, Param, build, choices, register, spec


@register("implication", "kleene_dienes", s_of="godel")
def kleene_dienes(a: Tensor, c: Tensor) -> Tensor:
    """Kleene-Dienes S-implication I_KD(a, c) = max(1 - a, c)."""
    return torch.maximum(1.0 - a, c)


@register("implication", "reichenbach", s_of="product")
def reichenbach(a: Tensor, c: Tensor) -> Tensor:
    """Reichenbach S-implication I_RC(a, c) = 1 - a + a * c."""
    return 1.0 - a + a * c


@register("implication", "lukasiewicz", s_of="lukasiewicz", r_of="lukasiewicz")
def lukasiewicz(a: Tensor, c: Tensor) -> Tensor:
    """Lukasiewicz S- and R-implication I_LK(a, c) = min(1 - a + c, 1); zero gradient at a = c.

    The derivative at a = c follows Eq. "impl_deriv_luk" (1 only where a > c), so ties such as
    the diagonal same(x, x) -> same(x, x) carry no learning signal, as for the other R-implications.
    """
    return torch.where(a > c, 1.0 - a + c, 1.0)


@register("implication", "dubois_prade", s_of="drastic")
def dubois_prade(a: Tensor, c: Tensor) -> Tensor:
    """Dubois-Prade S-implication I_DP(a, c) = c if a = 1, 1 - a if c = 0, else 1."""
    return torch.where(a == 1.0, c, torch.where(c == 0.0, 1.0 - a, 1.0))


@register("implication", "fodor", s_of="nilpotent_maximum", r_of="nilpotent_minimum")
def fodor(a: Tensor, c: Tensor) -> Tensor:
    """Fodor (nilpotent) S- and R-implication I_FD(a, c) = 1 if a <= c, else max(1 - a, c)."""
    return torch.where(a <= c, 1.0, torch.maximum(1.0 - a, c))


@register(
    "implication", "yager_s", s_of="yager", p=Param(2.0, low=0.0, examples=(0.5, 2.0)), eps=ROOT_EPS
)
def yager_s(a: Tensor, c: Tensor, p: float = 2.0, eps: float = 0.0) -> Tensor:
    """Yager S-implication I_Y(a, c) = min(((1 - a)^p + c^p)^(1/p), 1), p > 0 (Section 8).

    eps > 0 adds the authors' code's eps inside the root (docs/fidelity.md).
    """
    return pnorm2_eps(1.0 - a, c, p, eps, cap=1.0)


@register("implication", "godel", r_of="godel")
def godel(a: Tensor, c: Tensor) -> Tensor:
    """Goedel R-implication I_G(a, c) = 1 if a <= c, else c (= min(a, c): a stays in the graph)."""
    return torch.where(a <= c, 1.0, torch.minimum(a, c))


@register("implication", "goguen", r_of="product")
def goguen(a: Tensor, c: Tensor) -> Tensor:
    """Goguen R-implication I_GG(a, c) = 1 if a <= c, else c / a (denominator floored at EPS)."""
    fails = a > c
    return torch.where(fails, c / floor_(torch.where(fails, a, 1.0)), 1.0)


@register("implication", "weber", r_of="drastic")
def weber(a: Tensor, c: Tensor) -> Tensor:
    """Weber R-implication I_WB(a, c) = 1 if a < 1, else c (a kept in the graph, derivative 0)."""
    return torch.where(a < 1.0, 1.0, c + 0.0 * a)


@register(
    "implication",
    "yager_r",
    r_of="yager",
    p=Param(2.0, low=0.0, examples=(0.5, 2.0, 20.0)),
    eps=ROOT_EPS,
)
def yager_r(a: Tensor, c: Tensor, p: float = 2.0, eps: float = 0.0) -> Tensor:
    """Yager R-implication 1 if a <= c, else 1 - ((1-c)^p - (1-a)^p)^(1/p) (appendix D).

    Computed as 1 - u * gap^(1/p) with u = 1 - c and gap = 1 - (1 - d)^p, d = (a - c) / u:
    no underflow for large p, and gap = -expm1(p log1p(-d)) keeps precision as a -> c, where
    the root's derivative (infinite in the limit) is evaluated at EPS (`pow_`). eps > 0 adds the
    authors' code's eps inside the root: a > c then gives at most 1 - eps^(1/p)
    (docs/fidelity.md).
    """
    fails = a > c
    u = torch.where(fails, 1.0 - c, 1.0)
    d = torch.where(fails, (a - c) / u, 0.0)
    small = d < 0.5
    near = -torch.expm1(p * torch.log1p(-torch.where(small, d, 0.0)))
    gap = torch.where(small, near, 1.0 - pow_(1.0 - d, p))
    return torch.where(fails, 1.0 - root_eps(u * pow_(gap, 1.0 / p), p, eps), 1.0)


def _base_names() -> tuple[str, ...]:
    """Implications a sigmoidal implication can wrap (all but itself)."""
    return tuple(n for n in choices("implication") if n != "sigmoidal")


def _log_sigmoid(x: float) -> float:
    """log(1 / (1 + e^-x)) for a Python float, without overflow."""
    return -math.log1p(math.exp(-x)) if x >= 0 else x - math.log1p(math.exp(x))


class _SigmoidDifference(torch.autograd.Function):
    """(sig((i + b0) s) - sig0) / den, kept in [0, 1] in value only (float32's sigmoid may land a
    rounding step beyond the float64 sig0 and sig1), with the derivative sig' s / den (one
    Function: fewer tensor passes than autograd's)."""

    generate_vmap_rule = True

    @staticmethod
    def forward(i: Tensor, s: float, b0: float, sig0: float, den: float) -> tuple[Tensor, Tensor]:
        sig = torch.sigmoid((i + b0) * s)
        return ((sig - sig0) / den).clamp(0.0, 1.0), sig

    @staticmethod
    def setup_context(ctx, inputs, output) -> None:
        ctx.save_for_backward(output[1])
        ctx.mark_non_differentiable(output[1])
        ctx.scale = inputs[1] / inputs[4]

    @staticmethod
    def backward(ctx, grad: Tensor, _: Tensor) -> tuple[Tensor | None, ...]:
        (sig,) = ctx.saved_tensors
        return torch.ops.aten.sigmoid_backward(grad, sig).mul_(ctx.scale), None, None, None, None


def sigmoidal_rescale(i: Tensor, s: float, b0: float) -> Tensor:
    """Definition "sigmoidal" as sig(z) / sig(z1) * (1 - e^(-s i)) / (1 - e^(-s)), z = s(i + b0).

    With z0 = s b0 and z1 = s(1 + b0) the definition equals (sig(z) - sig(z0)) / (sig(z1) -
    sig(z0)); since sig(z) - sig(z0) = sig(z) sig(-z0) (1 - e^(-s i)) this is the form above,
    computed with log sig = -softplus(-x) (no overflow for large s; cheaper on CPU than
    F.logsigmoid) and expm1 (no cancellation for small s). When the denominator is >= 1/4 (e.g.
    s = 9, b0 = -1/2: 0.98) the difference of sigmoids itself is as accurate (error < 1e-6 in
    float32) and a third of the cost (a rounding-level excursion out of [0, 1] is clamped in
    value, not in gradient).
    """
    sig0, sig1 = math.exp(_log_sigmoid(s * b0)), math.exp(_log_sigmoid(s * (1.0 + b0)))
    if sig1 - sig0 >= 0.25:
        return _SigmoidDifference.apply(i, s, b0, sig0, sig1 - sig0)[0]
    ratio = torch.exp(-F.softplus(-s * (i + b0)) - _log_sigmoid(s * (1.0 + b0)))
    return ratio * torch.expm1(-s * i) / math.expm1(-s)


def _sigmoidal(a: Tensor, c: Tensor, *, base: Callable, s: float, b0: float) -> Tensor:
    """The I-sigmoidal implication sigma_I(a, c) of Definition "sigmoidal"."""
    return sigmoidal_rescale(base(a, c), s, b0)


@register(
    "implication",
    "sigmoidal",
    factory=True,
    base=Param("reichenbach", choices=_base_names),
    s=Param(9.0, low=0.0),
    b0=Param(-0.5),
    p=Param(None, low=0.0),
)
def sigmoidal(base: str, s: float, b0: float, p: float | None) -> Callable:
    """I-sigmoidal implication (Definition "sigmoidal", Section 8) around implication `base`."""
    if p is None:
        inner = build("implication", base)
    elif "p" in spec("implication", base).params:
        inner = build("implication", base, p=p)
    else:
        raise ValueError(
            f"implication 'sigmoidal': base {base!r} has no parameter p; "
            f"bases with p: {[n for n in _base_names() if 'p' in spec('implication', n).params]}"
        )
    return functools.partial(_sigmoidal, base=inner, s=s, b0=b0)
