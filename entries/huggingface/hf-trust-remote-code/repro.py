"""Reproducer for hf-trust-remote-code.

A model folder ships its own architecture: `config.json` has an `auto_map` that points
`AutoConfig` and `AutoModel` at `configuration_tiny.py` and `modeling_tiny.py` inside the
folder, the way many Hub repositories (and their local downloads) do. The folder is
written by the script; nothing is fetched, `HF_HUB_OFFLINE=1`.

`python repro.py`: `AutoModel.from_pretrained(folder)` without `trust_remote_code`.
transformers refuses to import code from the folder and raises `ValueError: The repository
<folder> contains custom code which must be executed to correctly load the model. ...
Please pass the argument `trust_remote_code=True` to allow custom code to be run.`
`python repro.py --fixed`: after the folder's Python files are read (here: they are the
ones this script wrote), the load passes `trust_remote_code=True`. The check compares the
loaded weights and output with the model that was saved, built from the same code
imported directly.
"""

import importlib.util
import json
import os
import sys
import tempfile
import textwrap

_hf_home = tempfile.TemporaryDirectory(prefix="repro-hf-home-")
os.environ["HF_HOME"] = _hf_home.name  # dynamic modules are copied under $HF_HOME/modules
os.environ["HF_HUB_OFFLINE"] = "1"

import torch  # noqa: E402
from transformers import AutoModel  # noqa: E402

FIXED = "--fixed" in sys.argv[1:]

CONFIG_CODE = textwrap.dedent('''
    from transformers import PretrainedConfig

    class TinyConfig(PretrainedConfig):
        model_type = "tiny-remote"

        def __init__(self, hidden=8, layers=2, **kwargs):
            self.hidden = hidden
            self.layers = layers
            super().__init__(**kwargs)
''')

MODELING_CODE = textwrap.dedent('''
    import torch
    from transformers import PreTrainedModel
    from .configuration_tiny import TinyConfig

    class TinyModel(PreTrainedModel):
        config_class = TinyConfig

        def __init__(self, config):
            super().__init__(config)
            self.blocks = torch.nn.ModuleList(
                torch.nn.Linear(config.hidden, config.hidden) for _ in range(config.layers))
            self.post_init()

        def forward(self, x):
            for block in self.blocks:
                x = torch.tanh(block(x))
            return x
''')


def write_model_folder(folder: str) -> torch.nn.Module:
    """Stand-in for a downloaded repository with custom code; returns the saved model."""
    for name, code in [("configuration_tiny.py", CONFIG_CODE), ("modeling_tiny.py", MODELING_CODE)]:
        with open(os.path.join(folder, name), "w") as f:
            f.write(code)
    sys.path.insert(0, os.path.dirname(folder))  # import the package directly, for the reference
    package = os.path.basename(folder)
    with open(os.path.join(folder, "__init__.py"), "w"):
        pass
    modeling = importlib.import_module(f"{package}.modeling_tiny")
    config = importlib.import_module(f"{package}.configuration_tiny").TinyConfig()
    torch.manual_seed(0)
    model = modeling.TinyModel(config)
    model.save_pretrained(folder)
    os.remove(os.path.join(folder, "__init__.py"))
    with open(os.path.join(folder, "config.json")) as f:
        saved = json.load(f)
    saved["auto_map"] = {"AutoConfig": "configuration_tiny.TinyConfig",
                         "AutoModel": "modeling_tiny.TinyModel"}
    with open(os.path.join(folder, "config.json"), "w") as f:
        json.dump(saved, f, indent=2)
    return model


with tempfile.TemporaryDirectory(prefix="repro-models-") as root:
    folder = os.path.join(root, "tiny_remote_model")
    os.mkdir(folder)
    saved_model = write_model_folder(folder).eval()
    print("model folder:", sorted(os.listdir(folder)))

    load_options = {}  # the bug: custom code in the folder, and no opt-in to run it
    if FIXED:
        # --- fix: start
        # The folder's configuration_tiny.py and modeling_tiny.py were read and are
        # trusted: allow transformers to import them.
        load_options = {"trust_remote_code": True}
        # --- fix: end

    model = AutoModel.from_pretrained(folder, **load_options).eval()
    x = torch.randn(4, 8)
    with torch.no_grad():
        y = model(x)
    print("loaded", type(model).__name__, "output shape", tuple(y.shape))

    # --- check: start
    # The loaded model is the saved one: same class code, same weights, same output.
    loaded, reference = model.state_dict(), saved_model.state_dict()
    assert loaded.keys() == reference.keys(), "the loaded model has other parameters"
    for name, value in reference.items():
        torch.testing.assert_close(loaded[name], value, rtol=0, atol=0)
    with torch.no_grad():
        torch.testing.assert_close(y, saved_model(x))
    print(f"check: all {len(loaded)} tensors and the output equal the saved model's")
    # --- check: end
