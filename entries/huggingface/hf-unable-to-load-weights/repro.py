"""Reproducer for hf-unable-to-load-weights.

A model folder is copied from where it was saved (here a tiny BERT written with
`save_pretrained(..., safe_serialization=False)`, so its weights are `pytorch_model.bin`),
and the copy of the weights file stops short, as an interrupted download or copy leaves
it: the first 60% of its bytes. transformers 4.51.3 (with huggingface_hub 0.36.0 and
tokenizers 0.21.4, the releases it accepts) is installed apart from the catalog's pins and
put first on `sys.path`: transformers 5 no longer wraps `torch.load`'s error in this message.

`python repro.py`: `AutoModel.from_pretrained(copy)` calls `torch.load` on the cut file,
which fails (`PytorchStreamReader failed reading zip archive: failed finding central
directory`); transformers catches that and raises `OSError: Unable to load weights from
pytorch checkpoint file for '.../pytorch_model.bin' at '.../pytorch_model.bin'. If you
tried to load a PyTorch model from a TF 2.0 checkpoint, please set from_tf=True.`
`python repro.py --fixed`: the weights file is fetched again, whole, and its SHA-256 is
compared with the source's before loading. The check: every tensor of the loaded model
equals the saved model's, and so do its outputs on a batch.
"""

import atexit
import hashlib
import os
import shutil
import sys
import tempfile

os.environ["HF_HUB_OFFLINE"] = "1"  # everything is local: no download is ever tried
PRIVATE = os.path.join(sys.prefix, "failpedia-private")
for release in ("transformers-4.51.3", "huggingface-hub-0.36.0", "tokenizers-0.21.4"):
    sys.path.insert(0, os.path.join(PRIVATE, release))

import torch  # noqa: E402
import transformers  # noqa: E402
from transformers import AutoModel, BertConfig, BertModel  # noqa: E402

FIXED = "--fixed" in sys.argv[1:]


def sha256(path: str) -> str:
    """The file's SHA-256, as the hub lists it for every LFS file."""
    with open(path, "rb") as handle:
        return hashlib.file_digest(handle, "sha256").hexdigest()


print("transformers", transformers.__version__, "from", os.path.dirname(transformers.__file__))
work = tempfile.mkdtemp(prefix="repro-weights-")
atexit.register(shutil.rmtree, work, ignore_errors=True)
source = os.path.join(work, "hub", "tiny-bert")  # stands in for the model repository
local = os.path.join(work, "models", "tiny-bert")  # the copy the job loads

torch.manual_seed(0)
config = BertConfig(vocab_size=64, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                    intermediate_size=64, max_position_embeddings=32)
saved = BertModel(config).eval()
saved.save_pretrained(source, safe_serialization=False)

# The copy: config.json whole, pytorch_model.bin cut after 60% of its bytes.
os.makedirs(local)
shutil.copy(os.path.join(source, "config.json"), local)
weights = os.path.join(source, "pytorch_model.bin")
with open(weights, "rb") as whole, open(os.path.join(local, "pytorch_model.bin"), "wb") as part:
    part.write(whole.read(os.path.getsize(weights) * 6 // 10))
print("local pytorch_model.bin:", os.path.getsize(os.path.join(local, "pytorch_model.bin")), "bytes of",
      os.path.getsize(weights))

if FIXED:
    # --- fix: start
    # Fetch the weights file again, whole, and compare its SHA-256 with the one the
    # repository lists before loading it.
    fetched = shutil.copy(weights, os.path.join(local, "pytorch_model.bin"))
    assert sha256(fetched) == sha256(weights), "the file is still not the repository's"
    # --- fix: end

model = AutoModel.from_pretrained(local).eval()
input_ids = torch.arange(24).reshape(2, 12) % 64

# --- check: start
# Every tensor the model was saved with is loaded unchanged, and the outputs match.
expected = saved.state_dict()
loaded = model.state_dict()
assert loaded.keys() == expected.keys(), sorted(set(loaded) ^ set(expected))
for name, value in expected.items():
    torch.testing.assert_close(loaded[name], value, rtol=0, atol=0)
with torch.no_grad():
    torch.testing.assert_close(model(input_ids).last_hidden_state, saved(input_ids).last_hidden_state)
print(f"check: all {len(expected)} tensors and the outputs equal the saved model's")
# --- check: end
