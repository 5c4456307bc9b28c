"""Reproducer for autograd-view-modified-inplace.

`python repro.py`: a one-step FGSM attack needs the gradient of the loss with respect to
the input image, so the image requires grad. The preprocessing resizes it and then
normalises it channel by channel with a widely copied idiom:
`for channel, m, s in zip(image, mean, std): channel.sub_(m).div_(s)`. Iterating over a
tensor calls `unbind`, which returns several views of one storage; autograd cannot
rewrite its graph for an in-place change to one of them, so the first `sub_` raises.
`python repro.py --fixed`: the normalisation is written out of place with broadcasting,
`(image - mean[:, None, None]) / std[:, None, None]`, and the attack runs.
"""

import copy
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

FIXED = "--fixed" in sys.argv[1:]
torch.manual_seed(0)

MEAN = torch.tensor([0.485, 0.456, 0.406])
STD = torch.tensor([0.229, 0.224, 0.225])


def normalize(image: torch.Tensor) -> torch.Tensor:
    """Per-channel in-place normalisation, a widely copied transform idiom."""
    for channel, m, s in zip(image, MEAN, STD):  # zip iterates `image` via unbind()
        channel.sub_(m).div_(s)
    return image


reference_normalize = normalize  # the idiom is fine on a tensor that does not require grad
if FIXED:
    # --- fix: start
    def normalize(image: torch.Tensor) -> torch.Tensor:
        """Same arithmetic, out of place: no view of `image` is ever written."""
        return (image - MEAN[:, None, None]) / STD[:, None, None]
    # --- fix: end


model = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1),
                      nn.Flatten(), nn.Linear(8, 10)).eval()


def attack_loss(image: torch.Tensor, preprocess, net: nn.Module = model) -> torch.Tensor:
    resized = F.interpolate(image[None], size=(32, 32), mode="bilinear", align_corners=False)[0]
    return F.cross_entropy(net(preprocess(resized)[None]), label)


x = torch.rand(3, 40, 40, requires_grad=True)  # the image being attacked
label = torch.tensor([3])
first_channel = next(iter(x * 1.0))
print(f"iterating the image yields views: grad_fn={type(first_channel.grad_fn).__name__} "
      f"_is_view={first_channel._is_view()}")

loss = attack_loss(x, normalize)
loss.backward()
x_adv = (x + 8 / 255 * x.grad.sign()).clamp(0, 1).detach()
print(f"loss {loss.item():.4f}; |grad| mean {x.grad.abs().mean():.2e}; "
      f"max perturbation {(x_adv - x).abs().max():.4f}")

# --- check: start
with torch.no_grad():
    image = x.detach()
    reference_loss = attack_loss(image.clone(), reference_normalize)  # in place, grad off
    torch.testing.assert_close(loss.detach(), reference_loss)
    # x.grad against central differences along a random direction, in float64
    model64, image64, direction = copy.deepcopy(model).double(), image.double(), torch.randn_like(image)
    h = 1e-4
    slope = (attack_loss(image64 + h * direction, reference_normalize, model64)
             - attack_loss(image64 - h * direction, reference_normalize, model64)) / (2 * h)
    torch.testing.assert_close((x.grad * direction).sum().double(), slope, rtol=2e-2, atol=0)
    assert attack_loss(x_adv, reference_normalize) > reference_loss  # the attack raised the loss
print("check: loss equals the in-place idiom's on a detached copy; x.grad matches finite differences")
# --- check: end
