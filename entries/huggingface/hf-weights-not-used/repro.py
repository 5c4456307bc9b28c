"""Reproducer for hf-weights-not-used.

`python repro.py`: a training script fine-tuned a small DistilBERT as a sentence
classifier (`DistilBertForSequenceClassification`, 3 labels) and saved it with
`save_pretrained`. The inference script, copied from a token-tagging project, loads the
folder with `AutoModelForTokenClassification`. That class has a `classifier` layer of the
same shape, which loads, but no `pre_classifier`: transformers drops the checkpoint's
`pre_classifier` weights and says so in the load report (`UNEXPECTED ... can be ignored when
loading from different task/architecture; not ok if you expect identical arch.`; 4.x and
older: `Some weights of the model checkpoint at ... were not used when initializing ...`).
Nothing is reported missing, the model runs, and its outputs are per-token scores from a
head without its first layer, not the saved classifier's predictions.
`python repro.py --fixed`: the folder is loaded with the class it was saved from, which
`config.json` names under `architectures`. The check compares the loaded weights and the
logits with the saved model's.

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
    AutoModelForTokenClassification,
    DistilBertConfig,
    DistilBertForSequenceClassification,
)

FIXED = "--fixed" in sys.argv[1:]

with tempfile.TemporaryDirectory(prefix="repro-checkpoint-") as folder:
    torch.manual_seed(0)
    config = DistilBertConfig(
        vocab_size=64, dim=32, n_layers=2, n_heads=2, hidden_dim=64, max_position_embeddings=32, num_labels=3
    )
    saved_model = DistilBertForSequenceClassification(config).eval()
    saved_model.save_pretrained(folder)
    print("checkpoint:", sorted(os.listdir(folder)))

    auto_class = AutoModelForTokenClassification  # what the inference script uses
    if FIXED:
        # --- fix: start
        # Load with the class the checkpoint was saved from (config.json: "architectures").
        from transformers import AutoModelForSequenceClassification

        auto_class = AutoModelForSequenceClassification
        # --- fix: end

    model = auto_class.from_pretrained(folder).eval()
    input_ids = torch.tensor([[2, 7, 11, 5, 3, 9]])
    with torch.no_grad():
        logits = model(input_ids=input_ids).logits
    print("loaded", type(model).__name__, "logits shape", tuple(logits.shape))

    # --- check: start
    # The loaded model is the saved one: every saved tensor is used, and the logits on the
    # same input are the saved classifier's.
    loaded, saved = model.state_dict(), saved_model.state_dict()
    assert loaded.keys() == saved.keys(), f"other parameters: {sorted(loaded.keys() ^ saved.keys())}"
    for name, value in saved.items():
        torch.testing.assert_close(loaded[name], value, rtol=0, atol=0)
    with torch.no_grad():
        expected = saved_model(input_ids=input_ids).logits
    assert logits.shape == expected.shape == (1, 3), logits.shape
    torch.testing.assert_close(logits, expected)
    print(f"check: all {len(loaded)} tensors and the logits {tuple(logits.shape)} equal the saved model's")
    # --- check: end
