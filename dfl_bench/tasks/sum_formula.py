"""MNIST addition's formula (tasks/mnist_addition.py is the task), for a sum z of the numbers x
(images x_1..x_N) and y (y_1..y_N)::

    sum(x, y) = z  <->  exists d in {0..9}^2N: /\\_i digit(x_i, d_i) /\\ digit(y_i, d_N+i)
                                               /\\ value(d_1..d_N) + value(d_N+1..d_2N) = z

grounded over all 10^2N digit tuples in one batched tensor op for N <= ENUMERATED: the
conjunction with the configured t-norm (`tnorm=`), the existential over the tuples whose numbers
add up to z with the configured existential aggregator (`exists=`; the other tuples hold its
neutral element 0), the batch's sums joined by the universal aggregator (`forall=`). Above that
the same valuation is computed digit position by digit position over the carries (`carried`),
exactly, for the pairs (existential, t-norm) that distribute like a semiring (FACTORIZING,
docs/tasks.md): the maximum with any t-norm, the bounded sum with the product (the probability)
and the generalized mean with the product (through p-th powers); any other pair is refused
there, naming those. The DFL loss is -forall(valuations)
(Eq. "lossrl"); there is no supervised part. With the product t-norm and the bounded sum the
valuation is the exact probability of the sum (the softmax digits are disjoint events, so the sum
stays below 1 and the bound never binds).

Valuations in log space (`task.valuation: log`, the default): with the product t-norm the
valuation of every factorizing pair is computed as its logarithm, never leaving log space (the
maximum of sums of logs; a log-sum-exp for the bounded sum; the generalized mean through its
p-th powers, p times the sums of logs), so it never underflows (at N = 100 an untrained
network's sum has a valuation near 1e-200) and the log-product aggregator takes the log itself
instead of flooring the value at numerics.EPS, where its derivative is a constant.
`task.valuation: probability` computes the value and lets the aggregator floor it (the records
made before log space: results/theory/carry_gradients.md shows what the floor does).
"""

from __future__ import annotations

import math

import torch
from torch import Tensor

from dfl_bench.operators import OperatorSet

ENUMERATED = 2  # up to this many digits per number the 10^(2N) tuples are grounded as a tensor
# The (existential, t-norm) pairs whose valuation factorizes over the digit positions: the
# maximum with any t-norm (it distributes over a monotone t-norm), the bounded sum and the
# generalized mean with the product (a sum of products: disjoint events never reach the bound;
# the mean's p-th powers are products too).
FACTORIZING = {"maximum": None, "bounded_sum": "product", "generalized_mean": "product"}
# The log of an impossible path over the carries: finite, so that a carry no tuple reaches has a
# zero gradient (a log-sum-exp over nothing but -inf has none); exp() of it is 0.
IMPOSSIBLE = -1e30


def place_values(digits: int) -> Tensor:
    """The value of each of the 2N digits of one sample: 10^(N-1), ..., 1 for x, then for y."""
    one = torch.tensor([10 ** (digits - 1 - i) for i in range(digits)])
    return torch.cat([one, one])


def tuple_sums(digits: int) -> Tensor:
    """The sum x + y of every digit tuple, shape (10,) * 2N (tuple index = the digits)."""
    values = place_values(digits)
    grids = torch.meshgrid(*[torch.arange(10)] * (2 * digits), indexing="ij")
    return sum(g * int(v) for g, v in zip(grids, values, strict=True))


def add_digits(x: Tensor, y: Tensor) -> Tensor:
    """The N + 1 digits of x + y from the N digits of each (most significant first), by columns
    with their carries, so that a sum of any length is exact.

    >>> add_digits(torch.tensor([9, 7]), torch.tensor([0, 5])).tolist()   # 97 + 5
    [1, 0, 2]
    """
    carry, out = torch.zeros_like(x[..., 0]), []
    for i in reversed(range(x.shape[-1])):
        column = x[..., i] + y[..., i] + carry
        out.append(column % 10)
        carry = column // 10
    return torch.stack([carry, *reversed(out)], dim=-1)


def digits_of(values: Tensor, digits: int) -> Tensor:
    """The N + 1 digits of sums given as numbers (for N where they fit: tests, enumeration)."""
    powers = torch.tensor([10**k for k in range(digits, -1, -1)])
    return values.unsqueeze(-1) // powers % 10


def value_of(sum_digits: Tensor) -> Tensor:
    """A sum's value from its N + 1 digits (N <= ENUMERATED)."""
    width = sum_digits.shape[-1]
    return (sum_digits * torch.tensor([10**k for k in range(width - 1, -1, -1)])).sum(-1)


def sum_valuation(log_probs: Tensor, sums: Tensor, ops: OperatorSet, log: bool) -> Tensor:
    """Each sample's truth of sum(x, y) = z from its images' digit log-probabilities (B, 2N, 10)
    and its sum's digits (B, N + 1): the t-norm over the 2N digits of every tuple, the
    existential over the tuples that add up to z (module doc); with `log` (`in_log`), its
    logarithm, computed in log space. Above ENUMERATED digits, by the carries (`carried`)."""
    batch, width, _ = log_probs.shape
    digits = width // 2
    if digits > ENUMERATED:
        return carried(log_probs, sums, ops, log)
    sums = value_of(sums.cpu()).to(log_probs.device)
    target = tuple_sums(digits).to(log_probs.device)
    match = target.unsqueeze(0) == sums.view(-1, *[1] * width)  # (B, 10, ..., 10)
    shape = [batch] + [1] * width
    if log:  # the product t-norm: a tuple's log-truth is the sum of its digits' logs
        total = sum(
            log_probs[:, i].reshape(*shape[: i + 1], 10, *shape[i + 2 :]) for i in range(width)
        )
        kind, p = _existential(ops)
        total = (p * total).masked_fill(~match, float("-inf")).flatten(1)
        if kind == "maximum":
            return total.amax(-1)
        joined = total.logsumexp(-1)
        return joined if kind == "bounded_sum" else (joined - width * math.log(10.0)) / p
    probs = log_probs.exp()
    truth = probs[:, 0].reshape(batch, 10, *[1] * (width - 1))
    for i in range(1, width):
        truth = ops.tnorm(truth, probs[:, i].reshape(*shape[: i + 1], 10, *shape[i + 2 :]))
    return ops.exists(torch.where(match, truth, 0.0).flatten(1), dim=-1)


def _existential(ops: OperatorSet) -> tuple[str, float]:
    """The existential aggregator's name and the power its log-space form scales by (the
    generalized mean's p, else 1)."""
    kind = ops.configs["exists"]["name"]
    p = float(ops.configs["exists"].get("p") or 1.0) if kind == "generalized_mean" else 1.0
    return kind, p


def factorizes(ops: OperatorSet) -> bool:
    """Whether the pair (existential, t-norm) distributes like a semiring (FACTORIZING)."""
    exists, tnorm = ops.configs["exists"]["name"], ops.configs["tnorm"]["name"]
    return exists in FACTORIZING and FACTORIZING[exists] in (None, tnorm)


def check_digits(ops: OperatorSet, digits: int) -> None:
    """More than ENUMERATED digits need a factorizing pair (ValueError naming them)."""
    if digits > ENUMERATED and not factorizes(ops):
        pairs = ", ".join(f"exists={e} with {'any t-norm' if t is None else f'tnorm={t}'}"
                          for e, t in FACTORIZING.items())  # fmt: skip
        raise ValueError(
            f"task.digits={digits}: exists={ops.configs['exists']['name']} with "
            f"tnorm={ops.configs['tnorm']['name']} is computed only by enumerating the 10^(2N) "
            f"digit tuples, feasible up to {ENUMERATED} digits; above, the pairs that factorize "
            f"over the carries: {pairs}"
        )


def carried(log_probs: Tensor, sums: Tensor, ops: OperatorSet, log: bool) -> Tensor:
    """The valuation of `sum_valuation` position by position from the least significant digit,
    over the carry into the next (0 or 1): at each position the existential over the digit pairs
    (a, b) and the incoming carry with a + b + carry = z_i + 10 carry_out, joined by the t-norm;
    the carry out of the last position must be the sum's leading digit. Exact for the pairs of
    FACTORIZING (docs/tasks.md); linear in N. With `log` its logarithm, in log space throughout
    (a maximum of sums of logs, or a log-sum-exp of p times them); the bounded sum and the
    generalized mean are summed in log space either way (their value is taken at the end).
    In log space every position's carry-in -> carry-out table comes from one batched op over
    all positions (`transitions`); only the 2 x 2 steps along the carries are sequential."""
    kind, p = _existential(ops)
    if not (log or kind != "maximum"):
        return _carried_values(log_probs, sums, ops)
    batch, width, _ = log_probs.shape
    digits = width // 2
    reduce = (
        (lambda t, dim: t.amax(dim)) if kind == "maximum" else (lambda t, dim: t.logsumexp(dim))
    )
    table = transitions(log_probs, sums, p, reduce)  # (B, N, carry in, carry out)
    state = log_probs.new_tensor([0.0, IMPOSSIBLE]).expand(batch, 2)
    for i in reversed(range(digits)):
        state = reduce(state.unsqueeze(2) + table[:, i], 1)
    last = state.gather(1, sums[:, :1]).squeeze(1)  # the carry out is the leading digit
    if kind == "generalized_mean":  # the mean over all 10^(2N) tuples, then its p-th root
        last = (last - width * math.log(10.0)) / p
    return last if log else last.exp()


def transitions(log_probs: Tensor, sums: Tensor, p: float, reduce) -> Tensor:
    """Each position's log-valuation (B, N, 2, 2) of going from carry in c to carry out c':
    `reduce` (log-sum-exp or maximum) over the digit pairs (a, b) with a + b + c = z_i + 10 c'
    of p (log P(a) + log P(b))."""
    batch, width, _ = log_probs.shape
    digits = width // 2
    device = log_probs.device
    pair = p * digit_pairs(log_probs)
    a, b = torch.arange(10, device=device).view(10, 1), torch.arange(10, device=device)
    column = (a + b).flatten().view(1, 1, 1, 1, 100) + torch.arange(2, device=device).view(
        1, 1, 2, 1, 1
    )  # a + b + carry in
    out_carry = torch.arange(2, device=device).view(1, 1, 1, 2, 1)
    z = sums[:, 1:].view(batch, digits, 1, 1, 1)
    match = (column % 10 == z) & (column // 10 == out_carry)  # (B, N, 2, 2, 100)
    return reduce(pair.view(batch, digits, 1, 1, 100).masked_fill(~match, IMPOSSIBLE), -1)


def digit_pairs(log_probs: Tensor) -> Tensor:
    """Every position's log-probability of each digit pair (B, N, 100): digit a of x and digit b
    of y at a * 10 + b."""
    digits = log_probs.shape[1] // 2
    return (log_probs[:, :digits].unsqueeze(3) + log_probs[:, digits:].unsqueeze(2)).flatten(2)


def _carried_values(log_probs: Tensor, sums: Tensor, ops: OperatorSet) -> Tensor:
    """`carried` for the maximum with any t-norm on values (not in log space): at each position
    the maximum over the digit pairs and the carry in of T(T(state, P(a)), P(b))."""
    batch, width, _ = log_probs.shape
    digits = width // 2
    a, b = torch.arange(10, device=log_probs.device).view(10, 1), torch.arange(10).view(1, 10)
    column = [a + b.to(a.device) + c for c in (0, 1)]  # (10, 10): the column's total by carry in
    state = log_probs.new_tensor([1.0, 0.0]).expand(batch, 2)
    probs = log_probs.exp()
    for i in reversed(range(digits)):
        z = sums[:, i + 1].view(batch, 1, 1)
        out = []
        for carry_out in (0, 1):
            terms = []
            for carry_in in (0, 1):
                match = (column[carry_in] % 10 == z) & (column[carry_in] // 10 == carry_out)
                joined = ops.tnorm(
                    ops.tnorm(state[:, carry_in].view(batch, 1, 1), probs[:, i].unsqueeze(2)),
                    probs[:, digits + i].unsqueeze(1),
                )
                terms.append(torch.where(match, joined, 0.0).flatten(1).amax(-1))
            out.append(torch.stack(terms, -1).amax(-1))
        state = torch.stack(out, -1)
    return state.gather(1, sums[:, :1]).squeeze(1)  # the carry out is the leading digit


def digit_marginals(log_probs: Tensor) -> Tensor:
    """The log-probability of each digit of the sum (B, N + 1, 10), most significant first: at
    each position from the least significant, the distribution of a + b + carry in (0..19) from
    the digit pairs' and the incoming carry's, which gives the column's digit and the carry out;
    the leading digit is the last carry (0 or 1)."""
    batch, width, _ = log_probs.shape
    digits = width // 2
    a, b = torch.arange(10, device=log_probs.device).view(10, 1), torch.arange(10).view(1, 10)
    total = (a + b.to(a.device)).view(1, 100)
    to_total = torch.where(total == torch.arange(19, device=a.device).view(19, 1), 0.0, IMPOSSIBLE)
    to_total = to_total.to(log_probs.dtype)  # (19, 100): log of "pair (a, b) adds up to k"
    never = log_probs.new_full((batch, 1), IMPOSSIBLE)
    carry = torch.cat([log_probs.new_zeros(batch, 1), never], -1)
    # every position's distribution of a + b (B, N, 19) at once; only the carries are sequential
    all_totals = (digit_pairs(log_probs).unsqueeze(2) + to_total).logsumexp(-1)
    out = []
    for i in reversed(range(digits)):
        totals = all_totals[:, i]
        columns = torch.logaddexp(  # (B, 20): with carry in 0, and shifted by one with 1
            torch.cat([totals + carry[:, :1], never], -1),
            torch.cat([never, totals + carry[:, 1:]], -1),
        ).view(batch, 2, 10)  # [carry out, digit]
        out.append(columns.logsumexp(1))
        carry = columns.logsumexp(2)
    out.append(torch.cat([carry, log_probs.new_full((batch, 8), IMPOSSIBLE)], -1))
    return torch.stack(out[::-1], 1)


def in_log(ops: OperatorSet, valuation: str = "log") -> bool:
    """Whether the valuation is computed as its logarithm: the exact pair (product, bounded sum)
    always, the product with the maximum or the generalized mean under `valuation` = "log"."""
    tnorm, exists = ops.configs["tnorm"]["name"], ops.configs["exists"]["name"]
    if tnorm != "product" or exists not in FACTORIZING:
        return False
    return exists == "bounded_sum" or valuation == "log"


def dfl_loss(valuation: Tensor, ops: OperatorSet, log: bool) -> Tensor:
    """-forall over the batch (Eq. "lossrl"); a log-valuation under the log-product aggregator
    is used as the log it is (no floor), otherwise its value is aggregated."""
    forall = ops.configs["forall"]
    if log and forall["name"] == "log_product":
        return -(valuation.mean() if forall.get("reduction") == "mean" else valuation.sum())
    return -ops.forall(valuation.exp() if log else valuation, dim=0)


def digits_loss(log_probs: Tensor, sums: Tensor) -> Tensor:
    """The ablation `task.loss: digits`: the mean over the batch of the cross-entropy summed
    over the N + 1 digits of the sum, each from its marginal (`digit_marginals`)."""
    marginals = digit_marginals(log_probs)
    return -marginals.gather(2, sums.unsqueeze(-1)).squeeze(-1).sum(-1).mean()
