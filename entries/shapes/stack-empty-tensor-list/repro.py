"""Reproducer for stack-empty-tensor-list.

`python repro.py`: a preprocessing step saves one depth map per frame under
`<root>/depth/<sequence>/`; the training step reads a sequence's depth maps with a glob
built from another layout, `<root>/<sequence>/depth/`. The glob of a folder that does not
exist returns an empty list without error, and `torch.stack` of that list raises
`RuntimeError: stack expects a non-empty TensorList`.
`python repro.py --fixed`: the reader uses the layout the writer used, and refuses an
empty sequence with the path it searched; every frame's depth map is stacked in order.
"""

import glob
import os
import sys
import tempfile

import torch

FIXED = "--fixed" in sys.argv[1:]
FRAMES = 5


def write_depths(root: str, sequence: str) -> None:
    """The preprocessing step: one depth map per frame, frame i filled with i."""
    folder = os.path.join(root, "depth", sequence)
    os.makedirs(folder)
    for i in range(FRAMES):
        torch.save(torch.full((4, 6), float(i)), os.path.join(folder, f"{i:05d}.pt"))


def depth_folder(root: str, sequence: str) -> str:
    return os.path.join(root, sequence, "depth")  # the bug: not the layout the writer used


def load_depths(folder: str) -> list[torch.Tensor]:
    return [torch.load(f) for f in sorted(glob.glob(os.path.join(folder, "*.pt")))]


if FIXED:
# --- fix: start
    def depth_folder(root: str, sequence: str) -> str:
        return os.path.join(root, "depth", sequence)  # the layout write_depths() uses

    def load_depths(folder: str) -> list[torch.Tensor]:
        files = sorted(glob.glob(os.path.join(folder, "*.pt")))
        if not files:
            raise FileNotFoundError(f"no depth maps in {folder!r}: run the depth step first")
        return [torch.load(f) for f in files]
# --- fix: end


with tempfile.TemporaryDirectory() as root:
    write_depths(root, "seq01")
    folder = depth_folder(root, "seq01")
    depth_list = load_depths(folder)
    print("depth maps found:", len(depth_list))
    depths = torch.stack(depth_list, dim=0)
    print("stacked depths:", tuple(depths.shape))

    # --- check: start
    expected = torch.arange(FRAMES, dtype=torch.float32).view(FRAMES, 1, 1).expand(FRAMES, 4, 6)
    torch.testing.assert_close(depths, expected)  # every frame, in frame order
    print(f"check: all {FRAMES} saved depth maps stacked in frame order")
    # --- check: end
