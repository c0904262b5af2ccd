"""Parametric t-norm families beyond the paper (Klement, Mesiar and Pap, *Triangular Norms*,
2000, ch. 4): Hamacher, Frank, Dombi, Schweizer-Sklar and Aczel-Alsina, each with its parameter
`p`. Per family: the t-norm T, its dual t-conorm S(a, b) = 1 - T(1 - a, 1 - b) (Eq. "tconorm"),
the S-implication S(1 - a, c) (Eq. "s-impl"), the residuum sup{b : T(a, b) <= c} (Eq.
"r-implication", in closed form), the universal aggregator A_T (the n-ary t-norm, through the
family's additive generator t: A_T(x) = t^-1(sum_i t(x_i))) and the existential one E_S(x) =
1 - A_T(1 - x) (Section 6).

Numerics follow `dfl_bench.operators.numerics`: logs and divisions are floored at EPS in value
(finite derivatives at 0 and 1), roots with exponent < 1 take `pow_`, p-norms are max-scaled; an
input of exactly 0 gives T = 0 (no zero divisors: the floored generator would leave ~EPS), with
the discarded branch kept finite so no NaN reaches a gradient.

    >>> import torch
    >>> from dfl_bench.operators import build
    >>> a, b = torch.tensor([0.3, 1.0]), torch.tensor([0.6, 0.4])
    >>> torch.allclose(build("tnorm", "hamacher", p=1.0)(a, b), a * b)   # p = 1: product
    True
    >>> torch.allclose(build("tnorm", "schweizer_sklar", p=1.0)(a, b), (a + b - 1).clamp_min(0))
    True
"""

from __future__ import annotations

import math
from collections.abc import Callable

import torch
from torch import Tensor

from dfl_bench.operators.numerics import (
    EPS,
    Dim,
    dims,
    flatten_dims,
    floor_,
    log_,
    pnorm,
    pnorm2,
    pnorm2_parts,
    pnorm2_slopes,
    pow_,
)
from dfl_bench.operators.registry import Param, register

Binary = Callable[[Tensor, Tensor, float], Tensor]
Partials = Callable[[Tensor, Tensor, float], tuple[Tensor, Tensor]]


def _tiny(x: Tensor) -> float:
    """The dtype's smallest normal number."""
    return torch.finfo(x.dtype).tiny


def _log(x: Tensor) -> Tensor:
    """log x, exact in value down to the dtype's smallest normal, with the derivative
    1 / max(x, EPS) of `log_` (so a value below EPS stays exact: folding the binary t-norm
    matches the n-ary one)."""
    floored = log_(x)
    return floored + (torch.log(x.clamp_min(_tiny(x))) - floored).detach()


def _odds_against(x: Tensor) -> Tensor:
    """(1 - x) / x (the Dombi and Hamacher p = 0 generators), exact in value down to the dtype's
    smallest normal, with the derivative of (1 - x) / max(x, EPS) (finite at 0)."""
    floored = (1.0 - x) / floor_(x)
    exact = (1.0 - x) / x.clamp_min(_tiny(x))
    return floored + (exact - floored).detach()


def _zero_if_any_zero(value: Tensor, *xs: Tensor) -> Tensor:
    """T = 0 where an input (>= 0) is exactly 0, elsewhere the value and its gradient unchanged:
    the value times each input's sign, which the CPU computes several times faster than a
    boolean `where` (the value is finite, so a 0 factor gives 0; an input of -0.0 gives -0.0)."""
    mask = torch.sign(xs[0].detach())
    for x in xs[1:]:
        mask = mask * torch.sign(x.detach())
    return value * mask


def _select(condition: Tensor, x: Tensor, y: Tensor) -> Tensor:
    """where(condition, x, y) for finite x, y >= 0, as x c + y (1 - c): equal to the bit, and
    cheaper than a boolean `where` on the CPU."""
    c = condition.to(x.dtype)
    return x * c + y * (1.0 - c)


def _gradient_at_floor(f: Binary, a: Tensor, b: Tensor, p: float) -> Tensor:
    """f(a, b) in value, with the derivative f has at (max(a, EPS), max(b, EPS)): finite where an
    input is 0 or subnormal (in float32 the square of such an input underflows to 0, and a
    quotient's derivative divides by it: Hamacher p = 0 at (0, 1e-45) would give NaN)."""
    at_floor = f(floor_(a), floor_(b), p)
    with torch.no_grad():  # the exact value only: no graph to keep for it
        exact = f(a, b, p)
    return at_floor + (exact - at_floor.detach())


def _any_zero(x: Tensor, dim: Dim) -> Tensor:
    """Whether an aggregated input (>= 0) is exactly 0: its minimum is."""
    return x.amin(dim=dims(x, dim)) == 0.0 if x.dim() else x == 0.0


class _TNorm(torch.autograd.Function):
    """A family's T(a, b): its formula's value (exact down to the dtype's smallest normal) with
    the closed-form partial derivatives at (max(a, EPS), max(b, EPS)), what autograd of the
    formula at the floored inputs gives (`_gradient_at_floor`) without the formula's graph: a
    few tensor passes each way instead of dozens."""

    generate_vmap_rule = True

    @staticmethod
    def forward(a: Tensor, b: Tensor, name: str, p: float) -> Tensor:
        return T_NORMS[name][0](a, b, p)

    @staticmethod
    def setup_context(ctx, inputs, output) -> None:
        a, b, ctx.name, ctx.p = inputs
        ctx.save_for_backward(a, b)

    @staticmethod
    def backward(ctx, grad: Tensor) -> tuple[Tensor, Tensor, None, None]:
        a, b = ctx.saved_tensors
        da, db = PARTIALS[ctx.name](a.clamp_min(EPS), b.clamp_min(EPS), ctx.p)
        return (grad * da).sum_to_size(a.shape), (grad * db).sum_to_size(b.shape), None, None


def t_norm(name: str, a: Tensor, b: Tensor, p: float) -> Tensor:
    """Family `name`'s T(a, b) with its closed-form derivatives (`_TNorm`)."""
    return _TNorm.apply(a, b, name, p)


# --- Hamacher: T(a, b) = ab / (p + (1 - p)(a + b - ab)), p >= 0 ---------------------------------


def hamacher_t(a: Tensor, b: Tensor, p: float) -> Tensor:
    """Hamacher t-norm; T(0, 0) = 0 (p = 0: the Hamacher product ab / (a + b - ab)). On [0, 1]
    the denominator is >= min(p, 1), so only p = 0 at (0, 0) divides 0 by 0."""
    value = a * b / (p + (1.0 - p) * (a + b - a * b))
    return value if p > 0 else torch.nan_to_num(value, nan=0.0, posinf=math.inf)


def hamacher_partials(a: Tensor, b: Tensor, p: float) -> tuple[Tensor, Tensor]:
    """dT/da = b (b + p (1 - b)) / D^2 and dT/db, with the denominator D written without
    cancellation: 1 + (p - 1)(1 - a)(1 - b) for p >= 1, p + (1 - p)(a + b - ab) below."""
    if p >= 1.0:
        den = 1.0 + (p - 1.0) * ((1.0 - a) * (1.0 - b))
    else:
        den = p + (1.0 - p) * (a + b - a * b)
    den2 = den * den
    return b * (b + p * (1.0 - b)) / den2, a * (a + p * (1.0 - a)) / den2


def hamacher_forall(x: Tensor, dim: Dim, p: float) -> Tensor:
    """n-ary Hamacher t-norm via t(x) = log((p + (1 - p) x) / x) (p > 0): A = p e^-U / (1 +
    (p - 1) e^-U), U = sum_i t(x_i); p = 0: t(x) = (1 - x) / x and A = 1 / (1 + U)."""
    ds = dims(x, dim)
    if p == 0.0:
        total = _odds_against(x).sum(dim=ds)
        return torch.where(_any_zero(x, dim), 0.0, 1.0 / (1.0 + total))
    e = torch.exp((_log(x) - torch.log(p + (1.0 - p) * x)).sum(dim=ds))  # e^-U in [0, 1]
    return torch.where(_any_zero(x, dim), 0.0, p * e / (1.0 + (p - 1.0) * e))


def hamacher_r(a: Tensor, c: Tensor, p: float) -> Tensor:
    """Residuum: 1 if a <= c, else c (p + (1 - p) a) / (a - (1 - p) c (1 - a)) (p = 1: Goguen)."""
    fails = a > c
    den = torch.where(fails, a - (1.0 - p) * c * (1.0 - a), 1.0)
    return torch.where(fails, c * (p + (1.0 - p) * a) / floor_(den), 1.0)


# --- Frank: T(a, b) = log_p(1 + (p^a - 1)(p^b - 1) / (p - 1)), p > 0 ------------------------------


def _frank_ratio(x: Tensor, L: float) -> Tensor:
    """(p^x - 1) / (p - 1) in [0, 1] (the generator's argument), L = log p != 0."""
    return torch.expm1(x * L) / math.expm1(L)


def frank_t(a: Tensor, b: Tensor, p: float) -> Tensor:
    """Frank t-norm (p = 1: the product, its limit), with expm1/log1p for precision near p = 1."""
    if p == 1.0:
        return a * b
    L = math.log(p)
    value = torch.log1p(math.expm1(L) * (_frank_ratio(a, L) * _frank_ratio(b, L))) / L
    return value.clamp(0.0, 1.0)  # rounding: T(1, 1) came out 1 + 2e-16 at p = 0.1


def frank_partials(a: Tensor, b: Tensor, p: float) -> tuple[Tensor, Tensor]:
    """dT/da = r_b p^a / (1 + (p - 1) r_a r_b), r = (p^x - 1) / (p - 1) the generator's
    argument (p = 1: b); p^a as expm1(a log p) + 1, whose rounding cancels the denominator's."""
    if p == 1.0:
        return b, a
    L, k = math.log(p), math.expm1(math.log(p))
    ea, eb = torch.expm1(a * L), torch.expm1(b * L)
    den = 1.0 + k * ((ea / k) * (eb / k))
    return (eb / k) * (ea + 1.0) / den, (ea / k) * (eb + 1.0) / den


def frank_forall(x: Tensor, dim: Dim, p: float) -> Tensor:
    """n-ary Frank t-norm: log_p(1 + (p - 1) prod_i (p^x_i - 1) / (p - 1))."""
    if p == 1.0:
        return flatten_dims(x, dim).prod(dim=-1)
    L = math.log(p)
    ratio = flatten_dims(_frank_ratio(x, L), dim).prod(dim=-1)
    return (torch.log1p(math.expm1(L) * ratio) / L).clamp(0.0, 1.0)


def frank_r(a: Tensor, c: Tensor, p: float) -> Tensor:
    """Residuum: 1 if a <= c, else log_p(1 + (p^c - 1)(p - 1) / (p^a - 1)) (p = 1: Goguen)."""
    fails = a > c
    if p == 1.0:
        return torch.where(fails, c / floor_(torch.where(fails, a, 1.0)), 1.0)
    L = math.log(p)
    den = _frank_ratio(torch.where(fails, a, 1.0), L)
    value = torch.log1p(math.expm1(L) * _frank_ratio(c, L) / floor_(den)) / L
    return torch.where(fails, value, 1.0)


# --- Dombi: T(a, b) = 1 / (1 + (((1 - a) / a)^p + ((1 - b) / b)^p)^(1/p)), p > 0 ----------------


def dombi_t(a: Tensor, b: Tensor, p: float) -> Tensor:
    """Dombi t-norm; 0 where a or b is 0."""
    value = 1.0 / (1.0 + pnorm2(_odds_against(a), _odds_against(b), p))
    return _zero_if_any_zero(value, a, b)


def dombi_partials(a: Tensor, b: Tensor, p: float) -> tuple[Tensor, Tensor]:
    """dT/da = T^2 dN/dz_a / a^2, N = ||(z_a, z_b)||_p, z = (1 - x) / x (`pnorm2`'s slopes)."""
    za, zb = (1.0 - a) / a, (1.0 - b) / b
    norm, q = pnorm2_parts(za, zb, p)
    t = 1.0 / (1.0 + norm)
    da, db = pnorm2_slopes(za, zb, p, q.pow(1.0 - p).mul_(t * t))
    return da / (a * a), db / (b * b)


def dombi_forall(x: Tensor, dim: Dim, p: float) -> Tensor:
    """n-ary Dombi t-norm 1 / (1 + ||(1 - x_i) / x_i||_p) (generator ((1 - x) / x)^p)."""
    value = 1.0 / (1.0 + pnorm(_odds_against(x), p, dim))
    return torch.where(_any_zero(x, dim), 0.0, value)


def dombi_r(a: Tensor, c: Tensor, p: float) -> Tensor:
    """Residuum: 1 if a <= c, else 1 / (1 + z_c (1 - (z_a / z_c)^p)^(1/p)), z = (1 - x) / x."""
    fails = a > c
    za, zc = _odds_against(torch.where(fails, a, 1.0)), _odds_against(torch.where(fails, c, 0.5))
    ratio = (za / zc).clamp(0.0, 1.0)
    gap = pow_((1.0 - pow_(ratio, p)).clamp_min(0.0), 1.0 / p)
    return torch.where(fails, _zero_if_any_zero(1.0 / (1.0 + zc * gap), c), 1.0)


# --- Schweizer-Sklar: T(a, b) = max(0, a^p + b^p - 1)^(1/p); p = 0 the product ----------------


def schweizer_sklar_t(a: Tensor, b: Tensor, p: float) -> Tensor:
    """Schweizer-Sklar t-norm: p > 0 with the max, p = 0 the product, p < 0 (a^p + b^p - 1)^(1/p)
    as m (1 + (m / M)^q - m^q)^(-1/q), q = -p, m and M the min and max (no overflow of a^p)."""
    if p == 0.0:
        return a * b
    if p > 0.0:
        return pow_((pow_(a, p) + pow_(b, p) - 1.0).clamp_min(0.0), 1.0 / p)
    q = -p
    m, big = torch.minimum(a, b), torch.maximum(a, b)
    ratio = torch.nan_to_num(m / big, nan=0.0)  # m <= big: 0 / 0 is the only NaN, at (0, 0)
    return m * (1.0 + pow_(ratio, q) - pow_(m, q)).pow(-1.0 / q)  # the base is >= 1


def schweizer_sklar_partials(a: Tensor, b: Tensor, p: float) -> tuple[Tensor, Tensor]:
    """p > 0: dT/da = s^(1/p - 1) a^(p - 1) where s = a^p + b^p - 1 >= 0 (0 below; the root's
    derivative at max(s, EPS) when 1/p < 1, as `pow_`); p = 0: b; p < 0 (q = -p), with m and
    M the min and max, r = m / M and B = 1 + r^q - m^q (the forward's base): dT/dm = B^-(1+q)/q
    and dT/dM = r^(1+q) B^-(1+q)/q, no overflow, the tie's halves at any q."""
    if p == 0.0:
        return b, a
    if p < 0.0:
        q = -p
        low, high = torch.minimum(a, b), torch.maximum(a, b)
        ratio = low / high
        slope = (1.0 + ratio.pow(q) - low.pow(q)).clamp_min(1.0).pow(-(1.0 + q) / q)
        other = ratio.pow(1.0 + q) * slope
        return _select(a <= b, slope, other), _select(b <= a, slope, other)
    s = a.pow(p) + b.pow(p) - 1.0
    root = s.clamp_min(0.0) if p <= 1.0 else s.clamp_min(EPS)
    slope = torch.where(s >= 0.0, root.pow(1.0 / p - 1.0), 0.0)
    return slope * a.pow(p - 1.0), slope * b.pow(p - 1.0)


def schweizer_sklar_forall(x: Tensor, dim: Dim, p: float) -> Tensor:
    """n-ary Schweizer-Sklar t-norm: max(0, sum_i x_i^p - (n - 1))^(1/p) (p = 0: product)."""
    ds = dims(x, dim)
    n = flatten_dims(x, dim).shape[-1]
    if p == 0.0:
        return flatten_dims(x, dim).prod(dim=-1)
    if p > 0.0:
        return pow_((pow_(x, p).sum(dim=ds) - (n - 1)).clamp_min(0.0), 1.0 / p)
    q = -p  # sum_i x_i^-q - (n - 1) = m^-q (sum_i (m / x_i)^q - (n - 1) m^q), m the minimum
    m = x.amin(dim=ds, keepdim=True)
    floored = m / floor_(x)  # m / x in [0, 1], exact in value, with a finite derivative
    ratio = torch.where(x > 0, floored + (m / x.clamp_min(_tiny(x)) - floored).detach(), 1.0)
    low = m.squeeze(ds)
    rest = pow_(ratio, q).sum(dim=ds) - (n - 1) * pow_(low, q)  # >= 1 but for rounding
    return low * rest.clamp_min(1.0).pow(-1.0 / q)


def schweizer_sklar_r(a: Tensor, c: Tensor, p: float) -> Tensor:
    """Residuum: 1 if a <= c, else (1 - a^p + c^p)^(1/p) (p = 0: Goguen; p < 0 as c (1 + c^q -
    (c / a)^q)^(-1/q), q = -p)."""
    fails = a > c
    safe_a = torch.where(fails, a, 1.0)
    if p == 0.0:
        value = c / floor_(safe_a)
    elif p > 0.0:
        value = pow_((1.0 - pow_(safe_a, p) + pow_(c, p)).clamp_min(0.0), 1.0 / p)
    else:
        q = -p
        ratio = (c / floor_(safe_a)).clamp(0.0, 1.0)
        inner = (1.0 + pow_(c, q) - pow_(ratio, q)).clamp_min(_tiny(a))
        value = c * inner.pow(-1.0 / q)
    return torch.where(fails, value, 1.0)


# --- Aczel-Alsina: T(a, b) = exp(-((-log a)^p + (-log b)^p)^(1/p)), p > 0 ----------------------


def aczel_alsina_t(a: Tensor, b: Tensor, p: float) -> Tensor:
    """Aczel-Alsina t-norm (p = 1: the product); 0 where a or b is 0."""
    value = torch.exp(-pnorm2(-_log(a), -_log(b), p))
    return _zero_if_any_zero(value, a, b)


def aczel_alsina_partials(a: Tensor, b: Tensor, p: float) -> tuple[Tensor, Tensor]:
    """dT/da = T dN/du / a, N = ||(u, v)||_p, u = -log a (`pnorm2`'s slopes)."""
    u, v = -torch.log(a), -torch.log(b)
    norm, q = pnorm2_parts(u, v, p)
    da, db = pnorm2_slopes(u, v, p, q.pow(1.0 - p).mul_(torch.exp(-norm)))
    return da / a, db / b


def aczel_alsina_forall(x: Tensor, dim: Dim, p: float) -> Tensor:
    """n-ary Aczel-Alsina t-norm exp(-||-log x_i||_p) (generator (-log x)^p)."""
    return torch.where(_any_zero(x, dim), 0.0, torch.exp(-pnorm(-_log(x), p, dim)))


def aczel_alsina_r(a: Tensor, c: Tensor, p: float) -> Tensor:
    """Residuum: 1 if a <= c, else exp(-u (1 - (v / u)^p)^(1/p)), u = -log c, v = -log a."""
    fails = a > c
    u = -_log(torch.where(fails, c, 0.5))
    v = -_log(torch.where(fails, a, 1.0))
    ratio = (v / u).clamp(0.0, 1.0)
    gap = pow_((1.0 - pow_(ratio, p)).clamp_min(0.0), 1.0 / p)
    return torch.where(fails, _zero_if_any_zero(torch.exp(-u * gap), c), 1.0)


# --- the registry: six operators per family ------------------------------------------------------

# Each parameter's range is where values and gradients are finite on [0, 1] (corners and float32
# subnormals included), measured on a grid of p from 1e-300 to 1e300 and narrowed with a margin;
# a value outside is refused (tests/operators/test_operators_families.py checks the range).
T_NORMS = {  # name -> (T, A_T, residuum, its parameter, T's formula, the residuum's)
    "hamacher": (
        hamacher_t, hamacher_forall, hamacher_r,
        Param(0.0, low=1e-6, low_inclusive=True, high=1e6, also=(0.0,), examples=(0.0, 0.5, 3.0)),
        "T(a, b) = ab / (p + (1 - p)(a + b - ab)), p >= 0 (p = 0: Hamacher product, 1: product)",
        "c (p + (1 - p) a) / (a - (1 - p) c (1 - a))",
    ),
    "frank": (
        frank_t, frank_forall, frank_r,
        Param(2.0, low=1e-6, low_inclusive=True, high=1e30, examples=(0.1, 1.0, 20.0)),
        "T(a, b) = log_p(1 + (p^a - 1)(p^b - 1) / (p - 1)), p > 0 (1: product; 0: Goedel, "
        "inf: Lukasiewicz as limits)",
        "log_p(1 + (p^c - 1)(p - 1) / (p^a - 1))",
    ),
    "dombi": (
        dombi_t, dombi_forall, dombi_r,
        Param(1.0, low=0.05, low_inclusive=True, high=1e30, examples=(0.5, 2.0)),
        "T(a, b) = 1 / (1 + (((1 - a) / a)^p + ((1 - b) / b)^p)^(1/p)), p > 0 (0: drastic, inf: "
        "Goedel as limits)",
        "1 / (1 + (((1 - c) / c)^p - ((1 - a) / a)^p)^(1/p))",
    ),
    "schweizer_sklar": (
        schweizer_sklar_t, schweizer_sklar_forall, schweizer_sklar_r,
        Param(0.5, low=-1e30, low_inclusive=True, high=1e30, examples=(-2.0, -0.5, 0.0, 0.5, 2.0)),
        "T(a, b) = max(0, a^p + b^p - 1)^(1/p), any real p (0: product, 1: Lukasiewicz; -inf: "
        "Goedel as a limit)",
        "max(0, 1 - a^p + c^p)^(1/p) (p = 0: Goguen)",
    ),
    "aczel_alsina": (
        aczel_alsina_t, aczel_alsina_forall, aczel_alsina_r,
        Param(2.0, low=0.05, low_inclusive=True, high=1e30, examples=(0.5, 2.0)),
        "T(a, b) = exp(-((-log a)^p + (-log b)^p)^(1/p)), p > 0 (1: product; inf: Goedel as a "
        "limit)",
        "exp(-((-log c)^p - (-log a)^p)^(1/p))",
    ),
}  # fmt: skip
FAMILIES = tuple(T_NORMS)  # each registers its six operators below
PARTIALS: dict[str, Partials] = {  # name -> (dT/da, dT/db) at inputs >= EPS
    "hamacher": hamacher_partials,
    "frank": frank_partials,
    "dombi": dombi_partials,
    "schweizer_sklar": schweizer_sklar_partials,
    "aczel_alsina": aczel_alsina_partials,
}


def _register(name: str) -> None:
    """Register family `name`'s t-norm, t-conorm, S- and R-implication and aggregators."""
    _, forall, r, param, formula, residuum = T_NORMS[name]

    @register("tnorm", name, p=param)
    def tnorm(a: Tensor, b: Tensor, p: float = param.default) -> Tensor:
        return t_norm(name, a, b, p)

    @register("tconorm", name, dual=name, p=param)
    def tconorm(a: Tensor, b: Tensor, p: float = param.default) -> Tensor:
        return 1.0 - t_norm(name, 1.0 - a, 1.0 - b, p)

    @register("implication", f"{name}_s", s_of=name, p=param)
    def s_implication(a: Tensor, c: Tensor, p: float = param.default) -> Tensor:
        return 1.0 - t_norm(name, a, 1.0 - c, p)

    @register("implication", f"{name}_r", r_of=name, p=param)
    def r_implication(a: Tensor, c: Tensor, p: float = param.default) -> Tensor:
        return _gradient_at_floor(r, a, c, p)

    @register("forall", name, folds=name, p=param)
    def universal(x: Tensor, dim: Dim = -1, p: float = param.default) -> Tensor:
        return forall(x, dim, p)

    @register("exists", name, folds=name, p=param)
    def existential(x: Tensor, dim: Dim = -1, p: float = param.default) -> Tensor:
        return 1.0 - forall(1.0 - x, dim, p)

    title = {"aczel_alsina": "Aczel-Alsina", "schweizer_sklar": "Schweizer-Sklar"}.get(
        name, name.title()
    )
    tnorm.__doc__ = f"{title} t-norm {formula}."
    tconorm.__doc__ = f'{title} t-conorm S(a, b) = 1 - T(1 - a, 1 - b) (Eq. "tconorm").'
    s_implication.__doc__ = f'{title} S-implication I(a, c) = S(1 - a, c) (Eq. "s-impl").'
    r_implication.__doc__ = f"{title} R-implication: 1 if a <= c, else {residuum}."
    universal.__doc__ = f"{title} aggregator A_T(x) = t^-1(sum_i t(x_i)), the n-ary t-norm."
    existential.__doc__ = f"{title} existential aggregator E_S(x) = 1 - A_T(1 - x) (Section 6)."


for _name in FAMILIES:
    _register(_name)
