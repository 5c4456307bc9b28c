"""Reproducer for hf-use-auth-token-removed.

An evaluation script written for transformers 4.x loads a private classifier from the Hub
with `AutoModelForSequenceClassification.from_pretrained("acme/ticket-classifier",
use_auth_token=TOKEN)`. The repository is already in the local Hub cache (written here
in the cache's own layout: `models--acme--ticket-classifier/refs/main` and
`snapshots/<commit>/`), and the run is offline, so nothing is downloaded.

`python repro.py`: transformers 5 no longer knows `use_auth_token` (4.x turned it into
`token` with a `FutureWarning` announcing its removal in v5), so `from_pretrained` passes
it on with the other unknown keywords to the model class, and Python refuses it:
`TypeError: BertForSequenceClassification.__init__() got an unexpected keyword argument
'use_auth_token'`.
`python repro.py --fixed`: the same call with `token=TOKEN`. The check: the loaded
model's weights equal the ones the repository was written from, and it classifies a
batch exactly as that model does.
"""

import os
import sys
import tempfile

_home = tempfile.TemporaryDirectory(prefix="repro-use-auth-token-")
os.environ["HF_HOME"] = _home.name
os.environ["HF_HUB_OFFLINE"] = "1"

import torch  # noqa: E402
from transformers import (  # noqa: E402
    AutoModelForSequenceClassification,
    BertConfig,
    BertForSequenceClassification,
)

FIXED = "--fixed" in sys.argv[1:]
REPO = "acme/ticket-classifier"
TOKEN = "hf_" + "x" * 34  # a placeholder: the repository is read from the cache

# The repository as the Hub cache holds it after an earlier download.
torch.manual_seed(0)
config = BertConfig(vocab_size=40, hidden_size=16, num_hidden_layers=2, num_attention_heads=2,
                    intermediate_size=32, num_labels=3)  # fmt: skip
published = BertForSequenceClassification(config).eval()
commit = "0123456789abcdef0123456789abcdef01234567"
cache = os.path.join(_home.name, "hub", "models--" + REPO.replace("/", "--"))
published.save_pretrained(os.path.join(cache, "snapshots", commit))
os.makedirs(os.path.join(cache, "refs"))
with open(os.path.join(cache, "refs", "main"), "w") as handle:
    handle.write(commit)

credentials = {"use_auth_token": TOKEN}  # as written for transformers 4.x
if FIXED:
    # --- fix: start
    credentials = {"token": TOKEN}  # the name since transformers 4.32; the only one in 5.x
    # --- fix: end

model = AutoModelForSequenceClassification.from_pretrained(REPO, **credentials).eval()
print("loaded", type(model).__name__, "from", REPO)

# --- check: start
expected = published.state_dict()
loaded = model.state_dict()
assert loaded.keys() == expected.keys(), sorted(set(loaded) ^ set(expected))
for name, value in expected.items():
    assert torch.equal(loaded[name], value), name
ids = torch.randint(0, 40, (4, 7), generator=torch.Generator().manual_seed(1))
with torch.no_grad():
    torch.testing.assert_close(model(input_ids=ids).logits, published(input_ids=ids).logits)
print(f"check: all {len(expected)} tensors equal the repository's, and the logits match")
# --- check: end
