"""Reproducer for diffusers-peft-backend-required.

diffusers decides once, when it is imported, whether it may use PEFT for LoRA
(`USE_PEFT_BACKEND` in diffusers/utils/constants.py): peft must be installed at or above
`MIN_PEFT_VERSION` (0.17.0 in diffusers 0.40 and later, 0.6.0 before) and transformers at
or above `MIN_TRANSFORMERS_VERSION` (4.34.0). Neither is a dependency of the diffusers
wheel, so `pip install -U diffusers` leaves an old peft where it is. Every LoRA method then
refuses: on the diffusers 0.42.1 used here `pipe.load_lora_weights(...)` raises
`ValueError: PEFT backend is required for `load_lora_weights()`.` (diffusers 0.27 to 0.39
printed `PEFT backend is required for this method.` for the same call).

What is carried: the old peft. peft 0.15.2 is installed apart
(`reproducer.private_requirements`) and put first on `sys.path` before diffusers is
imported, so diffusers' own check reads its version from its metadata and rejects it, as
it does in an environment where `pip install diffusers` was upgraded and peft was not.
(peft 0.16.0 cannot be used for this: it no longer imports under transformers 5.)

`python repro.py`: a tiny Stable Diffusion pipeline built from configs (a UNet with
cross-attention, a VAE and a CLIP text encoder, random weights, nothing downloaded) loads
a rank-2 LoRA for the UNet's self-attention query and value projections, made in the
script and saved with the pipeline's own `save_lora_weights`.
`python repro.py --fixed`: the old peft is taken off the path, which is what upgrading
peft does; the catalog's peft 0.21.2 is found. The LoRA is loaded with adapter weight 0.5,
and the check compares by hand: each adapted layer's output equals the base layer's
output plus 0.5 * (x @ A^T @ B^T), and after `fuse_lora()` and `unload_lora_weights()` the
UNet's weights equal W + 0.5 * B @ A for the adapted layers (the rest unchanged) and its
output equals that of an untouched copy of the base UNet given those weights by hand.
"""

import copy
import importlib.metadata
import os
import sys
import tempfile

FIXED = "--fixed" in sys.argv[1:]

# peft 0.15.2, installed apart (reproducer.private_requirements), first on the path.
OLD_PEFT = os.path.join(sys.prefix, "failpedia-private", "peft-0.15.2")
sys.path.insert(0, OLD_PEFT)

if FIXED:
    # --- fix: start
    # Upgrade peft (`pip install -U "peft>=0.17.0"`; transformers >= 4.34 too), then
    # restart Python: diffusers reads the versions once, when it is imported.
    sys.path.remove(OLD_PEFT)
    # --- fix: end

import torch  # noqa: E402
from diffusers import (  # noqa: E402
    AutoencoderKL,
    DDIMScheduler,
    StableDiffusionPipeline,
    UNet2DConditionModel,
)
from diffusers.utils import USE_PEFT_BACKEND  # noqa: E402
from transformers import CLIPTextConfig, CLIPTextModel  # noqa: E402

print(
    f"diffusers {importlib.metadata.version('diffusers')}, "
    f"peft {importlib.metadata.version('peft')}, "
    f"transformers {importlib.metadata.version('transformers')}: "
    f"USE_PEFT_BACKEND = {USE_PEFT_BACKEND}"
)

RANK, ADAPTER_WEIGHT = 2, 0.5

torch.manual_seed(0)
unet = UNet2DConditionModel(
    sample_size=8,
    in_channels=4,
    out_channels=4,
    block_out_channels=(4, 8),
    layers_per_block=1,
    down_block_types=("DownBlock2D", "CrossAttnDownBlock2D"),
    up_block_types=("CrossAttnUpBlock2D", "UpBlock2D"),
    cross_attention_dim=8,
    attention_head_dim=2,
    norm_num_groups=2,
)
vae = AutoencoderKL(
    in_channels=3,
    out_channels=3,
    block_out_channels=(4,),
    down_block_types=("DownEncoderBlock2D",),
    up_block_types=("UpDecoderBlock2D",),
    latent_channels=4,
    norm_num_groups=2,
)
text_config = CLIPTextConfig(
    hidden_size=8,
    intermediate_size=16,
    num_attention_heads=2,
    num_hidden_layers=1,
    vocab_size=100,
    max_position_embeddings=16,
    projection_dim=8,
    bos_token_id=0,
    eos_token_id=1,
    pad_token_id=1,
)
pipe = StableDiffusionPipeline(
    vae=vae,
    text_encoder=CLIPTextModel(text_config),
    tokenizer=None,
    unet=unet,
    scheduler=DDIMScheduler(steps_offset=1, clip_sample=False),
    safety_checker=None,
    feature_extractor=None,
    requires_safety_checker=False,
)
base_unet = copy.deepcopy(pipe.unet)  # the reference: never touched by diffusers' LoRA code

# A LoRA for the self-attention query and value projections, in PEFT's key format.
generator = torch.Generator().manual_seed(1)
targets = [
    name for name, _ in base_unet.named_modules() if name.endswith(("attn1.to_q", "attn1.to_v"))
]
lora = {}
for name in targets:
    linear = base_unet.get_submodule(name)
    lora[f"{name}.lora_A.weight"] = torch.randn(RANK, linear.in_features, generator=generator)
    lora[f"{name}.lora_B.weight"] = torch.randn(linear.out_features, RANK, generator=generator)
print(f"LoRA of rank {RANK} for {len(targets)} layers")

x = torch.randn(3, 5, 8, generator=generator)  # tokens reaching each adapted layer
sample = torch.randn(2, 4, 8, 8, generator=generator)
timestep = torch.tensor([10, 500])
context = torch.randn(2, 5, 8, generator=generator)

with tempfile.TemporaryDirectory(prefix="repro-peft-backend-") as lora_dir:
    StableDiffusionPipeline.save_lora_weights(lora_dir, unet_lora_layers=lora)
    pipe.load_lora_weights(lora_dir, adapter_name="style")
pipe.set_adapters(["style"], adapter_weights=[ADAPTER_WEIGHT])

with torch.no_grad():
    adapted_out = {name: pipe.unet.get_submodule(name)(x) for name in targets}
    base_out = {name: base_unet.get_submodule(name)(x) for name in targets}
    pipe.fuse_lora(components=["unet"])
    pipe.unload_lora_weights()  # the fused weights stay, the LoRA layers go
    fused_state = pipe.unet.state_dict()
    fused_sample = pipe.unet(sample, timestep, encoder_hidden_states=context).sample
    plain_sample = base_unet(sample, timestep, encoder_hidden_states=context).sample

    # --- check: start
    # Each adapted layer: base output + weight * (x @ A^T @ B^T), computed here by hand.
    for name in targets:
        A, B = lora[f"{name}.lora_A.weight"], lora[f"{name}.lora_B.weight"]
        expected = base_out[name] + ADAPTER_WEIGHT * (x @ A.T @ B.T)
        torch.testing.assert_close(adapted_out[name], expected)
    # Fused: W + weight * B @ A for the adapted layers, every other weight unchanged.
    reference = base_unet.state_dict()
    assert fused_state.keys() == reference.keys(), set(fused_state) ^ set(reference)
    for name in targets:
        A, B = lora[f"{name}.lora_A.weight"], lora[f"{name}.lora_B.weight"]
        reference[f"{name}.weight"] = reference[f"{name}.weight"] + ADAPTER_WEIGHT * B @ A
    for key, value in reference.items():
        torch.testing.assert_close(fused_state[key], value, msg=key)
    # The whole UNet equals an untouched copy given those weights by hand...
    base_unet.load_state_dict(reference)
    by_hand = base_unet(sample, timestep, encoder_hidden_states=context).sample
    torch.testing.assert_close(fused_sample, by_hand)
    # ...and the LoRA changed its output.
    assert (fused_sample - plain_sample).abs().max() > 1e-3
    print(
        f"check: {len(targets)} adapted layers equal base + {ADAPTER_WEIGHT} * x A^T B^T; "
        f"fused weights equal W + {ADAPTER_WEIGHT} * B A; UNet output equals the hand-merged "
        f"copy (max change from base {(fused_sample - plain_sample).abs().max():.3g})"
    )
    # --- check: end
