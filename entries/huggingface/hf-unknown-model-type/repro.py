"""Reproducer for hf-unknown-model-type.

A checkpoint folder's `config.json` says `"model_type": "tiny-mixer"`, an architecture this
transformers release does not ship. Here it is the project's own architecture (the
classes below), saved with `save_pretrained`; a checkpoint of a model family added in a
newer transformers release fails the same way on an older one.

`python repro.py`: `AutoModel.from_pretrained(folder)` looks `tiny-mixer` up in
transformers' table of model types, does not find it, and raises `ValueError: The
checkpoint you are trying to load has model type `tiny-mixer` but Transformers does not
recognize this architecture. ...`
`python repro.py --fixed`: the architecture's classes are registered with `AutoConfig`
and `AutoModel` before loading (for a newer upstream architecture: install a transformers
release that has it). The check compares the loaded weights and output with the saved
model.
"""

import os
import sys
import tempfile

os.environ["HF_HUB_OFFLINE"] = "1"

import torch  # noqa: E402
from transformers import AutoConfig, AutoModel, PretrainedConfig, PreTrainedModel  # noqa: E402

FIXED = "--fixed" in sys.argv[1:]


class TinyMixerConfig(PretrainedConfig):
    model_type = "tiny-mixer"

    def __init__(self, hidden=8, layers=2, **kwargs):
        self.hidden = hidden
        self.layers = layers
        super().__init__(**kwargs)


class TinyMixerModel(PreTrainedModel):
    config_class = TinyMixerConfig

    def __init__(self, config):
        super().__init__(config)
        self.blocks = torch.nn.ModuleList(
            torch.nn.Linear(config.hidden, config.hidden) for _ in range(config.layers))
        self.post_init()

    def forward(self, x):
        for block in self.blocks:
            x = x + torch.relu(block(x))
        return x


with tempfile.TemporaryDirectory(prefix="repro-checkpoint-") as folder:
    torch.manual_seed(0)
    saved_model = TinyMixerModel(TinyMixerConfig()).eval()
    saved_model.save_pretrained(folder)
    print("checkpoint:", sorted(os.listdir(folder)))

    if FIXED:
        # --- fix: start
        # Tell the Auto classes which classes implement model_type "tiny-mixer".
        AutoConfig.register("tiny-mixer", TinyMixerConfig)
        AutoModel.register(TinyMixerConfig, TinyMixerModel)
        # --- fix: end

    model = AutoModel.from_pretrained(folder).eval()
    x = torch.randn(4, 8)
    with torch.no_grad():
        y = model(x)
    print("loaded", type(model).__name__, "output shape", tuple(y.shape))

    # --- check: start
    # The loaded model is the saved one: same weights, same output on the same input.
    loaded, saved = model.state_dict(), saved_model.state_dict()
    assert loaded.keys() == saved.keys(), "the loaded model has other parameters"
    for name, value in saved.items():
        torch.testing.assert_close(loaded[name], value, rtol=0, atol=0)
    with torch.no_grad():
        torch.testing.assert_close(y, saved_model(x))
    print(f"check: all {len(loaded)} tensors and the output equal the saved model's")
    # --- check: end
