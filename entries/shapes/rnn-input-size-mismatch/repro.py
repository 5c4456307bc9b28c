"""Reproducer for rnn-input-size-mismatch.

`python repro.py`: a CNN-LSTM encoder runs a `Conv1d` over (batch, channels, time)
signals and hands its output, still (batch, channels, time), to an
`LSTM(input_size=channels, batch_first=True)`. The LSTM reads the last axis as features,
finds the 20 time steps there instead of the 8 channels, and raises
"input.size(-1) must be equal to input_size. Expected 8, got 20".
`python repro.py --fixed`: the conv output is transposed to (batch, time, channels),
the layout `batch_first=True` expects, before the LSTM.
"""

import sys

import torch
from torch import nn

FIXED = "--fixed" in sys.argv[1:]

torch.manual_seed(0)
BATCH, IN_CHANNELS, CHANNELS, STEPS, HIDDEN = 4, 3, 8, 20, 16
conv = nn.Conv1d(IN_CHANNELS, CHANNELS, kernel_size=3, padding=1)
lstm = nn.LSTM(input_size=CHANNELS, hidden_size=HIDDEN, batch_first=True)
signals = torch.randn(BATCH, IN_CHANNELS, STEPS)  # (batch, channels, time), as Conv1d takes


def to_sequence(conv_out: torch.Tensor) -> torch.Tensor:
    """What the encoder hands the LSTM."""
    return conv_out  # (batch, channels, time)


if FIXED:
# --- fix: start
    def to_sequence(conv_out: torch.Tensor) -> torch.Tensor:
        # batch_first=True reads (batch, time, features): move channels last
        return conv_out.transpose(1, 2)
# --- fix: end

with torch.no_grad():
    conv_out = torch.relu(conv(signals))
    outputs, (h_n, c_n) = lstm(to_sequence(conv_out))
print("LSTM outputs:", tuple(outputs.shape))

# --- check: start
# reference: an LSTMCell with the same weights stepped through time by hand, one time
# step's channels at a time
cell = nn.LSTMCell(CHANNELS, HIDDEN)
with torch.no_grad():
    cell.weight_ih.copy_(lstm.weight_ih_l0)
    cell.weight_hh.copy_(lstm.weight_hh_l0)
    cell.bias_ih.copy_(lstm.bias_ih_l0)
    cell.bias_hh.copy_(lstm.bias_hh_l0)
    h, c = torch.zeros(BATCH, HIDDEN), torch.zeros(BATCH, HIDDEN)
    steps = []
    for t in range(STEPS):
        h, c = cell(conv_out[:, :, t], (h, c))
        steps.append(h)
    expected = torch.stack(steps, dim=1)  # (batch, time, hidden)
assert outputs.shape == (BATCH, STEPS, HIDDEN), outputs.shape  # one output per time step
torch.testing.assert_close(outputs, expected, rtol=1e-5, atol=1e-6)
torch.testing.assert_close(h_n[0], h, rtol=1e-5, atol=1e-6)
print("check: the LSTM ran over the 20 time steps of 8 channels, as a step-by-step LSTMCell does")
# --- check: end
