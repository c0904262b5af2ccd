"""Light augmentation of the training images, on the batch in torch (torchvision stays
optional): each image rotated by an angle drawn in [-degrees, degrees] and shifted by up to
`shift` pixels along each axis, drawn from the run's generator. Off by default (`augment:` in
conf/config.yaml, 0 and 0); the evaluation sees the images as they are."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import torch
import torch.nn.functional as F
from torch import Tensor

from dfl_bench.tasks.values import LIMITS  # its keys and their bounds, checked there


def is_on(augment: Mapping[str, Any] | None) -> bool:
    """Whether `augment` changes any image."""
    return any((augment or {}).get(key, 0.0) > 0 for key in LIMITS)


def augmented(
    x: Tensor, augment: Mapping[str, Any] | None, generator: torch.Generator | None
) -> Tensor:
    """(n, 1, 28, 28) images, each rotated and shifted at random (module doc); `x` itself when
    `augment` is off (nothing is drawn then). The border's value fills what moves in."""
    if not is_on(augment):
        return x
    n, device = len(x), x.device
    draws = torch.rand(n, 3, device=device, generator=generator).mul_(2).sub_(1)  # in [-1, 1]
    angle = draws[:, 0] * math.radians(augment.get("degrees", 0.0))
    offset = draws[:, 1:] * (2 * augment.get("shift", 0.0) / x.shape[-1])  # pixels -> [-1, 1]
    cos, sin = angle.cos(), angle.sin()
    theta = torch.stack(
        [torch.stack([cos, -sin, offset[:, 0]], 1), torch.stack([sin, cos, offset[:, 1]], 1)], 1
    )
    grid = F.affine_grid(theta.to(x.dtype), list(x.shape), align_corners=False)
    return F.grid_sample(x, grid, padding_mode="border", align_corners=False)
