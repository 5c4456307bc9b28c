"""Reproducer for torch-load-invalid-load-key.

`python repro.py`: two files named `model.pt` that are not checkpoints, as a failed
download leaves them: a Git LFS pointer (text starting `version https://git-lfs...`,
first byte `v`) and an HTML error page (first byte `<`). Each is loaded with the default
`weights_only=True` and with `weights_only=False`; all four loads raise
`_pickle.UnpicklingError` (`Unsupported operand 118` / `60` wrapped in "Weights only load
failed", and `invalid load key, 'v'.` / `'<'.`).
`python repro.py --fixed`: the first bytes are checked before `torch.load`; the pointer
and the HTML page are refused with a message saying what they are, and the real
checkpoint in the same folder loads.
"""

import os
import sys
import tempfile
import traceback

import torch

FIXED = "--fixed" in sys.argv[1:]

folder = tempfile.mkdtemp()
lfs_pointer = os.path.join(folder, "lfs_model.pt")
with open(lfs_pointer, "w") as f:
    f.write(
        "version https://git-lfs.github.com/spec/v1\n"
        "oid sha256:4d7a214614ab2935c943f9e0ff69d22eadbb8f32b1258daaa5e2ca24d17e2393\n"
        "size 46830571\n"
    )
html_page = os.path.join(folder, "html_model.pt")
with open(html_page, "w") as f:
    f.write("<!DOCTYPE html>\n<html><head><title>Sign in</title></head></html>\n")
real = os.path.join(folder, "real_model.pt")
torch.save(torch.nn.Linear(4, 2).state_dict(), real)


# --- fix: start
def load_checkpoint(path: str, **kwargs):
    """Refuse files that are not checkpoints before unpickling them."""
    with open(path, "rb") as f:
        head = f.read(64)
    if head.startswith(b"version https://git-lfs"):
        raise RuntimeError(
            f"{path} is a Git LFS pointer, not the weights: run `git lfs pull` "
            "(or download the file itself) and load again"
        )
    if head.lstrip().startswith(b"<"):
        raise RuntimeError(
            f"{path} is an HTML/XML page (a failed or unauthenticated download), "
            "not a checkpoint: download it again and check its size"
        )
    return torch.load(path, **kwargs)
# --- fix: end


if FIXED:
    for path in (lfs_pointer, html_page):
        try:
            load_checkpoint(path, map_location="cpu")
        except RuntimeError as error:
            print("refused:", error.args[0].replace(folder, "<tmp>"))
    state = load_checkpoint(real, map_location="cpu")
    print("loaded real checkpoint:", sorted(state))
else:
    failed = 0
    for path in (lfs_pointer, html_page):
        for weights_only in (True, False):
            print(f"--- torch.load({os.path.basename(path)!r}, weights_only={weights_only})")
            try:
                torch.load(path, map_location="cpu", weights_only=weights_only)
            except Exception:
                traceback.print_exc(limit=0, file=sys.stdout)
                failed += 1
    sys.exit(1 if failed else 0)
