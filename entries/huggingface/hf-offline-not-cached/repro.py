"""Reproducer for hf-offline-not-cached.

A training job runs on a node without internet access (`HF_HUB_OFFLINE=1`) with a fresh,
empty Hugging Face cache (`HF_HOME` in a temporary folder). The model files were staged
beforehand into a local folder, as `hf download <repo> --local-dir <folder>` (or
`save_pretrained`) would do on a connected machine; here a tiny GPT-2 and its tokenizer,
built in the script, stand in for the downloaded checkpoint.

`python repro.py`: the job loads the model by its Hub id, `openai-community/gpt2`.
transformers looks for the files in the (empty) cache, may not ask the Hub, and raises
`OSError: We couldn't connect to 'https://huggingface.co' to load the files, and couldn't
find them in the cached files.`, chained to huggingface_hub's `LocalEntryNotFoundError:
Cannot find the requested files in the disk cache and outgoing traffic has been
disabled.` Nothing is sent over the network: offline mode refuses before any request.
`python repro.py --fixed`: the job loads from the staged folder's path, which
`from_pretrained` reads directly, offline, and one forward pass runs. The check compares
the loaded weights and logits with the model that was staged.
"""

import os
import sys
import tempfile

_hf_home = tempfile.TemporaryDirectory(prefix="repro-hf-home-")
os.environ["HF_HOME"] = _hf_home.name  # a fresh cache: nothing was ever downloaded here
os.environ["HF_HUB_OFFLINE"] = "1"  # the node has no internet access

import torch  # noqa: E402
from tokenizers import Tokenizer, models, pre_tokenizers  # noqa: E402
from transformers import (  # noqa: E402
    AutoModelForCausalLM,
    AutoTokenizer,
    GPT2Config,
    GPT2LMHeadModel,
    PreTrainedTokenizerFast,
)

FIXED = "--fixed" in sys.argv[1:]
HUB_ID = "openai-community/gpt2"


def stage_checkpoint(folder: str) -> GPT2LMHeadModel:
    """Stand-in for the download done on a connected machine: a tiny model in `folder`."""
    words = ["<|endoftext|>", "the", "cat", "sat", "on", "mat"]
    backend = Tokenizer(models.WordLevel({w: i for i, w in enumerate(words)}, unk_token="<|endoftext|>"))
    backend.pre_tokenizer = pre_tokenizers.Whitespace()
    PreTrainedTokenizerFast(tokenizer_object=backend, eos_token="<|endoftext|>").save_pretrained(folder)
    config = GPT2Config(vocab_size=len(words), n_embd=32, n_layer=2, n_head=2, n_positions=32,
                        bos_token_id=0, eos_token_id=0)
    model = GPT2LMHeadModel(config)
    model.save_pretrained(folder)
    return model


with tempfile.TemporaryDirectory(prefix="repro-staged-model-") as staged:
    downloaded = stage_checkpoint(staged).eval()
    print("staged files:", sorted(os.listdir(staged)))

    source = HUB_ID  # the bug: the Hub id, whose files this cache has never seen
    if FIXED:
        # --- fix: start
        # Point from_pretrained at the folder that holds the files, not at the Hub id:
        # a local path is read directly and needs neither the network nor the cache.
        source = staged
        # --- fix: end

    print(f"loading {source!r} with HF_HUB_OFFLINE=1 and an empty cache")
    tokenizer = AutoTokenizer.from_pretrained(source)
    model = AutoModelForCausalLM.from_pretrained(source)
    inputs = tokenizer("the cat sat", return_tensors="pt")
    with torch.no_grad():
        logits = model(**inputs).logits
    print("forward pass ok, logits shape:", tuple(logits.shape))

    # --- check: start
    # The loaded model is the staged checkpoint: the same weights, the same outputs.
    loaded, staged_weights = model.state_dict(), downloaded.state_dict()
    assert loaded.keys() == staged_weights.keys(), "the loaded model has other parameters"
    for name, value in staged_weights.items():
        torch.testing.assert_close(loaded[name], value, rtol=0, atol=0)
    with torch.no_grad():
        torch.testing.assert_close(logits, downloaded(**inputs).logits)
    print(f"check: all {len(loaded)} tensors equal the staged checkpoint, and so do the logits")
    # --- check: end
