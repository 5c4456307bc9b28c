"""Reproducer for hub-cached-download-removed.

Libraries written before huggingface_hub 0.26 fetched files with
`cached_download(hf_hub_url(repo_id, filename))`, imported at the top of their modules
(diffusers up to 0.28 in `utils/dynamic_modules_utils.py`, sentence-transformers up to
2.2 in `SentenceTransformer.py`). This script's `fetch_with_cached_download` is that
code, run under the installed huggingface_hub 2.4.0; the repository it fetches from is
built as a local Hub cache (`models--acme--tiny-encoder` with `refs/main`, a snapshot and
its blobs) and read offline, so no network is used.

`python repro.py`: importing `cached_download` fails with `ImportError: cannot import
name 'cached_download' from 'huggingface_hub' (.../huggingface_hub/__init__.py)`.
`python repro.py --fixed`: the files are fetched with `hf_hub_download(repo_id,
filename)`, which took its place (diffusers 0.29 and sentence-transformers 2.3 switched).
The check: every fetched file's bytes equal the bytes stored in the repository, the path
is the snapshot of the commit `refs/main` names, and the weights load to the saved tensor.
"""

import atexit
import hashlib
import io
import json
import os
import shutil
import sys
import tempfile

os.environ["HF_HUB_OFFLINE"] = "1"  # the cache below is the only source

import torch

FIXED = "--fixed" in sys.argv[1:]
REPO = "acme/tiny-encoder"
COMMIT = "0123456789abcdef0123456789abcdef01234567"

work = tempfile.mkdtemp(prefix="repro-hub-")
atexit.register(shutil.rmtree, work, ignore_errors=True)
CACHE = os.path.join(work, "hub")
torch.manual_seed(0)
weight = torch.randn(8, 4)
buffer = io.BytesIO()
torch.save({"weight": weight}, buffer)
FILES = {
    "config.json": json.dumps({"hidden_size": 4, "vocab_size": 8}).encode(),
    "pytorch_model.bin": buffer.getvalue(),
}
# The repository as the Hub cache lays it out after a download.
repo_dir = os.path.join(CACHE, "models--" + REPO.replace("/", "--"))
for name, data in FILES.items():
    blob = os.path.join(repo_dir, "blobs", hashlib.sha256(data).hexdigest())
    os.makedirs(os.path.dirname(blob), exist_ok=True)
    with open(blob, "wb") as handle:
        handle.write(data)
    snapshot_file = os.path.join(repo_dir, "snapshots", COMMIT, name)
    os.makedirs(os.path.dirname(snapshot_file), exist_ok=True)
    os.symlink(os.path.relpath(blob, os.path.dirname(snapshot_file)), snapshot_file)
os.makedirs(os.path.join(repo_dir, "refs"))
with open(os.path.join(repo_dir, "refs", "main"), "w") as handle:
    handle.write(COMMIT)


def fetch_with_cached_download(repo_id: str, filename: str) -> str:
    """How diffusers <= 0.28 and sentence-transformers <= 2.2 fetched a file."""
    from huggingface_hub import cached_download, hf_hub_url

    return cached_download(hf_hub_url(repo_id, filename), cache_dir=CACHE)


fetch = fetch_with_cached_download
if FIXED:
    # --- fix: start
    from huggingface_hub import hf_hub_download

    def fetch(repo_id: str, filename: str) -> str:
        return hf_hub_download(repo_id, filename, cache_dir=CACHE)

    # --- fix: end
paths = {name: fetch(REPO, name) for name in FILES}
print("fetched", {name: os.path.relpath(path, CACHE) for name, path in paths.items()})

# --- check: start
for name, data in FILES.items():
    with open(paths[name], "rb") as handle:
        assert handle.read() == data, f"{name}: bytes differ from the repository's"
    assert os.path.dirname(paths[name]) == os.path.join(repo_dir, "snapshots", COMMIT)
loaded = torch.load(paths["pytorch_model.bin"], weights_only=True)
torch.testing.assert_close(loaded["weight"], weight, rtol=0, atol=0)
print(f"check: {len(FILES)} files fetched from the cache equal the repository's bytes")
# --- check: end
