"""The Neural Tensor Network of Section 9.3 (Eq. NTN) and `DFLNet`: a digit network
(`nets.py`) with one NTN head per binary predicate."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from dfl_bench.checks import layer_width
from dfl_bench.tasks.mnist.nets import EMBED_DIM, build_net


class _TanhContract(torch.autograd.Function):
    """u^T tanh(z) over dim -2 of z (..., b, k, b), with a hand-written backward (fewer passes
    over the large z than autograd's). On the CPU tanh(z) = 2 sigmoid(2z) - 1 (abs. error ~1e-7):
    torch's sigmoid is vectorized there and its tanh is not."""

    generate_vmap_rule = True

    @staticmethod
    def forward(z: Tensor, u: Tensor) -> tuple[Tensor, Tensor]:
        if z.device.type == "cpu":
            y = torch.sigmoid(z * 2.0).mul_(2.0).sub_(1.0)
        else:
            y = torch.tanh(z)
        return torch.matmul(u, y), y

    @staticmethod
    def setup_context(ctx, inputs, output) -> None:
        ctx.save_for_backward(inputs[1], output[1])
        ctx.mark_non_differentiable(output[1])

    @staticmethod
    def backward(ctx, grad: Tensor, _: Tensor) -> tuple[Tensor, Tensor]:
        u, y = ctx.saved_tensors
        g = grad.unsqueeze(-2)
        grad_u = torch.einsum("...kj,...j->k", y, grad)
        grad_z = (y * y).neg_().add_(1.0).mul_(u.unsqueeze(-1)).mul_(g)
        return grad_z, grad_u


class NTN(nn.Module):
    """Eq. NTN: logit of p(R | x1, x2) = u^T tanh(e1^T W^[1:k] e2 + V [e1; e2] + b), for all pairs.

    `forward(E)` with E of shape (..., b, d) gives the (..., b, b) logits of every ordered pair
    (i, j) without materializing the b*b concatenated embeddings. With e' = [e; 1] and
    W'_k = [[W_k, V1_k^T], [V2_k, b_k]] the pre-activation e1^T W_k e2 + V1_k e1 + V2_k e2 + b_k
    is e1'^T W'_k e2': two matrix products over all pairs, nothing broadcast.
    W is stored as (d, k, d), V as (k, 2d) = [V1, V2]. `bias=True` adds a scalar c to the logit,
    u^T tanh(...) + c: the authors' code's head (`SameNet.lastfc = nn.Linear(k, 1)`, k = 10).
    k (`model.ntn_k`): a whole number of slices in [1, checks.MAX_WIDTH] (the paper's text has
    k = 50, its code 10); W holds dim * k * dim weights, a step's pre-activations b * k * b.
    """

    def __init__(self, dim: int = EMBED_DIM, k: int = 50, bias: bool = False) -> None:
        super().__init__()
        layer_width(k, "model.ntn_k")
        layer_width(dim, "the NTN's embedding width")
        bound = dim**-0.5
        self.W = nn.Parameter(torch.empty(dim, k, dim).uniform_(-bound, bound))
        self.V = nn.Parameter(torch.empty(k, 2 * dim).uniform_(-bound, bound))
        self.b = nn.Parameter(torch.empty(k).uniform_(-bound, bound))
        self.u = nn.Parameter(torch.empty(k).uniform_(-(k**-0.5), k**-0.5))
        # drawn after u, so that bias=False draws exactly what it drew before the option existed
        self.c = nn.Parameter(torch.empty(()).uniform_(-(k**-0.5), k**-0.5)) if bias else None

    def _output(self, logits: Tensor) -> Tensor:
        """The logits plus the output bias c, if the head has one."""
        return logits if self.c is None else logits + self.c

    def augmented(self) -> Tensor:
        """W' of shape (d+1, k, d+1): W, with V1^T as the last column, [V2, b] as the last row."""
        d = self.W.shape[0]
        top = torch.cat([self.W, self.V[:, :d].T.unsqueeze(-1)], dim=-1)
        bottom = torch.cat([self.V[:, d:], self.b.unsqueeze(-1)], dim=-1).unsqueeze(0)
        return torch.cat([top, bottom], dim=0)

    def forward(self, e: Tensor) -> Tensor:
        """(..., b, d) embeddings -> (..., b, b) logits, entry (i, j) for the pair (x_i, x_j)."""
        *lead, b, d = e.shape
        k = self.W.shape[1]
        ea = torch.cat([e, e.new_ones(*lead, b, 1)], dim=-1)  # (..., b, d+1)
        ew = (ea @ self.augmented().view(d + 1, k * (d + 1))).view(*lead, b * k, d + 1)
        z = (ew @ ea.transpose(-1, -2)).view(*lead, b, k, b)  # [i, k, j] = e_i'^T W'_k e_j'
        return self._output(_TanhContract.apply(z, self.u)[0])


class MaterializedNTN(NTN):
    """Eq. NTN the plain way: all b*b pairs concatenated, per-pair bilinear (tests, benchmark)."""

    def forward(self, e: Tensor) -> Tensor:
        """(b, d) embeddings -> (b, b) logits via the b*b materialized pairs."""
        b, d = e.shape
        e1 = e.repeat_interleave(b, dim=0)
        e2 = e.repeat(b, 1)
        bilinear = F.bilinear(e1, e2, self.W.transpose(0, 1))
        hidden = torch.tanh(bilinear + F.linear(torch.cat([e1, e2], dim=1), self.V, self.b))
        return self._output((hidden @ self.u).view(b, b))


class DFLNet(nn.Module):
    """The digit network (`digits`, built from `net`, a conf/net spec; the paper's when None)
    plus one NTN head per binary predicate (e.g. `same`, `sum9`) over its embedding, with k
    slices and, if `ntn_bias`, an output bias (`NTN`)."""

    def __init__(
        self,
        predicates: tuple[str, ...] = (),
        ntn_k: int = 50,
        ntn_bias: bool = False,
        net: Mapping[str, Any] | None = None,
    ) -> None:
        super().__init__()
        self.digits = build_net(net)
        width = self.digits.EMBEDDING
        if predicates and width is None:
            raise ValueError(
                f"net {type(self.digits).__name__} returns no embedding, and the NTN heads of "
                f"{list(predicates)} read one: choose a network with one (net=paper, lenet, "
                "bn_wide) or a knowledge base without binary predicates (kb=ce_only)"
            )
        self.heads = nn.ModuleDict({p: NTN(width, ntn_k, ntn_bias) for p in predicates})

    def forward(
        self, x: Tensor, generator: torch.Generator | None = None
    ) -> tuple[Tensor, Tensor | None]:
        """Images -> (class logits, embeddings); dropout drawn from `generator`."""
        return self.digits(x, generator)

    def pair_logits(self, embedding: Tensor) -> dict[str, Tensor]:
        """All-pairs logits (..., b, b) of each binary predicate head."""
        return {name: head(embedding) for name, head in self.heads.items()}
