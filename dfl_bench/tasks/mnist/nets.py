"""Digit networks, the `net` config group: a network is one class (a `DigitNet`) and one yaml
(conf/net/<name>.yaml, or a `net/` folder on Hydra's search path) whose `_target_` names the
class and whose other keys are its constructor's arguments. Both MNIST tasks train the one their
config names: `paper` (the DFL paper's, `MnistNet`: the default), `lenet` (the LeNet that
DeepProbLog and the field's MNIST-addition systems train), `bn_wide` (wider filters with
batch norm and dropout) and `bn_deep` (a third convolution, 3x3 pairs after the first pool).

A network maps (n, 1, 28, 28) images to (n, 10) digit logits and an embedding of width
`EMBEDDING` (None: it returns none), drawing any dropout from the run's `generator` (so a run's
draws depend on nothing else the process runs). The paper's task reads the embedding with its
NTN heads: a network without one is refused there before training.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache
from typing import Any, ClassVar

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from dfl_bench.checks import imported
from dfl_bench.tasks.net_names import choices, targets
from dfl_bench.tasks.values import check_net

PAPER = {"_target_": "dfl_bench.tasks.mnist.nets.MnistNet", "name": "paper"}  # conf/net/paper
EMBED_DIM = 50
DROPOUT = 0.5  # both dropout layers (the paper's code: Dropout2d after conv2, dropout after FC-50)
CONV2_MAPS = 20


def dropout_masks(
    n: int, device: torch.device | str = "cpu", generator: torch.Generator | None = None
) -> tuple[Tensor, Tensor]:
    """The dropout masks of n images, scaled by 1/(1-p): per conv2 feature map (n, 20, 1, 1) and
    per FC-50 unit (n, 50), drawn in that order from `generator` (torch's global RNG if None)."""
    keep = 1.0 - DROPOUT
    maps = torch.empty(n, CONV2_MAPS, 1, 1, device=device).bernoulli_(keep, generator=generator)
    units = torch.empty(n, EMBED_DIM, device=device).bernoulli_(keep, generator=generator)
    return maps.div_(keep), units.div_(keep)


class DigitNet(nn.Module):
    """The contract of a digit network (module doc): `forward(x, generator)` ->
    (logits (n, 10), embedding (n, EMBEDDING) or None); dropout only in training mode."""

    EMBEDDING: ClassVar[int | None] = None

    def forward(  # type: ignore[override]
        self, x: Tensor, generator: torch.Generator | None = None
    ) -> tuple[Tensor, Tensor | None]:
        raise NotImplementedError


@cache
def net_class(target: str) -> type[DigitNet]:
    """The DigitNet class `target` (module.Class) names, else a ValueError naming the group."""
    found = imported(target, "net._target_", f"the networks of conf/net: {', '.join(choices())}")
    if not (isinstance(found, type) and issubclass(found, DigitNet)):
        raise ValueError(
            f"net._target_={target!r} is not a digit network (a dfl_bench.tasks.mnist.nets."
            "DigitNet subclass)"
        )
    return found


def check_name(name: Any, cls: type[DigitNet]) -> None:
    """A ValueError where `name` is no text, or a network of conf/net whose class is not `cls`
    (the one its `_target_` builds), or no network of conf/net while `cls` is one of theirs
    (net_names.net_refusal's rule by class): the name is hashed, the `_target_` is not, so
    another network would train under that name's hash."""
    builds = [other for other, target in targets().items() if net_class(target) is cls]
    if not isinstance(name, str) or not name:
        raise ValueError(f"net.name={name!r} names no network; valid choices: {choices()}")
    if name not in targets():
        if builds:
            raise ValueError(
                f"net.name={name!r} is no network of conf/net, and its _target_ builds net "
                f"{builds[0]!r}; valid choices: {choices()}"
            )
        return
    if net_class(targets()[name]) is not cls:
        what = repr(builds[0]) if builds else f"{cls.__name__}, no network of conf/net"
        raise ValueError(f"net.name={name!r}, but its _target_ builds net {what}")


def build_net(spec: Mapping[str, Any] | None) -> DigitNet:
    """The network a config's `net` names (`PAPER` when None), built with its arguments; its
    name must be a text, its class's where conf/net holds that name, and no other network of
    conf/net's (`check_name`)."""
    spec = dict(spec or PAPER)
    cls = net_class(str(spec.pop("_target_", PAPER["_target_"])))
    check_name(spec.pop("name", None), cls)
    try:
        return cls(**spec)
    except TypeError as err:
        raise ValueError(f"net {cls.__name__}: {err}") from None


def dropout(x: Tensor, p: float, generator: torch.Generator | None, whole: bool = False) -> Tensor:
    """Dropout with its mask drawn from `generator`, scaled by 1/(1-p); `whole` drops whole
    feature maps of (n, c, h, w) (Dropout2d)."""
    if p <= 0:
        return x
    shape = (*x.shape[:2], 1, 1) if whole else x.shape
    keep = torch.empty(shape, device=x.device, dtype=x.dtype).bernoulli_(1 - p, generator=generator)
    return x * keep.div_(1 - p)


def bn_head(
    net: nn.Module, maps: Tensor, norm: nn.Module, generator: torch.Generator | None
) -> tuple[Tensor, Tensor]:
    """The batch-norm networks' head on their last feature maps: whole-map dropout `p_conv`,
    FC `fc1` with batch norm `norm` and ReLU (the embedding), dropout `p_fc`, FC `fc2`; dropout
    only in training mode -> (logits, embedding)."""
    if net.training:
        maps = dropout(maps, net.p_conv, generator, whole=True)
    embedding = F.relu(norm(net.fc1(maps.flatten(1))))
    hidden = dropout(embedding, net.p_fc, generator) if net.training else embedding
    return net.fc2(hidden), embedding


class MnistNet(DigitNet):
    """2 conv layers (10, 20 filters) with max pooling, FC 320 -> 50 -> 10 (Section 9.3): the
    `paper` network (conf/net/paper.yaml).

    `forward` returns the 10 class logits and the 50-d embedding (the FC-50 activation before
    dropout), as in the paper's public code. In training mode dropout multiplies by masks drawn
    from `generator` (`dropout_masks`; torch's global RNG when None); in eval mode there is none.
    """

    EMBEDDING = EMBED_DIM

    def __init__(self) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(1, 10, kernel_size=5)
        self.conv2 = nn.Conv2d(10, CONV2_MAPS, kernel_size=5)
        self.fc1 = nn.Linear(320, EMBED_DIM)
        self.fc2 = nn.Linear(EMBED_DIM, 10)
        self.to(memory_format=torch.channels_last)  # faster small convolutions on CPU

    def forward(
        self,
        x: Tensor,
        generator: torch.Generator | None = None,
        masks: tuple[Tensor, Tensor] | None = None,
    ) -> tuple[Tensor, Tensor]:
        """(n, 1, 28, 28) images -> (n, 10) logits, (n, 50) embeddings; in training mode with
        the given dropout `masks` (a StackNet's, to compare), else masks drawn from `generator`."""
        if self.training and masks is None:
            masks = dropout_masks(len(x), x.device, generator)
        x = x.contiguous(memory_format=torch.channels_last)
        h = self.conv2(F.relu(F.max_pool2d(self.conv1(x), 2)))
        h = F.relu(F.max_pool2d(h * masks[0] if self.training else h, 2))
        embedding = F.relu(self.fc1(h.flatten(1)))
        logits = self.fc2(embedding * masks[1] if self.training else embedding)
        return logits, embedding


class LeNet(DigitNet):
    """DeepProbLog's `MNIST_Net`, the field's network for MNIST addition: conv 1->6 5x5, max-pool
    2, ReLU, conv 6->16 5x5, max-pool 2, ReLU, FC 256->120->ReLU->84->ReLU->10; no dropout, no
    batch norm; 44,426 parameters. Its embedding is the 84 features before the last layer."""

    EMBEDDING = 84

    def __init__(self) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(1, 6, 5)
        self.conv2 = nn.Conv2d(6, 16, 5)
        self.fc1 = nn.Linear(256, 120)
        self.fc2 = nn.Linear(120, 84)
        self.fc3 = nn.Linear(84, 10)

    def forward(self, x: Tensor, generator: torch.Generator | None = None) -> tuple[Tensor, Tensor]:
        """(n, 1, 28, 28) images -> (n, 10) logits, (n, 84) features."""
        h = F.relu(F.max_pool2d(self.conv1(x), 2))
        h = F.relu(F.max_pool2d(self.conv2(h), 2))
        embedding = F.relu(self.fc2(F.relu(self.fc1(h.flatten(1)))))
        return self.fc3(embedding), embedding


class BnWide(DigitNet):
    """A stronger small network: conv 1->`width` 5x5 and `width`->2`width` 5x5, each with batch
    norm, ReLU and max-pool 2; whole-map dropout `p_conv`; FC 32`width`->`embedding` with batch
    norm and ReLU (the embedding), dropout `p_fc`, ->10. At width 16 about 2.3x the paper
    network's multiply-adds per image (make bench measures its step)."""

    def __init__(
        self, width: int = 16, embedding: int = 128, p_conv: float = 0.1, p_fc: float = 0.4
    ) -> None:
        super().__init__()
        check_net({"width": width, "embedding": embedding, "p_conv": p_conv, "p_fc": p_fc})
        self.EMBEDDING = embedding
        self.p_conv, self.p_fc = p_conv, p_fc
        self.conv1 = nn.Conv2d(1, width, 5, bias=False)
        self.bn1 = nn.BatchNorm2d(width)
        self.conv2 = nn.Conv2d(width, 2 * width, 5, bias=False)
        self.bn2 = nn.BatchNorm2d(2 * width)
        self.fc1 = nn.Linear(32 * width, embedding, bias=False)
        self.bn3 = nn.BatchNorm1d(embedding)
        self.fc2 = nn.Linear(embedding, 10)
        self.to(memory_format=torch.channels_last)  # faster small convolutions on the CPU

    def forward(self, x: Tensor, generator: torch.Generator | None = None) -> tuple[Tensor, Tensor]:
        """(n, 1, 28, 28) images -> (n, 10) logits, (n, embedding) features."""
        x = x.contiguous(memory_format=torch.channels_last)
        h = F.max_pool2d(F.relu(self.bn1(self.conv1(x))), 2)
        h = F.max_pool2d(F.relu(self.bn2(self.conv2(h))), 2)
        return bn_head(self, h, self.bn3, generator)


class BnDeep(DigitNet):
    """`bn_wide` with its second 5x5 convolution replaced by two 3x3 ones (the same 8x8 maps, one
    more nonlinearity): conv 1->`width` 5x5, batch norm, ReLU, max-pool 2; conv `width`->`width2`
    3x3 and `width2`->`width2` 3x3, each with batch norm and ReLU; max-pool 2; whole-map dropout
    `p_conv`; FC 16`width2`->`embedding` with batch norm and ReLU (the embedding), dropout
    `p_fc`, ->10. The design follows C. Deotte's Kaggle study "How to choose CNN architecture
    MNIST" (2018: 3x3 pairs in place of a 5x5, batch norm after every convolution, 40% dropout,
    augmentation and a decaying rate take one network to 99.6-99.7%), scaled down to a step
    within 4x the paper network's (make bench measures it)."""

    def __init__(
        self,
        width: int = 16,
        width2: int = 40,
        embedding: int = 128,
        p_conv: float = 0.1,
        p_fc: float = 0.4,
    ) -> None:
        super().__init__()
        sizes = {"width": width, "width2": width2, "embedding": embedding}
        check_net({**sizes, "p_conv": p_conv, "p_fc": p_fc})
        self.EMBEDDING = embedding
        self.p_conv, self.p_fc = p_conv, p_fc
        self.conv1 = nn.Conv2d(1, width, 5, bias=False)
        self.bn1 = nn.BatchNorm2d(width)
        self.conv2 = nn.Conv2d(width, width2, 3, bias=False)
        self.bn2 = nn.BatchNorm2d(width2)
        self.conv3 = nn.Conv2d(width2, width2, 3, bias=False)
        self.bn3 = nn.BatchNorm2d(width2)
        self.fc1 = nn.Linear(16 * width2, embedding, bias=False)
        self.bn4 = nn.BatchNorm1d(embedding)
        self.fc2 = nn.Linear(embedding, 10)
        self.to(memory_format=torch.channels_last)  # faster small convolutions on the CPU

    def forward(self, x: Tensor, generator: torch.Generator | None = None) -> tuple[Tensor, Tensor]:
        """(n, 1, 28, 28) images -> (n, 10) logits, (n, embedding) features."""
        x = x.contiguous(memory_format=torch.channels_last)
        h = F.max_pool2d(F.relu(self.bn1(self.conv1(x))), 2)
        h = F.relu(self.bn2(self.conv2(h)))
        h = F.max_pool2d(F.relu(self.bn3(self.conv3(h))), 2)
        return bn_head(self, h, self.bn4, generator)
