"""Reproducer for cat-sizes-must-match.

`python repro.py`: a two-level U-Net (conv, 2x2 max-pool, conv, 2x2 max-pool, bottleneck,
then 2x2 transposed convs back up) segments a 1x34x34 image. 34 is not divisible by
2^2: pooling floors 34 -> 17 -> 8, the first upsampling doubles 8 back to 16, and
`torch.cat([skip, up], dim=1)` joins a 17x17 skip feature with a 16x16 upsampled one:
`Sizes of tensors must match except in dimension 1. Expected size 17 but got size 16
for tensor number 1 in the list.` The same forward under `torch.compile` fails while
tracing, with the fake-tensor wording of the check.
`python repro.py --fixed`: before each concatenation the upsampled map is zero-padded
to the skip feature's height and width, so every input size works and the output has
one prediction per input pixel.
"""

import sys
import traceback

import torch
import torch.nn.functional as F
from torch import nn

FIXED = "--fixed" in sys.argv[1:]
torch.manual_seed(0)


def match_skip(up: torch.Tensor, skip: torch.Tensor) -> torch.Tensor:
    return up  # assumes every input size is divisible by 2 ** depth


if FIXED:
# --- fix: start
    def match_skip(up: torch.Tensor, skip: torch.Tensor) -> torch.Tensor:
        """Zero-pad the upsampled map (N, C, h, w) to the skip feature's height and width."""
        dh = skip.size(-2) - up.size(-2)
        dw = skip.size(-1) - up.size(-1)
        return F.pad(up, (dw // 2, dw - dw // 2, dh // 2, dh - dh // 2))
# --- fix: end


def block(cin: int, cout: int) -> nn.Module:
    return nn.Sequential(nn.Conv2d(cin, cout, 3, padding=1), nn.ReLU())


class TinyUNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.enc1, self.enc2, self.bottom = block(1, 4), block(4, 8), block(8, 8)
        self.up2, self.dec2 = nn.ConvTranspose2d(8, 8, 2, stride=2), block(16, 4)
        self.up1, self.dec1 = nn.ConvTranspose2d(4, 4, 2, stride=2), block(8, 4)
        self.head = nn.Conv2d(4, 2, 1)

    def forward(self, x: torch.Tensor, align=None) -> torch.Tensor:
        align = align or match_skip
        s1 = self.enc1(x)                      # (N, 4, H, W)
        s2 = self.enc2(F.max_pool2d(s1, 2))    # (N, 8, H/2, W/2), floored
        b = self.bottom(F.max_pool2d(s2, 2))   # (N, 8, H/4, W/4), floored
        d2 = self.dec2(torch.cat([s2, align(self.up2(b), s2)], dim=1))
        d1 = self.dec1(torch.cat([s1, align(self.up1(d2), s1)], dim=1))
        return self.head(d1)


model = TinyUNet().eval()
image = torch.randn(2, 1, 34, 34)
with torch.no_grad():
    try:
        eager_out = model(image)
        print(f"eager: output {tuple(eager_out.shape)}")
    except RuntimeError:
        traceback.print_exc()  # keep going: show the same forward under torch.compile
    compiled_out = torch.compile(model, backend="eager")(image)
    print(f"compiled: output {tuple(compiled_out.shape)}")

# --- check: start
with torch.no_grad():
    # One prediction per input pixel, for any input size, and torch.compile agrees with eager.
    assert eager_out.shape == (2, 2, 34, 34), eager_out.shape
    torch.testing.assert_close(compiled_out, eager_out)
    for h, w in [(35, 37), (33, 40)]:
        assert model(torch.randn(1, 1, h, w)).shape == (1, 2, h, w), (h, w)
    # Reference: where sizes divide by 4 nothing is padded and the model equals the
    # plain skip concatenation.
    square = torch.randn(2, 1, 32, 32)
    torch.testing.assert_close(model(square), model(square, align=lambda up, skip: up), rtol=0, atol=0)
    # The padding only adds zero borders: the upsampled map itself is unchanged.
    s2 = model.enc2(F.max_pool2d(model.enc1(image), 2))
    up = model.up2(model.bottom(F.max_pool2d(s2, 2)))
    padded = match_skip(up, s2)
    assert padded.shape[-2:] == s2.shape[-2:] == (17, 17) and up.shape[-2:] == (16, 16)
    assert torch.equal(padded[..., :16, :16], up)
    assert not padded[..., 16:, :].any() and not padded[..., :, 16:].any()
print("check: 34x34, 35x37 and 33x40 inputs give full-size outputs; compiled equals eager; 32x32 equals the unpadded U-Net")
# --- check: end
