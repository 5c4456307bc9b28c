"""Reproducer for index-put-shape-mismatch.

`python repro.py`: a vision-language model merges image features into the token
embeddings as such models do, `embeds[input_ids == IMAGE_TOKEN] = image_features`: one
feature row per image placeholder token. The data pipeline truncates every sample to
`max_length` tokens (LLaMA-Factory's `cutoff_len`, a processor's `max_length`), which
cuts placeholders of a long sample while the vision encoder still returns a row for each
patch, so the assignment raises "shape mismatch: value tensor of shape [12, 8] cannot be
broadcast to indexing result of shape [7, 8]".
`python repro.py --fixed`: `max_length` is raised to cover the longest sample, so no
placeholder is cut and each feature row has its slot.
"""

import sys

import torch

FIXED = "--fixed" in sys.argv[1:]

torch.manual_seed(0)
IMAGE_TOKEN, VOCAB, HIDDEN = 9, 16, 8
embed = torch.nn.Embedding(VOCAB, HIDDEN)
# (text before the image, image patches, text after): each patch becomes one placeholder
samples = [([1, 2, 3], 4, [4, 5]), ([1, 6, 2, 7, 3], 12, [5, 4, 6, 2])]
vision_features = [torch.randn(patches, HIDDEN) for _, patches, _ in samples]

max_length = 12
if FIXED:
# --- fix: start
    # the sequence limit covers the longest sample, image placeholders included
    max_length = max(len(before) + patches + len(after) for before, patches, after in samples)
# --- fix: end

merged = []
for (before, patches, after), features in zip(samples, vision_features):
    input_ids = torch.tensor(before + [IMAGE_TOKEN] * patches + after)[:max_length]
    with torch.no_grad():
        embeds = embed(input_ids)
        embeds[input_ids == IMAGE_TOKEN] = features
    merged.append(embeds)
print("merged sequences:", [tuple(m.shape) for m in merged])

# --- check: start
# reference: text embeddings and image features concatenated in order, nothing cut
with torch.no_grad():
    for (before, _, after), features, got in zip(samples, vision_features, merged):
        reference = torch.cat([embed(torch.tensor(before)), features, embed(torch.tensor(after))])
        torch.testing.assert_close(got, reference, rtol=0, atol=0)
print("check: every sample holds all its text tokens and every image feature row in place")
# --- check: end
