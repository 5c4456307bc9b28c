"""Reproducer for hf-weights-newly-initialized.

`python repro.py`: a training script fine-tuned a small DistilBERT as a token tagger
(`DistilBertForTokenClassification`, 3 tags) and saved it with `save_pretrained`. The
inference script loads the folder with `AutoModelForSequenceClassification`, another head:
its `pre_classifier` layer is not in the checkpoint, so transformers creates it with random
weights and says so in the load report (`MISSING ... those params were newly initialized
because missing from the checkpoint`; 4.x and older: `Some weights of ... were not
initialized from the model checkpoint at ... and are newly initialized`). The model runs,
and its outputs are those of a random layer, not of the trained model.
`python repro.py --fixed`: the folder is loaded with the class it was saved from, which
`config.json` names under `architectures`. The check compares the loaded weights and the
per-token logits with the saved model's.

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
from transformers import (  # noqa: E402
    AutoModelForSequenceClassification,
    DistilBertConfig,
    DistilBertForTokenClassification,
)

FIXED = "--fixed" in sys.argv[1:]

with tempfile.TemporaryDirectory(prefix="repro-checkpoint-") as folder:
    torch.manual_seed(0)
    config = DistilBertConfig(
        vocab_size=64, dim=32, n_layers=2, n_heads=2, hidden_dim=64, max_position_embeddings=32, num_labels=3
    )
    saved_model = DistilBertForTokenClassification(config).eval()
    saved_model.save_pretrained(folder)
    print("checkpoint:", sorted(os.listdir(folder)))

    auto_class = AutoModelForSequenceClassification  # what the inference script uses
    if FIXED:
        # --- fix: start
        # Load with the class the checkpoint was saved from (config.json: "architectures").
        from transformers import AutoModelForTokenClassification

        auto_class = AutoModelForTokenClassification
        # --- fix: end

    torch.manual_seed(1)  # the seed of the inference script, not of the training run
    model = auto_class.from_pretrained(folder).eval()
    input_ids = torch.tensor([[2, 7, 11, 5, 3, 9]])
    with torch.no_grad():
        logits = model(input_ids=input_ids).logits
    print("loaded", type(model).__name__, "logits shape", tuple(logits.shape))

    # --- check: start
    # The loaded model is the saved one: same weights, same per-token logits on the same input.
    loaded, saved = model.state_dict(), saved_model.state_dict()
    assert loaded.keys() == saved.keys(), f"other parameters: {sorted(loaded.keys() ^ saved.keys())}"
    for name, value in saved.items():
        torch.testing.assert_close(loaded[name], value, rtol=0, atol=0)
    with torch.no_grad():
        torch.testing.assert_close(logits, saved_model(input_ids=input_ids).logits)
    print(f"check: all {len(loaded)} tensors and the logits equal the saved model's")
    # --- check: end
