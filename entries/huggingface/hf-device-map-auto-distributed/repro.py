"""Reproducer for hf-device-map-auto-distributed.

`python repro.py`: a fine-tuning script loads a causal language model with
`from_pretrained(..., device_map="auto")` and trains it with Accelerate, started as two
processes the way `torchrun --nproc_per_node 2` or `accelerate launch` start them (here
with `torch.multiprocessing.spawn` and the same environment variables: `RANK`,
`WORLD_SIZE`, `LOCAL_RANK`, `MASTER_ADDR`, `MASTER_PORT`; gloo on the CPU). The machine
has no GPUs to split the model over, so a `max_memory` budget makes `device_map="auto"`
split it the way it splits a large model over several GPUs: part of the layers on one
device (the CPU), the rest elsewhere (offloaded to disk). `Accelerator.prepare` finds the
split model (`hf_device_map` with more than one entry) under a multi-process launch and
raises on every rank: `ValueError: You can't train a model that has been loaded with
`device_map='auto'` in any distributed mode. ...`.
`python repro.py --fixed`: under the multi-process launcher each process loads the whole
model onto its own device (no `device_map`), and `prepare` wraps it in
DistributedDataParallel. The check compares both ranks' trained weights with the same
training run in one process on the whole batch (DDP averages the two half-batch
gradients into the full-batch gradient).

The model (a 4-layer GPT-2 with a 64-wide hidden state) is built and saved in the
script; nothing is downloaded, and the run uses the CPU.
"""

import os
import socket
import sys
import tempfile

os.environ["HF_HUB_OFFLINE"] = "1"

import torch
import torch.multiprocessing as mp
from accelerate import Accelerator
from transformers import AutoModelForCausalLM, GPT2Config, GPT2LMHeadModel

FIXED = "--fixed" in sys.argv[1:]
WORLD_SIZE, STEPS, BATCH, LENGTH = 2, 3, 4, 8


def batches() -> torch.Tensor:
    return torch.randint(0, 50, (STEPS, BATCH, LENGTH), generator=torch.Generator().manual_seed(1))


def load_for_training(folder: str, rank: int):
    size = sum(p.numel() * p.element_size() for p in GPT2LMHeadModel.from_pretrained(folder).parameters())
    # Too little room for the whole model on one device: "auto" splits it, as it splits a
    # large model over several GPUs.
    return AutoModelForCausalLM.from_pretrained(
        folder,
        device_map="auto",
        max_memory={"cpu": int(size * 0.7)},
        offload_folder=f"{folder}-offload-{rank}",
    )


if FIXED:
    # --- fix: start
    def load_for_training(folder: str, rank: int):
        # Data parallelism: every process holds the whole model on its own device
        # (on GPUs: device_map={"": local_rank}); no device_map="auto".
        return AutoModelForCausalLM.from_pretrained(folder)
    # --- fix: end


def train(model, accelerator, rank: int, world: int) -> None:
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    model, optimizer = accelerator.prepare(model, optimizer)
    model.train()
    share = BATCH // world
    for step, ids in enumerate(batches()):
        part = ids[rank * share : (rank + 1) * share]
        loss = model(input_ids=part, labels=part).loss
        accelerator.backward(loss)
        optimizer.step()
        optimizer.zero_grad()
        if rank == 0:
            print(f"step {step}: loss {loss.item():.4f}", flush=True)


def worker(rank: int, port: int, work: str) -> None:
    # What torchrun / accelerate launch put in each process' environment.
    os.environ.update(
        RANK=str(rank), LOCAL_RANK=str(rank), WORLD_SIZE=str(WORLD_SIZE),
        MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port),
    )  # fmt: skip
    accelerator = Accelerator(cpu=True)
    print(f"rank {rank}: distributed_type={accelerator.distributed_type}", flush=True)
    model = load_for_training(os.path.join(work, "tiny-gpt2"), rank)
    train(model, accelerator, rank, WORLD_SIZE)
    unwrapped = accelerator.unwrap_model(model)
    torch.save(unwrapped.state_dict(), os.path.join(work, f"rank{rank}.pt"))
    accelerator.end_training()


if __name__ == "__main__":
    _work = tempfile.TemporaryDirectory(prefix="repro-device-map-auto-")
    work = _work.name
    os.environ["HF_HOME"] = os.path.join(work, "hf-home")
    model_folder = os.path.join(work, "tiny-gpt2")
    torch.manual_seed(0)
    config = GPT2Config(n_layer=4, n_embd=64, n_head=2, vocab_size=50, n_positions=16,
                        resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0)  # fmt: skip
    GPT2LMHeadModel(config).save_pretrained(model_folder)
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    mp.spawn(worker, args=(port, work), nprocs=WORLD_SIZE, join=True)

    # --- check: start
    # Reference: the same steps in one process, without Accelerate, on the whole batch.
    reference = GPT2LMHeadModel.from_pretrained(model_folder)
    optimizer = torch.optim.SGD(reference.parameters(), lr=0.1)
    reference.train()
    for ids in batches():
        reference(input_ids=ids, labels=ids).loss.backward()
        optimizer.step()
        optimizer.zero_grad()
    expected = reference.state_dict()
    for rank in range(WORLD_SIZE):
        trained = torch.load(os.path.join(work, f"rank{rank}.pt"))
        for name, value in expected.items():
            torch.testing.assert_close(trained[name], value, rtol=1e-4, atol=1e-5, msg=f"rank {rank}: {name}")
    print(f"check: both ranks' weights after {STEPS} steps equal the one-process full-batch run")
    # --- check: end
