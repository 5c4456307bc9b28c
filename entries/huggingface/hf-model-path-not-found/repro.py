"""Reproducer for hf-model-path-not-found.

Training wrote its checkpoints under `<output>/run-1/checkpoint-200` (here a tiny GPT-2,
saved with `save_pretrained`). The evaluation job runs offline (`HF_HUB_OFFLINE=1`) and
gets the folder as a typed path: `<output>/run1/checkpoint-200`, one hyphen short.

`python repro.py`: the typed folder does not exist, so transformers does not treat the
string as a path but as a Hub repository id, and huggingface_hub rejects it as one
(`OSError: Repo id must be in the form 'repo_name' or 'namespace/repo_name': '...'`).
Online, with a string that looks like an id, the Hub answers 401/404 and the message is
`... is not a local folder and is not a valid model identifier listed on
'https://huggingface.co/models'`.
`python repro.py --fixed`: the folder is taken from what the training run wrote (the
latest `checkpoint-*` folder under the run directory), checked to exist, and loaded. The
check compares the loaded weights and logits with the model training saved.
"""

import glob
import os
import sys
import tempfile

_hf_home = tempfile.TemporaryDirectory(prefix="repro-hf-home-")
os.environ["HF_HOME"] = _hf_home.name
os.environ["HF_HUB_OFFLINE"] = "1"  # the evaluation node has no internet access

import torch  # noqa: E402
from transformers import AutoModelForCausalLM, GPT2Config, GPT2LMHeadModel  # noqa: E402

FIXED = "--fixed" in sys.argv[1:]


def train_and_save(run_dir: str) -> GPT2LMHeadModel:
    """Stand-in for the training job: save checkpoint-100 and checkpoint-200."""
    torch.manual_seed(0)
    model = GPT2LMHeadModel(GPT2Config(vocab_size=16, n_embd=16, n_layer=1, n_head=2, n_positions=16))
    for step in (100, 200):
        with torch.no_grad():
            model.lm_head.weight.add_(0.01)  # the weights change between checkpoints
        model.save_pretrained(os.path.join(run_dir, f"checkpoint-{step}"))
    return model


with tempfile.TemporaryDirectory(prefix="repro-output-") as output:
    run_dir = os.path.join(output, "run-1")
    trained = train_and_save(run_dir).eval()
    print("training wrote:", sorted(os.listdir(run_dir)))

    checkpoint = os.path.join(output, "run1", "checkpoint-200")  # the bug: a typo in the path
    if FIXED:
        # --- fix: start
        # Take the folder from what the run wrote, not from a typed string, and fail
        # with a clear message if it is not there (a missing path is sent to the Hub).
        checkpoints = glob.glob(os.path.join(run_dir, "checkpoint-*"))
        checkpoint = max(checkpoints, key=lambda path: int(path.rsplit("-", 1)[1]))
        if not os.path.isdir(checkpoint):
            raise FileNotFoundError(f"no checkpoint folder at {checkpoint}")
        # --- fix: end

    print("loading", os.path.relpath(checkpoint, output))
    model = AutoModelForCausalLM.from_pretrained(checkpoint).eval()
    tokens = torch.tensor([[1, 2, 3, 4, 5]])
    with torch.no_grad():
        logits = model(tokens).logits
    print("forward pass ok, logits shape:", tuple(logits.shape))

    # --- check: start
    # The model loaded is the last checkpoint training saved: same weights, same logits.
    loaded, saved = model.state_dict(), trained.state_dict()
    assert loaded.keys() == saved.keys(), "the loaded model has other parameters"
    for name, value in saved.items():
        torch.testing.assert_close(loaded[name], value, rtol=0, atol=0)
    with torch.no_grad():
        torch.testing.assert_close(logits, trained(tokens).logits)
    print(f"check: all {len(loaded)} tensors and the logits equal the last saved checkpoint")
    # --- check: end
