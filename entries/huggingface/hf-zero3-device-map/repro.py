"""Reproducer for hf-zero3-device-map.

A fine-tuning script builds its `TrainingArguments` with a DeepSpeed ZeRO-3 config (here
a dict; `--deepspeed ds_z3.json` does the same), which registers the config with
transformers, and then loads its model (a tiny Llama written with `save_pretrained`) with
`device_map="auto"`, as single-GPU scripts do. It runs as one rank of a DeepSpeed job on
the CPU (DeepSpeed's CPU accelerator, gloo), so the real ZeRO-3 code paths run.

`python repro.py`: `from_pretrained` sees ZeRO-3 enabled and a `device_map`, and raises
`ValueError: DeepSpeed Zero-3 is not compatible with passing a `device_map`.` before
reading any weight.
`python repro.py --fixed`: the same call without `device_map` (and without
`low_cpu_mem_usage`): transformers builds the model under `deepspeed.zero.Init`, which
partitions every parameter across the ranks as it is created, and loads the checkpoint
into the partitions. The check: every parameter is a ZeRO-3 partitioned parameter, and,
gathered, equals the saved model's; the gathered model's logits equal the saved model's.
"""

import os
import socket
import sys
import tempfile

os.environ.setdefault("DS_ACCELERATOR", "cpu")  # DeepSpeed's CPU accelerator, gloo backend


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


# One rank of a `deepspeed` / `torchrun` launch.
os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(free_port()), RANK="0", LOCAL_RANK="0", WORLD_SIZE="1")

import deepspeed  # noqa: E402
import torch  # noqa: E402
from transformers import AutoModelForCausalLM, LlamaConfig, LlamaForCausalLM, TrainingArguments  # noqa: E402

FIXED = "--fixed" in sys.argv[1:]

with tempfile.TemporaryDirectory(prefix="repro-zero3-device-map-") as workdir:
    checkpoint = os.path.join(workdir, "tiny-llama")
    torch.manual_seed(0)
    config = LlamaConfig(vocab_size=64, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                         num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=16)
    saved = LlamaForCausalLM(config).eval()
    saved.save_pretrained(checkpoint)

    ds_config = {
        "train_micro_batch_size_per_gpu": "auto",
        "gradient_accumulation_steps": "auto",
        "zero_optimization": {"stage": 3},
    }
    args = TrainingArguments(output_dir=os.path.join(workdir, "out"), deepspeed=ds_config, report_to="none")

    load_kwargs = {"device_map": "auto"}  # what the script passed
    if FIXED:
        # --- fix: start
        # Under ZeRO-3, DeepSpeed places the weights: no device_map (and no
        # low_cpu_mem_usage) when loading; transformers partitions them with zero.Init.
        load_kwargs = {}
        # --- fix: end
    model = AutoModelForCausalLM.from_pretrained(checkpoint, **load_kwargs).eval()
    input_ids = torch.arange(16).reshape(2, 8) * 3 % 64

    # --- check: start
    # ZeRO-3 holds every parameter as a partition; gathered, each equals the saved one,
    # and the model computes the saved model's logits.
    params = dict(model.named_parameters())
    assert params.keys() == dict(saved.named_parameters()).keys()
    assert all(hasattr(p, "ds_id") and p.numel() == 0 for p in params.values()), "not partitioned by ZeRO-3"
    with deepspeed.zero.GatheredParameters(list(params.values())), torch.no_grad():
        for name, value in saved.named_parameters():
            torch.testing.assert_close(params[name], value, rtol=0, atol=0)
        torch.testing.assert_close(model(input_ids).logits, saved(input_ids).logits)
    print(f"check: {len(params)} ZeRO-3 partitioned parameters, gathered, equal the saved model's, and so do the logits")
    # --- check: end
