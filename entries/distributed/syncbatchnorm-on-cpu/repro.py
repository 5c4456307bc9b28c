"""Reproducer for syncbatchnorm-on-cpu.

`python repro.py`: a segmentation-style model whose config asks for synchronized batch
norm (`nn.SyncBatchNorm.convert_sync_batchnorm`, as a multi-GPU config does) is
fine-tuned on CPU, in a process started like the distributed job (gloo process group,
one rank, as `torchrun --nproc_per_node=1` on a machine without a GPU). The first
training forward raises `ValueError: SyncBatchNorm expected input tensor to be on GPU
or XPU or privateuseone`: SyncBatchNorm checks the device before anything else whenever
it is training inside an initialized process group.
`python repro.py --fixed`: the SyncBatchNorm layers are converted back to BatchNorm2d
for the CPU run, keeping their weights, biases and running statistics (the conversion
mmcv/mmengine's `revert_sync_batchnorm` does). The check trains a model built with
BatchNorm2d from the start on the same data and asserts equal outputs, weights and
running statistics after training, in train and eval mode.
"""

import os
import random
import socket
import sys

import torch
import torch.distributed as dist
import torch.nn as nn

FIXED = "--fixed" in sys.argv[1:]
STEPS = 4


def build_model() -> nn.Sequential:
    torch.manual_seed(0)
    return nn.Sequential(
        nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(),
        nn.Conv2d(8, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(),
        nn.Conv2d(8, 2, 1),
    )


def data() -> tuple[torch.Tensor, torch.Tensor]:
    g = torch.Generator().manual_seed(1)
    return torch.randn(STEPS, 4, 3, 16, 16, generator=g), torch.randint(0, 2, (STEPS, 4, 16, 16), generator=g)


def prepare_for_cpu(model: nn.Module) -> nn.Module:
    return model  # the bug: the SyncBatchNorm layers stay


if FIXED:
    # --- fix: start
    def prepare_for_cpu(model: nn.Module) -> nn.Module:
        # Convert every SyncBatchNorm back to BatchNorm2d, keeping its parameters and statistics.
        for name, child in model.named_children():
            if isinstance(child, nn.SyncBatchNorm):
                bn = nn.BatchNorm2d(child.num_features, child.eps, child.momentum,
                                    child.affine, child.track_running_stats)
                bn.load_state_dict(child.state_dict())
                bn.train(child.training)
                setattr(model, name, bn)
            else:
                prepare_for_cpu(child)
        return model
    # --- fix: end


def train(model: nn.Module) -> list[torch.Tensor]:
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    xs, ys = data()
    outputs = []
    model.train()
    for step in range(STEPS):
        out = model(xs[step])
        loss = nn.functional.cross_entropy(out, ys[step])
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        outputs.append(out.detach())
        print(f"step {step}: loss {loss.item():.5f}", flush=True)
    model.eval()
    with torch.no_grad():
        outputs.append(model(xs[0]))
    return outputs


def free_port() -> int:
    for port in random.Random().sample(range(20000, 32000), 200):
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    raise RuntimeError("no free port between 20000 and 32000")


if __name__ == "__main__":
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(free_port()))
    dist.init_process_group("gloo", rank=0, world_size=1)
    model = nn.SyncBatchNorm.convert_sync_batchnorm(build_model())  # the multi-GPU config
    model = prepare_for_cpu(model)
    outputs = train(model)
    dist.destroy_process_group()

    # --- check: start
    # reference: the same model with plain BatchNorm2d, trained the same way
    reference = build_model()
    expected = train(reference)
    for i, (got, want) in enumerate(zip(outputs, expected, strict=True)):
        torch.testing.assert_close(got, want, msg=f"output {i}")
    assert model.state_dict().keys() == reference.state_dict().keys()
    for name, value in reference.state_dict().items():
        torch.testing.assert_close(model.state_dict()[name], value, msg=name)
    print("check: outputs, weights and running statistics equal the BatchNorm2d model's")
    # --- check: end
