"""Reproducer for hf-ignore-mismatched-sizes.

`python repro.py`: a sentiment classifier with 2 labels is saved with `save_pretrained`
(standing in for a fine-tuned checkpoint on the Hub), then loaded with
`from_pretrained(path, num_labels=5)` to fine-tune it on a 5-class task. The classifier
head's shapes differ (`[2, 32]` in the checkpoint, `[5, 32]` in the model), and
transformers 5.x prints its load report with `classifier.weight | MISMATCH` and raises
`RuntimeError: You set `ignore_mismatched_sizes` to `False`, thus raising an error.`
(4.x raised `Error(s) in loading state_dict ... You may consider adding
`ignore_mismatched_sizes=True` in the model `from_pretrained` method.`).
`python repro.py --fixed`: the same call with `ignore_mismatched_sizes=True`: the head
is created anew with 5 outputs and every other weight comes from the checkpoint. The
check compares every tensor of the loaded model except the head with the checkpoint
file, and checks the head has 5 outputs.

Everything is built in the script: a 2-layer BERT with hidden size 32, saved to a
temporary folder. Nothing is downloaded; the run uses the CPU.
"""

import os
import sys
import tempfile

_hf_home = tempfile.TemporaryDirectory(prefix="repro-hf-home-")
os.environ["HF_HOME"] = _hf_home.name  # nothing is written to the user's cache
os.environ["HF_HUB_OFFLINE"] = "1"  # and nothing is fetched from the Hub

import torch  # noqa: E402
from safetensors.torch import load_file  # noqa: E402
from transformers import BertConfig, BertForSequenceClassification  # noqa: E402

FIXED = "--fixed" in sys.argv[1:]

torch.manual_seed(0)
pretrained = BertForSequenceClassification(BertConfig(
    vocab_size=30, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
    intermediate_size=64, max_position_embeddings=16, num_labels=2,
))

with tempfile.TemporaryDirectory(prefix="repro-checkpoint-") as path:
    pretrained.save_pretrained(path)  # the 2-label checkpoint

    load_options = {"num_labels": 5}  # the new task has 5 classes
    if FIXED:
        # --- fix: start
        # Create the classifier head anew where its shape differs; load everything else.
        load_options["ignore_mismatched_sizes"] = True
        # --- fix: end
    model = BertForSequenceClassification.from_pretrained(path, **load_options)
    checkpoint = load_file(os.path.join(path, "model.safetensors"))

    # --- check: start
    # Every weight except the new head equals the checkpoint's; the head has 5 outputs.
    loaded = model.state_dict()
    backbone = {k: v for k, v in checkpoint.items() if not k.startswith("classifier.")}
    assert len(backbone) > 30 and all(k in loaded for k in backbone), sorted(set(backbone) - set(loaded))
    torch.testing.assert_close({k: loaded[k] for k in backbone}, backbone, rtol=0, atol=0)
    assert loaded["classifier.weight"].shape == (5, 32) and loaded["classifier.bias"].shape == (5,)
    logits = model(input_ids=torch.tensor([[2, 5, 7, 3]])).logits
    assert logits.shape == (1, 5)
    print(f"check: all {len(backbone)} backbone tensors equal the checkpoint's; the new head has 5 outputs")
    # --- check: end
