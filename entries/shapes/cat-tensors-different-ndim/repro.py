"""Reproducer for cat-tensors-different-ndim.

`python repro.py`: a speaker-conditioned sequence tagger (the pattern of TTS and
conditional generation models) embeds token ids to (batch, time, 16) features and looks
up one speaker embedding per sequence, (batch, 8). Its forward means to give every time
step the speaker vector with `torch.cat([tokens, speaker], dim=-1)`, but the speaker
embedding has no time dimension: `Tensors must have same number of dimensions: got 3
and 2`. The same forward under `torch.compile` fails while tracing, with the fake-tensor
wording of the check.
`python repro.py --fixed`: the speaker embedding gets its time dimension
(`unsqueeze(1)`) and is repeated along it (`expand`) before the concatenation, so each
step's feature vector is [token features, speaker features]; compiled and eager agree,
and a few training steps lower the loss.
"""

import sys
import traceback

import torch
import torch.nn.functional as F
from torch import nn

FIXED = "--fixed" in sys.argv[1:]
torch.manual_seed(0)


def per_step(speaker: torch.Tensor, steps: int) -> torch.Tensor:
    return speaker  # (N, S): one vector per sequence, no time dimension


if FIXED:
# --- fix: start
    def per_step(speaker: torch.Tensor, steps: int) -> torch.Tensor:
        """Give the (N, S) speaker embedding a time dimension: (N, steps, S), no copy."""
        return speaker.unsqueeze(1).expand(-1, steps, -1)
# --- fix: end


class SpeakerConditionedTagger(nn.Module):
    def __init__(self, vocab=50, speakers=4, d_tok=16, d_spk=8, classes=5):
        super().__init__()
        self.tok = nn.Embedding(vocab, d_tok)
        self.spk = nn.Embedding(speakers, d_spk)
        self.head = nn.Linear(d_tok + d_spk, classes)

    def features(self, ids: torch.Tensor, speaker_ids: torch.Tensor) -> torch.Tensor:
        tokens = self.tok(ids)  # (N, T, 16)
        speaker = self.spk(speaker_ids)  # (N, 8)
        return torch.cat([tokens, per_step(speaker, ids.size(1))], dim=-1)  # (N, T, 24)

    def forward(self, ids: torch.Tensor, speaker_ids: torch.Tensor) -> torch.Tensor:
        return self.head(self.features(ids, speaker_ids))


model = SpeakerConditionedTagger()
ids = torch.randint(0, 50, (4, 7))
speaker_ids = torch.tensor([0, 3, 1, 3])
tags = torch.randint(0, 5, (4, 7))

with torch.no_grad():
    try:
        eager_out = model(ids, speaker_ids)
        print(f"eager: logits {tuple(eager_out.shape)}")
    except RuntimeError:
        traceback.print_exc()  # keep going: show the same forward under torch.compile
    compiled_out = torch.compile(model, backend="eager")(ids, speaker_ids)
    print(f"compiled: logits {tuple(compiled_out.shape)}")

optimizer = torch.optim.SGD(model.parameters(), lr=0.5)
losses = []
for _ in range(5):
    loss = F.cross_entropy(model(ids, speaker_ids).flatten(0, 1), tags.flatten())
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    losses.append(loss.item())
print("train: losses " + ", ".join(f"{value:.3f}" for value in losses))

# --- check: start
with torch.no_grad():
    feats = model.features(ids, speaker_ids)
    assert feats.shape == (4, 7, 24), feats.shape
    # Reference built another way: one 2-D concatenation per time step, stacked along time.
    tokens, speaker = model.tok(ids), model.spk(speaker_ids)
    reference = torch.stack([torch.cat([tokens[:, t], speaker], dim=1) for t in range(7)], dim=1)
    torch.testing.assert_close(feats, reference, rtol=0, atol=0)
    # And by indexing the embedding tables: each step holds its own token's vector and its
    # sequence's speaker vector, so no sample's speaker leaked into another.
    for n in range(4):
        for t in range(7):
            assert torch.equal(feats[n, t, :16], model.tok.weight[ids[n, t]])
            assert torch.equal(feats[n, t, 16:], model.spk.weight[speaker_ids[n]])
    torch.testing.assert_close(compiled_out, eager_out)
assert losses[-1] < losses[0], losses
print("check: (4, 7, 24) features equal the stacked per-step concatenation and the embedding rows; compiled equals eager; loss fell")
# --- check: end
