"""Reproducer for hf-unrecognized-configuration-class.

`python repro.py`: a script saves a small DistilBERT encoder trained for masked-language
modelling (`DistilBertForMaskedLM`) and later loads it with `AutoModelForCausalLM`, the Auto class
of text-generation scripts. `AutoModelForCausalLM` maps config classes to causal-LM
classes; `DistilBertConfig` is not in that map (DistilBERT has no causal-LM class), so it
raises `ValueError: Unrecognized configuration class <class '...DistilBertConfig'> for this kind
of AutoModel: AutoModelForCausalLM.` followed by the config classes it does know.
`python repro.py --fixed`: the checkpoint is loaded with the Auto class of the task the
model was trained for, `AutoModelForMaskedLM`. The check compares the loaded weights and
the output with the saved model.

Everything is built in the script: a 2-layer DistilBERT with hidden size 32, saved to a
temporary folder. Nothing is downloaded.
"""

import os
import sys
import tempfile

_hf_home = tempfile.TemporaryDirectory(prefix="repro-hf-home-")
os.environ["HF_HOME"] = _hf_home.name  # nothing is written to the user's cache
os.environ["HF_HUB_OFFLINE"] = "1"  # and nothing is fetched from the Hub

import torch  # noqa: E402
from transformers import AutoModelForCausalLM, DistilBertConfig, DistilBertForMaskedLM  # noqa: E402

FIXED = "--fixed" in sys.argv[1:]

with tempfile.TemporaryDirectory(prefix="repro-checkpoint-") as folder:
    torch.manual_seed(0)
    config = DistilBertConfig(vocab_size=64, dim=32, n_layers=2, n_heads=2, hidden_dim=64, max_position_embeddings=32)
    saved_model = DistilBertForMaskedLM(config).eval()
    saved_model.save_pretrained(folder)
    print("checkpoint:", sorted(os.listdir(folder)))

    auto_class = AutoModelForCausalLM  # what the generation script uses
    if FIXED:
        # --- fix: start
        # Load with the Auto class of the task the checkpoint was trained for.
        from transformers import AutoModelForMaskedLM

        auto_class = AutoModelForMaskedLM
        # --- fix: end

    model = auto_class.from_pretrained(folder).eval()
    input_ids = torch.tensor([[2, 7, 11, 5, 3, 9]])
    with torch.no_grad():
        logits = model(input_ids=input_ids).logits
    print("loaded", type(model).__name__, "logits shape", tuple(logits.shape))

    # --- check: start
    # The loaded model is the saved one: same weights, same output on the same input.
    loaded, saved = model.state_dict(), saved_model.state_dict()
    assert loaded.keys() == saved.keys(), "the loaded model has other parameters"
    for name, value in saved.items():
        torch.testing.assert_close(loaded[name], value, rtol=0, atol=0)
    with torch.no_grad():
        torch.testing.assert_close(logits, saved_model(input_ids=input_ids).logits)
    print(f"check: all {len(loaded)} tensors and the logits equal the saved model's")
    # --- check: end
