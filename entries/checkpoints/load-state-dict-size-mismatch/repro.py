"""Reproducer for load-state-dict-size-mismatch.

`python repro.py`: a 10-class classifier's checkpoint is loaded into the same network
built with 5 classes (fine-tuning on a new label set); the head's shapes differ and
`load_state_dict` raises `size mismatch for fc.weight` / `fc.bias`.
`python repro.py --fixed`: the mismatched head entries are dropped from the checkpoint,
the rest is loaded with `strict=False`, and the returned missing/unexpected keys are
checked to be exactly the head, so nothing else was skipped silently. The check compares
every backbone tensor of the model with the checkpoint's.
"""

import sys

import torch
import torch.nn as nn

FIXED = "--fixed" in sys.argv[1:]


class Net(nn.Module):
    def __init__(self, num_classes: int) -> None:
        super().__init__()
        self.backbone = nn.Sequential(nn.Linear(32, 512), nn.ReLU())
        self.fc = nn.Linear(512, num_classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc(self.backbone(x))


torch.manual_seed(0)
checkpoint = Net(num_classes=10).state_dict()  # pretrained on 10 classes
model = Net(num_classes=5)                      # fine-tune on 5 classes


def load_checkpoint(model: nn.Module, state_dict: dict) -> None:
    model.load_state_dict(state_dict)  # strict, and every shape must match


if FIXED:
    # --- fix: start
    def load_checkpoint(model: nn.Module, state_dict: dict) -> None:
        """Drop entries whose shape differs from the model's, load the rest, check what was skipped."""
        own = model.state_dict()
        dropped = {k for k, v in state_dict.items() if k in own and v.shape != own[k].shape}
        kept = {k: v for k, v in state_dict.items() if k not in dropped}
        result = model.load_state_dict(kept, strict=False)
        assert set(result.missing_keys) == dropped, result.missing_keys  # only the head is new
        assert not result.unexpected_keys, result.unexpected_keys
        print("re-initialised (not loaded):", sorted(dropped))
    # --- fix: end


load_checkpoint(model, checkpoint)
logits = model(torch.randn(4, 32))

# --- check: start
pretrained_backbone = {k: v for k, v in checkpoint.items() if k.startswith("backbone.")}
loaded_backbone = {k: v for k, v in model.state_dict().items() if k.startswith("backbone.")}
torch.testing.assert_close(loaded_backbone, pretrained_backbone)
assert logits.shape == (4, 5)
print("check: every backbone tensor equals the checkpoint's; the new head has 5 outputs")
# --- check: end
