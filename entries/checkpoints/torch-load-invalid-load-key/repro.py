"""Reproducer for torch-load-invalid-load-key.

`python repro.py`: a model is published as `model.pt` (a state dict). Two copies of it
arrive broken, as failed downloads leave them: `lfs_model.pt` is the Git LFS pointer a
clone without `git lfs` checks out (text starting `version https://git-lfs...`, first
byte `v`, with the real file's sha256 and size), and `html_model.pt` is the HTML sign-in
page an unauthenticated download saves (first byte `<`). Each is loaded with the default
`weights_only=True` and with `weights_only=False`; all four loads raise
`_pickle.UnpicklingError` (`Unsupported operand 118` / `60` wrapped in "Weights only load
failed", and `invalid load key, 'v'.` / `'<'.`).
`python repro.py --fixed`: the loader looks at the first bytes before `torch.load`; a
pointer or an HTML page is fetched again (here from a local folder standing in for the
LFS server and the download URL) and the real checkpoint loads. The check compares every loaded tensor with the published model's.
"""

import hashlib
import os
import shutil
import sys
import tempfile
import traceback

import torch

FIXED = "--fixed" in sys.argv[1:]

folder = tempfile.mkdtemp(prefix="repro-invalid-load-key-")
torch.manual_seed(0)
published = torch.nn.Linear(4, 2).state_dict()
remote = os.path.join(folder, "remote_model.pt")  # what the LFS server / download URL serves
torch.save(published, remote)
with open(remote, "rb") as f:
    payload = f.read()

lfs_pointer = os.path.join(folder, "lfs_model.pt")
with open(lfs_pointer, "w") as f:
    f.write(
        "version https://git-lfs.github.com/spec/v1\n"
        f"oid sha256:{hashlib.sha256(payload).hexdigest()}\n"
        f"size {len(payload)}\n"
    )
html_page = os.path.join(folder, "html_model.pt")
with open(html_page, "w") as f:
    f.write("<!DOCTYPE html>\n<html><head><title>Sign in</title></head></html>\n")


def fetch_again(path: str) -> None:
    """Stand-in for `git lfs pull` / downloading again with credentials: the real bytes."""
    shutil.copyfile(remote, path)


def load_checkpoint(path: str, weights_only: bool) -> dict:
    return torch.load(path, map_location="cpu", weights_only=weights_only)


if FIXED:
    # --- fix: start
    def load_checkpoint(path: str, weights_only: bool) -> dict:
        """Look at the first bytes: a Git LFS pointer or an HTML page is not a checkpoint."""
        with open(path, "rb") as f:
            head = f.read(64)
        if head.startswith(b"version https://git-lfs") or head.lstrip().startswith(b"<"):
            pointer = head.decode(errors="replace").splitlines()
            print(f"{os.path.basename(path)} is not a checkpoint ({pointer[0][:40]!r}): fetching it again")
            fetch_again(path)  # `git lfs pull`, or download again (with a token) and compare the size
        return torch.load(path, map_location="cpu", weights_only=weights_only)
    # --- fix: end


loaded = {}
for path in (lfs_pointer, html_page):
    for weights_only in (True, False):
        print(f"--- torch.load({os.path.basename(path)!r}, weights_only={weights_only})")
        try:
            loaded[os.path.basename(path), weights_only] = load_checkpoint(path, weights_only)
        except Exception:
            traceback.print_exc(limit=0, file=sys.stdout)
shutil.rmtree(folder, ignore_errors=True)

# --- check: start
assert len(loaded) == 4, sorted(loaded)  # both files, with weights_only=True and False
for state in loaded.values():
    torch.testing.assert_close(state, published)
print("check: all four loads return the published model's tensors")
# --- check: end
