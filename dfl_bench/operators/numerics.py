"""Numerically safe primitives shared by the operators (Section 7: "care in the implementation").

The exact formulas are used wherever they are finite; at the singular points the treatment is:

* `pow_` (fractional powers x**q, q < 1, e.g. Yager with p < 1 and the Yager R-implication root):
  the value is exact; the derivative q * x**(q-1), infinite at x = 0, is evaluated at
  max(x, EPS) (a custom autograd Function, so no NaN/inf reaches the gradient).
* `log_`, and the Goguen denominator via `floor_`: the value is clamped below at EPS (log 0 =
  log EPS ~ -16.1 instead of -inf) while the gradient passes straight through, so d log(x)/dx is
  1/max(x, EPS) (a large, finite learning signal) instead of 0 as with a plain clamp.
* `pnorm`, `pnorm2` ((sum x_i**p)**(1/p), used by all Yager/generalized-mean operators) are scaled
  by m = max_i x_i, which avoids under/overflow for large p and keeps the root's argument >= 1.
  At the origin (all x_i = 0, where the derivative is undefined) the gradient is the directional
  derivative along the diagonal, n**(1/p - 1) per input (the limit of all-equal inputs).

EPS = 1e-7 is about the float32 resolution near 1; values differ from the exact formula only
where an input is within EPS of a singularity. Branch selections use `torch.where` on safe
inputs so the discarded branch never produces NaN gradients. Everything stays in the input dtype.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import torch
from torch import Tensor

EPS = 1e-7

Dim = int | Sequence[int]


class _PowSafeGrad(torch.autograd.Function):
    """x**q with the derivative q * max(x, EPS)**(q - 1) (finite at x = 0 when q < 1)."""

    @staticmethod
    def forward(ctx, x: Tensor, q: float) -> Tensor:
        ctx.save_for_backward(x)
        ctx.q = q
        return x.pow(q)

    @staticmethod
    def backward(ctx, grad: Tensor) -> tuple[Tensor, None]:
        (x,) = ctx.saved_tensors
        return grad * ctx.q * x.clamp_min(EPS).pow(ctx.q - 1.0), None


def pow_(x: Tensor, q: float) -> Tensor:
    """x**q for x >= 0 with a finite derivative everywhere (exact for q >= 1)."""
    return x.pow(q) if q >= 1.0 else _PowSafeGrad.apply(x, q)


def floor_(x: Tensor) -> Tensor:
    """max(x, EPS) in value, identity in gradient (straight-through floor)."""
    return x + (x.clamp_min(EPS) - x).detach()


class _FlooredLog(torch.autograd.Function):
    """log(max(x, EPS)) with the derivative 1 / max(x, EPS) everywhere (`floor_` then log, as
    one Function: two tensor passes each way instead of six)."""

    generate_vmap_rule = True

    @staticmethod
    def forward(x: Tensor) -> Tensor:
        return x.clamp_min(EPS).log_()

    @staticmethod
    def setup_context(ctx, inputs, output) -> None:
        ctx.save_for_backward(inputs[0])

    @staticmethod
    def backward(ctx, grad: Tensor) -> Tensor:
        (x,) = ctx.saved_tensors
        return grad / x.clamp_min(EPS)


def log_(x: Tensor) -> Tensor:
    """log(max(x, EPS)) with derivative 1/max(x, EPS) (finite log-product at truth value 0)."""
    return _FlooredLog.apply(x)


def dims(x: Tensor, dim: Dim) -> tuple[int, ...]:
    """Normalise an aggregation `dim` (int or tuple) to a sorted tuple of non-negative dims."""
    seq = (dim,) if isinstance(dim, int) else tuple(dim)
    out = tuple(sorted({d % x.dim() for d in seq})) if x.dim() else ()
    if len(out) != len(seq) or not out:
        raise ValueError(f"invalid aggregation dim {dim!r} for a tensor of shape {tuple(x.shape)}")
    return out


def count(x: Tensor, dim: Dim) -> int:
    """Number of elements an aggregation over `dim` reduces."""
    return math.prod([x.shape[d] for d in dims(x, dim)])


def flatten_dims(x: Tensor, dim: Dim) -> Tensor:
    """Move the aggregated dims to the end and flatten them into one last dim."""
    ds = dims(x, dim)
    k = len(ds)
    return x.movedim(ds, tuple(range(x.dim() - k, x.dim()))).flatten(x.dim() - k)


def pnorm(x: Tensor, p: float, dim: Dim) -> Tensor:
    """(sum_i x_i**p)**(1/p) over `dim` for x >= 0, max-scaled; see the module docstring."""
    ds = dims(x, dim)
    m = x.amax(dim=ds, keepdim=True)
    pos = m > 0
    # A subnormal maximum scales as a constant (the norm is homogeneous, so the value is the
    # same and so is the derivative, (x_i / N)**(p - 1)): d(x / m)/dm = -x / m**2 would be inf.
    subnormal = pos & (m < torch.finfo(x.dtype).tiny)
    scale = torch.where(subnormal, m.detach(), m)
    t = torch.where(pos, x / torch.where(pos, scale, 1.0), 1.0)
    root = pow_(t, p).sum(dim=ds, keepdim=True).pow(1.0 / p)
    return (scale * root).squeeze(ds)


class _PNorm2(torch.autograd.Function):
    """(u**p + v**p)**(1/p) = m (1 + r**p)**(1/p), m = max(u, v), r = min(u, v) / m, with the
    derivative (x / N)**(p-1) = ((x + t) / (m + t))**(p-1) / q**(p-1) for x in (u, v),
    q = (1 + r**p)**(1/p) (t = the dtype's smallest normal: at the origin both inputs count as
    the maximum, giving the diagonal's 2**(1/p - 1)); the min's ratio is floored at EPS as in
    `pow_`. With `cap` the value is min(N, cap), whose gradient is 0 where N > cap (as a clamp's).
    One fused Function instead of autograd through max, where, the scaled powers and the clamp:
    about 3x faster forward and backward on the CPU."""

    generate_vmap_rule = True

    @staticmethod
    def forward(u: Tensor, v: Tensor, p: float, cap: float | None) -> tuple[Tensor, Tensor]:
        m, tiny = torch.maximum(u, v), torch.finfo(u.dtype).tiny
        q = ((torch.minimum(u, v) + tiny) / (m + tiny)).pow_(p).add_(1.0).pow_(1.0 / p)
        out = m * q
        return (out if cap is None else out.clamp_max_(cap)), q

    @staticmethod
    def setup_context(ctx, inputs, output) -> None:
        u, v, p, cap = inputs
        ctx.save_for_backward(u, v, output[1])
        ctx.mark_non_differentiable(output[1])
        ctx.p, ctx.cap = p, cap

    @staticmethod
    def backward(ctx, grad: Tensor, _: Tensor) -> tuple[Tensor, Tensor, None, None]:
        u, v, q = ctx.saved_tensors
        scale = q.pow(1.0 - ctx.p).mul_(grad)  # grad / q**(p-1)
        if ctx.cap is not None:
            scale.mul_(torch.maximum(u, v) * q <= ctx.cap)
        du, dv = pnorm2_slopes(u, v, ctx.p, scale)
        return du.sum_to_size(u.shape), dv.sum_to_size(v.shape), None, None


def pnorm2_parts(u: Tensor, v: Tensor, p: float) -> tuple[Tensor, Tensor]:
    """`pnorm2`'s value N and its q = N / max(u, v), without a graph (for closed-form
    derivatives that chain through it: `pnorm2_slopes`)."""
    return _PNorm2.forward(u, v, p, None)


def pnorm2_slopes(u: Tensor, v: Tensor, p: float, scale: Tensor) -> tuple[Tensor, Tensor]:
    """scale * dN/du and scale * dN/dv of N = `pnorm2`(u, v, p), where scale already holds the
    factor 1 / q**(p-1) (`_PNorm2`'s derivative, its conventions at the origin included)."""
    tiny = torch.finfo(u.dtype).tiny
    m = torch.maximum(u, v).add_(tiny)
    du = ((u + tiny) / m).clamp_min_(EPS).pow_(p - 1.0).mul_(scale)
    dv = ((v + tiny) / m).clamp_min_(EPS).pow_(p - 1.0).mul_(scale)
    return du, dv


def pnorm2(u: Tensor, v: Tensor, p: float, cap: float | None = None) -> Tensor:
    """(u**p + v**p)**(1/p) elementwise for u, v >= 0, max-scaled (see the module docstring);
    with `cap`, min(that, cap) (the Yager operators cap at 1)."""
    return _PNorm2.apply(u, v, p, cap)[0]


def root_eps(norm: Tensor, p: float, eps: float, cap: float | None = None) -> Tensor:
    """(norm**p + eps)**(1/p) (min'd with `cap`): the `+ eps` inside the p-th root of the
    authors' Yager operators (docs/fidelity.md), a floor of eps**(1/p); `norm` when eps = 0."""
    if eps == 0.0:
        return norm if cap is None else norm.clamp_max(cap)
    return pnorm2(norm, torch.full_like(norm, eps ** (1.0 / p)), p, cap)


def pnorm2_eps(u: Tensor, v: Tensor, p: float, eps: float, cap: float | None = None) -> Tensor:
    """(u**p + v**p + eps)**(1/p) (min'd with `cap`): `pnorm2` with the authors' `+ eps`
    (`root_eps`); exactly `pnorm2` when eps = 0."""
    if eps == 0.0:
        return pnorm2(u, v, p, cap)
    return root_eps(pnorm2(u, v, p), p, eps, cap)
