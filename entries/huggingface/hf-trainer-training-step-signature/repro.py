"""Reproducer for hf-trainer-training-step-signature.

`python repro.py`: a Trainer subclass written for transformers 4.45 and older adds an
auxiliary z-loss (the squared log-partition of every predicted token) to the language-model
loss in `compute_loss`, and overrides `training_step(self, model, inputs)` to record the loss
of every micro-batch. Since 4.46 the training loop calls
`self.training_step(model, inputs, num_items_in_batch)`, so the first step raises
`TypeError: AuxLossTrainer.training_step() takes 3 positional arguments but 4 were given`.
`python repro.py --fixed`: both overrides take `num_items_in_batch` and pass it on
(`super().training_step(model, inputs, num_items_in_batch)`, and into the model and the
auxiliary loss), so each micro-batch's loss is its token sum divided by the number of label
tokens of the whole accumulated step, as the Trainer expects. The check trains the same
model with a plain PyTorch loop (same seed, same batches in the same order, cross-entropy
and z-loss written out, SGD) and compares the loss of every micro-batch, the logged loss of
every step and the final weights.

Everything is built in the script: a 2-layer Llama with hidden size 32 and 8 padded
sequences of 16 token ids, trained for 2 optimizer steps of 2 accumulated batches of 2 on
the CPU. Nothing is downloaded.
"""

import os
import sys
import tempfile

_hf_home = tempfile.TemporaryDirectory(prefix="repro-hf-home-")
os.environ["HF_HOME"] = _hf_home.name  # nothing is written to the user's cache
os.environ["HF_HUB_OFFLINE"] = "1"  # and nothing is fetched from the Hub

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402
from transformers import LlamaConfig, LlamaForCausalLM, Trainer, TrainingArguments  # noqa: E402

FIXED = "--fixed" in sys.argv[1:]

Z_WEIGHT = 0.1  # weight of the auxiliary z-loss
LR = 0.5  # plain SGD, so a loss scaled wrongly shows in the weights too
STEPS, BATCH, ACCUMULATE = 2, 2, 2


def z_loss_sum(logits: torch.Tensor, labels: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Sum of logsumexp(logits)^2 over the positions that predict a label, and their count."""
    mask = labels[..., 1:].ne(-100)  # position t predicts label t+1
    log_z = torch.logsumexp(logits[..., :-1, :].float(), dim=-1)
    return (log_z.pow(2) * mask).sum(), mask.sum()


class AuxLossTrainer(Trainer):
    """A trainer written for transformers 4.45 and older (the hooks' signatures of then)."""

    micro_losses: list[float]

    def compute_loss(self, model, inputs, return_outputs=False):
        outputs = model(**inputs)  # mean cross-entropy over this micro-batch's tokens
        z_sum, count = z_loss_sum(outputs.logits, inputs["labels"])
        loss = outputs.loss + Z_WEIGHT * z_sum / count
        return (loss, outputs) if return_outputs else loss

    def training_step(self, model, inputs):
        loss = super().training_step(model, inputs)
        self.micro_losses.append(loss.item())  # logged per micro-batch
        return loss


if FIXED:
    # --- fix: start
    class AuxLossTrainer(Trainer):
        """The same trainer with the hooks' signatures of transformers 4.46 and later."""

        micro_losses: list[float]

        def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):
            # The model divides its cross-entropy sum by num_items_in_batch, the label tokens
            # of the whole accumulated step; the auxiliary loss takes the same denominator.
            outputs = model(**inputs, num_items_in_batch=num_items_in_batch)
            z_sum, count = z_loss_sum(outputs.logits, inputs["labels"])
            denominator = num_items_in_batch if num_items_in_batch is not None else count
            loss = outputs.loss + Z_WEIGHT * z_sum / denominator
            return (loss, outputs) if return_outputs else loss

        def training_step(self, model, inputs, num_items_in_batch=None):
            loss = super().training_step(model, inputs, num_items_in_batch)
            self.micro_losses.append(loss.item())  # logged per micro-batch
            return loss

    # --- fix: end

# Padded sequences of different lengths: each micro-batch holds a different number of
# label tokens, so normalising per micro-batch and per step give different losses.
generator = torch.Generator().manual_seed(0)
samples = []
for length in [16, 11, 16, 7, 13, 16, 9, 16]:
    ids = torch.randint(3, 64, (16,), generator=generator)
    labels = ids.clone()
    labels[length:] = -100  # padding: no loss on these positions
    samples.append({"input_ids": ids, "labels": labels})

CONFIG = LlamaConfig(
    vocab_size=64,
    hidden_size=32,
    intermediate_size=64,
    num_hidden_layers=2,
    num_attention_heads=4,
    num_key_value_heads=2,
    max_position_embeddings=32,
)


def new_model() -> LlamaForCausalLM:
    torch.manual_seed(0)
    return LlamaForCausalLM(CONFIG)


with tempfile.TemporaryDirectory(prefix="repro-trainer-") as output_dir:
    args = TrainingArguments(
        output_dir=output_dir,
        max_steps=STEPS,
        per_device_train_batch_size=BATCH,
        gradient_accumulation_steps=ACCUMULATE,
        train_sampling_strategy="sequential",  # the batches in the order of `samples`
        optim="sgd",
        learning_rate=LR,
        lr_scheduler_type="constant",
        max_grad_norm=0.0,  # no clipping: the reference loop below is plain SGD
        logging_steps=1,
        save_strategy="no",
        report_to="none",
        use_cpu=True,
        disable_tqdm=True,
        seed=0,
    )
    trainer = AuxLossTrainer(model=new_model(), args=args, train_dataset=samples)
    trainer.micro_losses = []
    trainer.train()
    step_losses = [entry["loss"] for entry in trainer.state.log_history if "loss" in entry]
    weights = {name: value.detach().clone() for name, value in trainer.model.state_dict().items()}
    print("micro-batch losses:", trainer.micro_losses)
    print("step losses:", step_losses)

    # --- check: start
    # The reference: the same model, batches and loss in a plain PyTorch loop. Each
    # micro-batch's loss is (cross-entropy sum + Z_WEIGHT * z-loss sum) over its predicted
    # label tokens, divided by the label tokens of the whole step; SGD steps once per step.
    def reference_run(per_step_tokens: bool) -> tuple[list[float], list[float], dict]:
        model = new_model()
        model.train()
        optimizer = torch.optim.SGD(model.parameters(), lr=LR)
        micro_losses, losses = [], []
        for step in range(STEPS):
            micro = []
            for index in range(ACCUMULATE):
                start = (step * ACCUMULATE + index) * BATCH
                chunk = samples[start : start + BATCH]
                micro.append(
                    {key: torch.stack([s[key] for s in chunk]) for key in ("input_ids", "labels")}
                )
            step_tokens = sum(int(batch["labels"][:, 1:].ne(-100).sum()) for batch in micro)
            optimizer.zero_grad()
            for batch in micro:
                logits = model(input_ids=batch["input_ids"]).logits[:, :-1].float()
                targets = batch["labels"][:, 1:]
                mask = targets.ne(-100)
                ce_sum = F.cross_entropy(
                    logits.reshape(-1, CONFIG.vocab_size),
                    targets.reshape(-1),
                    ignore_index=-100,
                    reduction="sum",
                )
                z_sum = (torch.logsumexp(logits, dim=-1).pow(2) * mask).sum()
                if per_step_tokens:
                    loss = (ce_sum + Z_WEIGHT * z_sum) / step_tokens
                else:  # each micro-batch's own mean, averaged over the step
                    loss = (ce_sum + Z_WEIGHT * z_sum) / mask.sum() / ACCUMULATE
                loss.backward()
                micro_losses.append(loss.item())
            optimizer.step()
            losses.append(sum(micro_losses[-ACCUMULATE:]))
        return micro_losses, losses, model.state_dict()

    reference_micro, reference_steps, reference_weights = reference_run(per_step_tokens=True)
    assert len(trainer.micro_losses) == STEPS * ACCUMULATE, trainer.micro_losses
    torch.testing.assert_close(torch.tensor(trainer.micro_losses), torch.tensor(reference_micro))
    torch.testing.assert_close(torch.tensor(step_losses), torch.tensor(reference_steps))
    assert weights.keys() == reference_weights.keys()
    for name, value in reference_weights.items():
        torch.testing.assert_close(weights[name], value)
    # The data tell the normalisations apart: per-micro-batch means (what an override that
    # drops num_items_in_batch trains with) end with other weights.
    _, _, mean_weights = reference_run(per_step_tokens=False)
    gap = max((weights[name] - value).abs().max().item() for name, value in mean_weights.items())
    assert gap > 1e-3, gap
    print(
        f"check: {len(reference_micro)} micro-batch losses, {STEPS} step losses and all {len(weights)}"
    )
    print(
        f"tensors equal the plain PyTorch loop's (per-micro-batch means: weights off by {gap:.4f})"
    )
    # --- check: end
