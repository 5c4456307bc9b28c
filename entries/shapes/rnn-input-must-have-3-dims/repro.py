"""Reproducer for rnn-input-must-have-3-dims.

`python repro.py`: an image-captioning decoder greedily decodes three words for a batch
of 4 images. At each step it hands its `batch_first` LSTM the current word vectors, one
per image, as a (batch, features) tensor, with the carried state (layers, batch, hidden).
torch 0.4 to 1.10 rejected the 2-D input ("input must have 3 dimensions, got 2"); since
1.11 a 2-D input means one unbatched sequence, so the 3-D state is refused:
"For unbatched 2-D input, hx and cx should also be 2-D but got (3-D, 3-D) tensors".
`python repro.py --fixed`: each step's input gets its time axis, (batch, 1, features),
as the decoder means: one time step for each of the 4 images.
"""

import sys

import torch
from torch import nn

FIXED = "--fixed" in sys.argv[1:]

torch.manual_seed(0)
BATCH, EMBED, HIDDEN, VOCAB, STEPS = 4, 6, 10, 12, 3
embed = nn.Embedding(VOCAB, EMBED)
lstm = nn.LSTM(EMBED, HIDDEN, batch_first=True)
head = nn.Linear(HIDDEN, VOCAB)
image_features = torch.randn(BATCH, EMBED)  # one vector per image, from the encoder


def step_input(vectors: torch.Tensor) -> torch.Tensor:
    """What the decoder hands the LSTM for one step: one vector per image."""
    return vectors  # (batch, features)


if FIXED:
# --- fix: start
    def step_input(vectors: torch.Tensor) -> torch.Tensor:
        # batch_first=True reads (batch, time, features): one time step per image
        return vectors.unsqueeze(1)
# --- fix: end

with torch.no_grad():
    state = (torch.zeros(1, BATCH, HIDDEN), torch.zeros(1, BATCH, HIDDEN))
    vectors, words = image_features, []
    for _ in range(STEPS):
        out, state = lstm(step_input(vectors), state)
        word = head(out.reshape(BATCH, HIDDEN)).argmax(dim=-1)
        words.append(word)
        vectors = embed(word)
    captions = torch.stack(words, dim=1)
print("captions:", captions.tolist())

# --- check: start
# reference: an LSTMCell with the same weights decoding each image on its own
cell = nn.LSTMCell(EMBED, HIDDEN)
with torch.no_grad():
    cell.weight_ih.copy_(lstm.weight_ih_l0)
    cell.weight_hh.copy_(lstm.weight_hh_l0)
    cell.bias_ih.copy_(lstm.bias_ih_l0)
    cell.bias_hh.copy_(lstm.bias_hh_l0)
    for i in range(BATCH):
        h, c = torch.zeros(1, HIDDEN), torch.zeros(1, HIDDEN)
        x, expected = image_features[i : i + 1], []
        for _ in range(STEPS):
            h, c = cell(x, (h, c))
            w = head(h).argmax(dim=-1)
            expected.append(int(w))
            x = embed(w)
        assert captions[i].tolist() == expected, (i, captions[i].tolist(), expected)
        torch.testing.assert_close(state[0][0, i], h[0], rtol=1e-5, atol=1e-6)
assert captions.shape == (BATCH, STEPS)
print("check: each of the 4 images got its own 3-word caption, as an LSTMCell decodes it alone")
# --- check: end
