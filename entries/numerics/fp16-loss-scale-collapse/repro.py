"""Reproducer for fp16-loss-scale-collapse.

`python repro.py`: a small regression model trained with DeepSpeed's mixed-precision
configuration `{"fp16": {"enabled": true}}` on raw 8-bit pixel intensities (0-255, not
normalized) against targets in the hundreds. The mean squared error computed in fp16
squares errors of several hundred: past fp16's maximum of 65504, so the loss is inf on
every step, whatever the loss scale. The training loop takes each step the way DeepSpeed's
ZeRO optimizer does around its loss scaler: the scaler comes from DeepSpeed's
`CreateLossScaler` with the dynamic-scaling arguments DeepSpeed derives from the config
(initial scale 2**16, hysteresis 2, minimum 1), the loss is scaled and backpropagated by
the scaler, the gradients are checked with DeepSpeed's `has_inf_or_nan`, `update_scale`
halves the scale and skips the step on overflow, and otherwise the unscaled gradients
update fp32 master weights with Adam. DeepSpeed's `DynamicLossScaler` logs `[deepspeed]
OVERFLOW! Rank 0 Skipping step. Attempted loss scale: 65536, reducing to 32768` and so on
down to `Attempted loss scale: 2, reducing to 1`, then raises `Exception: Current loss
scale already at minimum - cannot decrease scale anymore. Exiting run.` The DeepSpeed engine
itself refuses fp16 on CPUs without AVX512-FP16 or AMX-FP16 (`Type fp16 is not supported on
your device.`), so the loop stands in for it and runs on any CPU.
`python repro.py --fixed`: the config asks for bf16 instead (`{"bf16": {"enabled":
true}}`), which has fp32's range: DeepSpeed creates no dynamic scaler for it, the squared
errors stay finite and every step updates the weights.
The check: all steps were taken, and the fp32 master weights trained in bf16 agree, to
within 5% of how far training moved them, with plain fp32 training in torch (no DeepSpeed,
no scaling) from the same initial weights on the same batches; the loss fell by more than
90%.
"""

import os
import socket
import sys

os.environ.setdefault("DS_ACCELERATOR", "cpu")  # DeepSpeed's CPU accelerator, gloo backend

import deepspeed
import torch
from deepspeed.runtime.fp16.loss_scaler import CreateLossScaler
from deepspeed.runtime.precision_config import get_bfloat16_config, get_float16_config
from deepspeed.runtime.utils import has_inf_or_nan
from deepspeed.utils.logging import set_log_level_from_string

FIXED = "--fixed" in sys.argv[1:]
STEPS = 30
LEARNING_RATE = 1e-2
config = {"fp16": {"enabled": True}}  # DeepSpeed's defaults: dynamic loss scaling from 2**16
if FIXED:
    # --- fix: start
    config = {"bf16": {"enabled": True}}  # fp32's range: no loss scaling, nothing overflows
    # --- fix: end


def build_model() -> torch.nn.Module:
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(16, 64), torch.nn.ReLU(), torch.nn.Linear(64, 1))


def batch(step: int) -> tuple[torch.Tensor, torch.Tensor]:
    generator = torch.Generator().manual_seed(step)
    pixels = torch.randint(0, 256, (32, 16), generator=generator).float()  # not normalized
    return pixels, pixels.mean(dim=1, keepdim=True) * 4 + 100  # targets in the hundreds


def train_like_deepspeed(dtype: torch.dtype, scaler) -> tuple[list[torch.Tensor], list[float], int]:
    """Mixed precision as DeepSpeed's ZeRO optimizer does it: fp32 master weights, the
    losses and the number of steps that updated the weights."""
    model = build_model()
    master = [p.detach().clone().requires_grad_(True) for p in model.parameters()]
    model.to(dtype)
    optimizer = torch.optim.Adam(master, lr=LEARNING_RATE)
    losses, updates = [], 0
    for step in range(STEPS):
        x, y = batch(step)
        loss = torch.nn.functional.mse_loss(model(x.to(dtype)), y.to(dtype))
        losses.append(loss.item())
        scaler.backward(loss.float())  # loss * scaler.cur_scale, then backward
        overflow = any(has_inf_or_nan(p.grad) for p in model.parameters())
        scaler.update_scale(overflow)  # on overflow: log, halve the scale, or raise at minimum
        if not overflow:
            for weight, p in zip(master, model.parameters()):
                weight.grad = p.grad.float() / scaler.cur_scale
            optimizer.step()
            updates += 1
            with torch.no_grad():
                for weight, p in zip(master, model.parameters()):
                    p.copy_(weight)
        model.zero_grad(set_to_none=True)
        optimizer.zero_grad(set_to_none=True)
    return [weight.detach() for weight in master], losses, updates


def train_fp32_reference() -> tuple[list[torch.Tensor], list[float]]:
    """The same training in plain fp32 torch: no DeepSpeed, no loss scaling."""
    model = build_model()
    optimizer = torch.optim.Adam(model.parameters(), lr=LEARNING_RATE)
    losses = []
    for step in range(STEPS):
        x, y = batch(step)
        loss = torch.nn.functional.mse_loss(model(x), y)
        losses.append(loss.item())
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    return [p.detach() for p in model.parameters()], losses


if __name__ == "__main__":
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    os.environ.update(
        MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port), RANK="0", LOCAL_RANK="0",
        WORLD_SIZE="1", LOCAL_SIZE="1",
    )  # fmt: skip
    deepspeed.init_distributed(dist_backend="gloo")
    set_log_level_from_string("info")  # DeepSpeed >= 0.17.6 logs OVERFLOW lines at info only

    fp16, bf16 = get_float16_config(config), get_bfloat16_config(config)
    dtype = torch.float16 if fp16.enabled else torch.bfloat16 if bf16.enabled else torch.float32
    # What the DeepSpeed engine hands its ZeRO optimizer for this config.
    scaler = CreateLossScaler(
        dtype=dtype,
        static_loss_scale=fp16.loss_scale,
        dynamic_scaling=fp16.loss_scale == 0,
        dynamic_loss_args=fp16.dynamic_loss_scale_args(),
    )
    weights, losses, updates = train_like_deepspeed(dtype, scaler)
    print(f"trained {STEPS} steps in {dtype}: loss {losses[0]:.0f} -> {losses[-1]:.0f}")

    # --- check: start
    reference, reference_losses = train_fp32_reference()
    initial = [p.detach() for p in build_model().parameters()]
    assert updates == STEPS, f"{STEPS - updates} steps skipped"
    for trained, expected, start in zip(weights, reference, initial):
        moved = (expected - start).abs().max()
        assert moved > 0.01, "training moved no weight"
        assert (trained - expected).abs().max() <= 0.05 * moved, "bf16 training strays from fp32"
    assert sum(losses[-5:]) < 0.1 * 5 * losses[0], "the loss did not fall"
    print(f"check: bf16 weights agree with fp32 training (fp32 loss {reference_losses[-1]:.0f})")
    # --- check: end
