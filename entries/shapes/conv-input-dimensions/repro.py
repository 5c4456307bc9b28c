"""Reproducer for conv-input-dimensions.

`python repro.py`: a frame-level CNN (`nn.Conv2d` layers, built for batches of images
`(N, C, H, W)`) scores short video clips. The loader yields clips as `(B, T, C, H, W)`:
2 clips of 4 RGB frames. Passed as they are, the first `Conv2d` finds a 5-D tensor and
raises `RuntimeError: Expected 3D (unbatched) or 4D (batched) input to conv2d, but got
input of size: [2, 4, 3, 16, 16]`.
`python repro.py --fixed`: the clip and frame dimensions are folded into one batch of
`B * T` images for the CNN, and its output is unfolded back to `(B, T, ...)` and averaged
over the frames, so each clip gets the mean of its own frames' scores.
"""

import sys

import torch
from torch import nn

FIXED = "--fixed" in sys.argv[1:]
torch.manual_seed(0)

frame_cnn = nn.Sequential(
    nn.Conv2d(3, 8, kernel_size=3, padding=1),  # weight [8, 3, 3, 3]: wants (N, 3, H, W)
    nn.ReLU(),
    nn.AdaptiveAvgPool2d(1),
    nn.Flatten(),
    nn.Linear(8, 5),  # 5 action classes per frame
)
clips = torch.randn(2, 4, 3, 16, 16)  # (B, T, C, H, W): 2 clips of 4 RGB frames


def score_clips(clips: torch.Tensor) -> torch.Tensor:
    return frame_cnn(clips).mean(dim=1)  # the CNN is handed (B, T, C, H, W)


if FIXED:
# --- fix: start
    def score_clips(clips: torch.Tensor) -> torch.Tensor:
        """Run the 2-D CNN on every frame: fold (B, T) into one batch, then unfold."""
        b, t = clips.shape[:2]
        frame_scores = frame_cnn(clips.flatten(0, 1))  # (B*T, C, H, W) -> (B*T, 5)
        return frame_scores.unflatten(0, (b, t)).mean(dim=1)  # (B, T, 5) -> (B, 5)
# --- fix: end

with torch.no_grad():
    scores = score_clips(clips)
print(f"clip scores {tuple(scores.shape)}")

# --- check: start
# Reference: each frame through the CNN on its own, averaged over its clip.
with torch.no_grad():
    expected = torch.stack([
        torch.stack([frame_cnn(frame[None])[0] for frame in clip]).mean(dim=0)
        for clip in clips
    ])
torch.testing.assert_close(scores, expected)
print("check: each clip's score is the mean of its own frames' scores, frame by frame")
# --- check: end
