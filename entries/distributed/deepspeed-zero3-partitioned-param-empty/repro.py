"""Reproducer for deepspeed-zero3-partitioned-param-empty.

`python repro.py`: a fine-tuning script builds its model, hands it to
`deepspeed.initialize` with ZeRO stage 3 (one CPU rank, gloo), and then loads the
pretrained weights with `engine.module.load_state_dict(...)`. ZeRO-3 has already split
every parameter into `param.ds_tensor` partitions and left each `param.data` an empty
tensor, so PyTorch compares the checkpoint's shapes with `torch.Size([0])`:
`size mismatch for 0.weight: copying a param with shape torch.Size([64, 16]) from
checkpoint, the shape in current model is torch.Size([0]).`
`python repro.py --fixed`: the same load inside
`deepspeed.zero.GatheredParameters(params, modifier_rank=0)`, which gathers the full
tensors, lets `load_state_dict` write them, and re-partitions the new values on exit.
The check gathers the trained model's parameters and compares them with the
checkpoint, and compares the engine's output with a plain model loaded from the same
checkpoint.
"""

import os
import socket
import sys
import tempfile

os.environ.setdefault("DS_ACCELERATOR", "cpu")  # DeepSpeed's CPU accelerator, gloo backend

import deepspeed
import torch

FIXED = "--fixed" in sys.argv[1:]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


os.environ.update(
    MASTER_ADDR="127.0.0.1", MASTER_PORT=str(free_port()), RANK="0", LOCAL_RANK="0", WORLD_SIZE="1"
)


def build_model() -> torch.nn.Module:
    return torch.nn.Sequential(
        torch.nn.Embedding(64, 16), torch.nn.Linear(16, 16), torch.nn.GELU(), torch.nn.Linear(16, 4)
    )


def load_pretrained(engine, state: dict) -> None:
    engine.module.load_state_dict(state)  # the bug: ZeRO-3 params are empty partitions here


if FIXED:
    # --- fix: start
    def load_pretrained(engine, state: dict) -> None:
        # Gather the full parameters, write them on rank 0, re-partition (and broadcast) on exit.
        params = list(engine.module.parameters())
        with deepspeed.zero.GatheredParameters(params, modifier_rank=0):
            if deepspeed.comm.get_rank() == 0:
                engine.module.load_state_dict(state)
    # --- fix: end


# The "pretrained" checkpoint: another initialisation of the same architecture.
torch.manual_seed(1)
with tempfile.TemporaryDirectory(prefix="repro-zero3-load-") as workdir:
    checkpoint = os.path.join(workdir, "pretrained.pt")
    torch.save(build_model().state_dict(), checkpoint)
    pretrained = torch.load(checkpoint, weights_only=True)

torch.manual_seed(0)
model = build_model()
config = {
    "train_micro_batch_size_per_gpu": 4,
    "optimizer": {"type": "Adam", "params": {"lr": 1e-3, "torch_adam": True}},
    "zero_optimization": {"stage": 3},
    "steps_per_print": 1000,
}
deepspeed.init_distributed(dist_backend="gloo")
engine, _, _, _ = deepspeed.initialize(model=model, model_parameters=model.parameters(), config=config)
print("shapes seen by load_state_dict:", {name: tuple(p.shape) for name, p in engine.module.named_parameters()})
load_pretrained(engine, pretrained)

tokens = torch.randint(0, 64, (4, 5))
engine.eval()
with torch.no_grad():
    output = engine(tokens)
print("output of the loaded model:", tuple(output.shape))

# --- check: start
with deepspeed.zero.GatheredParameters(list(engine.module.parameters())):
    loaded = {name: p.detach().clone() for name, p in engine.module.named_parameters()}
torch.testing.assert_close(loaded, pretrained)
reference = build_model()
reference.load_state_dict(pretrained)
with torch.no_grad():
    torch.testing.assert_close(output, reference(tokens))
print("check: ZeRO-3 partitions hold the checkpoint's weights; outputs equal a plain model's")
# --- check: end
