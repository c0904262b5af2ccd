"""R copies of the Section 9.3 network (CNN + NTN heads) as one module for a GPU: each parameter
stacked on a leading run dimension, dropout masks passed in (nothing is drawn here). The CNN runs
as grouped convolutions and batched matrix products and the NTN heads vmapped over their own
code (`model.NTN`): one kernel per layer for all runs. (On a CPU, where a step is bound by
arithmetic, a stack trains each run's own `DFLNet` instead: `training.module`.)

Run r of the stack computes what `model.DFLNet` with run r's parameters computes; grouped and
batched kernels may round differently from the single-run ones (differences of ~1e-6).
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Sequence

import torch
import torch.nn.functional as F
from torch import Tensor, nn
from torch.func import functional_call, stack_module_state, vmap

from dfl_bench.tasks.mnist.nets import CONV2_MAPS
from dfl_bench.tasks.mnist.ntn import DFLNet


def _key(name: str) -> str:
    """A DFLNet parameter name as a ParameterDict key (no dots)."""
    return name.replace(".", "/")


class StackNet(nn.Module):
    """The parameters of R `DFLNet`s stacked on dim 0 (same predicates and NTN size)."""

    def __init__(self, nets: Sequence[DFLNet]) -> None:
        super().__init__()
        if not nets:
            raise ValueError("a stack needs at least one network")
        shapes = [[(n, p.shape) for n, p in net.named_parameters()] for net in nets]
        if any(s != shapes[0] for s in shapes):
            raise ValueError("stacked networks must have the same heads and sizes")
        params, _ = stack_module_state(list(nets))
        self.names = list(params)
        self.stacked = nn.ParameterDict(
            {_key(n): nn.Parameter(p.detach().contiguous()) for n, p in params.items()}
        )
        self.predicates = tuple(nets[0].heads)
        # the heads' code without their storage: vmapped with each run's parameters
        self._heads = (copy.deepcopy(nets[0].heads).to("meta"),)

    @property
    def runs(self) -> int:
        """R, the number of stacked runs."""
        return self.stacked[_key(self.names[0])].shape[0]

    def param(self, name: str) -> Tensor:
        """The stacked parameter (R, ...) of a DFLNet parameter name."""
        return self.stacked[_key(name)]

    def forward(
        self, x: Tensor, masks: tuple[Tensor, Tensor] | None = None
    ) -> tuple[Tensor, Tensor]:
        """(R, n, 1, 28, 28) images -> (R, n, 10) logits, (R, n, 50) embeddings (as MnistNet);
        `masks`: (R, n, 20, 1, 1) and (R, n, 50) dropout masks, required in training mode."""
        if self.training and masks is None:
            raise ValueError("StackNet draws no dropout masks: pass each run's masks")
        p = self.param
        h = _grouped_features(x, masks[0] if self.training else None, p)  # (R, n, 320)
        embedding = F.relu(_linear(h, p("digits.fc1.weight"), p("digits.fc1.bias")))
        hidden = embedding * masks[1] if self.training else embedding
        return _linear(hidden, p("digits.fc2.weight"), p("digits.fc2.bias")), embedding

    def pair_logits(self, embedding: Tensor) -> dict[str, Tensor]:
        """All-pairs logits (R, ..., b, b) of each head, from (R, ..., b, d) embeddings."""
        out = {}
        for name in self.predicates:
            prefix = f"heads.{name}."
            params = {n[len(prefix) :]: self.param(n) for n in self.names if n.startswith(prefix)}
            out[name] = _vmapped_head(self._heads[0][name], params, embedding)
        return out

    @torch.no_grad()
    def copy_to(self, run: int, net: DFLNet) -> DFLNet:
        """Write run `run`'s parameters into `net` (for its evaluation with DFLNet's own code)."""
        for name, param in net.named_parameters():
            param.copy_(self.param(name)[run])
        return net

    @torch.no_grad()
    def poison(self, run: int) -> None:
        """Debug: fill run `run`'s first weight with NaN (as train.PoisonWeights does alone)."""
        self.param(self.names[0])[run].fill_(float("nan"))


def _vmapped_head(head: nn.Module, params: dict[str, Tensor], embedding: Tensor) -> Tensor:
    """One NTN head's code for R runs at once (vmapped over the runs)."""
    return vmap(lambda ps, e: functional_call(head, ps, (e,)))(params, embedding)


def _grouped_features(x: Tensor, maps: Tensor | None, p: Callable[[str], Tensor]) -> Tensor:
    """The CNN up to FC-50 for R runs as grouped convolutions (one kernel per layer)."""
    r, n = x.shape[:2]
    h = x.transpose(0, 1).reshape(n, r * x.shape[2], *x.shape[3:])  # runs as channel groups
    for layer in ("conv1", "conv2"):
        if layer == "conv2":
            h = F.relu(F.max_pool2d(h, 2))
        weight, bias = p(f"digits.{layer}.weight"), p(f"digits.{layer}.bias")
        h = F.conv2d(h, weight.flatten(0, 1), bias.flatten(), groups=r)
    if maps is not None:
        h = h * maps.transpose(0, 1).reshape(n, r * CONV2_MAPS, 1, 1)
    h = F.relu(F.max_pool2d(h, 2))
    return h.reshape(n, r, -1).transpose(0, 1)  # each run's flatten order


def _linear(h: Tensor, weight: Tensor, bias: Tensor) -> Tensor:
    """R linear layers at once: (R, n, in) with (R, out, in) weights and (R, out) biases."""
    return torch.baddbmm(bias.unsqueeze(1), h, weight.transpose(1, 2))
