"""Reproducer for negative-dimension.

`python repro.py`: a 1-D convolutional classifier sizes its head with a hand formula for
the convolution stack's output length, fed with `input_length` from the config. The
config was copied from another dataset and says 24 samples, shorter than what three
stride-2 convolutions of width 9 need, so the formula gives a negative length and
`nn.Linear(channels * length, classes)` raises `RuntimeError: Trying to create tensor
with negative dimension`.
`python repro.py --fixed`: the head's width is measured by running the convolution stack
once on a real window of the data (256 samples); the model then classifies every window.
"""

import sys

import torch
import torch.nn.functional as F
from torch import nn

FIXED = "--fixed" in sys.argv[1:]
CONFIG = {"input_length": 24, "channels": 16, "kernel": 9, "stride": 2, "layers": 3, "classes": 5}

torch.manual_seed(0)
windows = torch.randn(12, 1, 256)  # the data: 12 windows of 256 samples, one channel


def features(config: dict) -> nn.Sequential:
    layers: list[nn.Module] = []
    in_ch = 1
    for _ in range(config["layers"]):
        layers += [nn.Conv1d(in_ch, config["channels"], config["kernel"], config["stride"]), nn.ReLU()]
        in_ch = config["channels"]
    return nn.Sequential(*layers)


def head_width(config: dict, feature_stack: nn.Sequential) -> int:
    """The hand formula: output length of the convolution stack for `input_length`."""
    length = config["input_length"]
    for _ in range(config["layers"]):
        length = (length - config["kernel"]) // config["stride"] + 1
    print("computed output length:", length)
    return config["channels"] * length


if FIXED:
# --- fix: start
    def head_width(config: dict, feature_stack: nn.Sequential) -> int:
        """Measure it: run the stack once on one real window of the data."""
        with torch.no_grad():
            width = feature_stack(windows[:1]).flatten(1).shape[1]
        print("measured head width:", width)
        return width
# --- fix: end

feature_stack = features(CONFIG)
head = nn.Linear(head_width(CONFIG, feature_stack), CONFIG["classes"])
logits = head(feature_stack(windows).flatten(1))
print("logits:", tuple(logits.shape))

# --- check: start
# Reference: the same weights applied with the functional ops, window by window.
convs = [m for m in feature_stack if isinstance(m, nn.Conv1d)]
for i, window in enumerate(windows):
    x = window.unsqueeze(0)
    for conv in convs:
        x = F.relu(F.conv1d(x, conv.weight, conv.bias, stride=CONFIG["stride"]))
    torch.testing.assert_close(logits[i], F.linear(x.flatten(), head.weight, head.bias))
assert logits.shape == (len(windows), CONFIG["classes"])  # every window classified
print(f"check: the head takes all {head.in_features} features; logits of all {len(windows)} windows match")
# --- check: end
