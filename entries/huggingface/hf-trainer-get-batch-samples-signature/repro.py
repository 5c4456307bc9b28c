"""Reproducer for hf-trainer-get-batch-samples-signature.

`python repro.py`: a Trainer subclass overrides `get_batch_samples`, the hook that gathers
the batches of one optimizer step and counts their label tokens (for the loss of gradient
accumulation), with the signature transformers 4.46 to 4.49 call,
`get_batch_samples(self, epoch_iterator, num_batches)`, as unsloth's patch and
LLaMA-Factory's trainers did. Since 4.50 the training loop calls
`self.get_batch_samples(epoch_iterator, num_batches, device)`, so the first step raises
`TypeError: TokenCountingTrainer.get_batch_samples() takes 3 positional arguments but 4
were given`.
`python repro.py --fixed`: the override takes the `device` argument and puts the token
count on it, as transformers' own method does. The check trains the same model on the same
data with the stock `Trainer` and compares the loss of every step and the final weights.

Everything is built in the script: a 2-layer Llama with hidden size 32 and 16 token
sequences with padded labels, trained for 2 steps of 2 accumulated batches on the CPU.
Nothing is downloaded.
"""

import os
import sys
import tempfile
from collections.abc import Iterator

_hf_home = tempfile.TemporaryDirectory(prefix="repro-hf-home-")
os.environ["HF_HOME"] = _hf_home.name  # nothing is written to the user's cache
os.environ["HF_HUB_OFFLINE"] = "1"  # and nothing is fetched from the Hub

import torch  # noqa: E402
from transformers import LlamaConfig, LlamaForCausalLM, Trainer, TrainingArguments  # noqa: E402

FIXED = "--fixed" in sys.argv[1:]


def collect_batches(
    epoch_iterator: Iterator, num_batches: int, device: torch.device | None
) -> tuple[list, torch.Tensor | None]:
    """The batches of one optimizer step and the number of label tokens they hold."""
    batches = []
    for _ in range(num_batches):
        try:
            batches.append(next(epoch_iterator))
        except StopIteration:
            break
    if not batches:
        return batches, None
    # Causal LM losses predict token t+1 from token t: the first label of a row is never used.
    count = sum(batch["labels"][..., 1:].ne(-100).sum() for batch in batches)
    return batches, count.to(device) if device is not None else count


class TokenCountingTrainer(Trainer):
    """A trainer written for transformers 4.46 to 4.49."""

    def get_batch_samples(self, epoch_iterator, num_batches):
        return collect_batches(epoch_iterator, num_batches, None)


if FIXED:
    # --- fix: start
    class TokenCountingTrainer(Trainer):
        """The same trainer with the hook's signature of transformers 4.50 and later."""

        def get_batch_samples(self, epoch_iterator, num_batches, device):
            return collect_batches(epoch_iterator, num_batches, device)

    # --- fix: end

generator = torch.Generator().manual_seed(0)
samples = []
for length in [16, 11, 16, 7, 13, 16, 9, 16]:
    ids = torch.randint(3, 64, (16,), generator=generator)
    labels = ids.clone()
    labels[length:] = -100  # padding: no loss on these positions
    samples.append({"input_ids": ids, "labels": labels})


def train(trainer_class: type[Trainer], output_dir: str) -> tuple[list[float], dict[str, torch.Tensor]]:
    """Two optimizer steps of two accumulated batches each; the losses and the final weights."""
    torch.manual_seed(0)
    config = LlamaConfig(
        vocab_size=64,
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=32,
    )
    args = TrainingArguments(
        output_dir=output_dir,
        max_steps=2,
        per_device_train_batch_size=2,
        gradient_accumulation_steps=2,
        learning_rate=1e-2,
        logging_steps=1,
        save_strategy="no",
        report_to="none",
        use_cpu=True,
        disable_tqdm=True,
        seed=0,
    )
    trainer = trainer_class(model=LlamaForCausalLM(config), args=args, train_dataset=samples)
    trainer.train()
    losses = [entry["loss"] for entry in trainer.state.log_history if "loss" in entry]
    return losses, {name: value.detach().clone() for name, value in trainer.model.state_dict().items()}


with tempfile.TemporaryDirectory(prefix="repro-trainer-") as workdir:
    losses, weights = train(TokenCountingTrainer, os.path.join(workdir, "subclass"))
    print("losses:", losses)

    # --- check: start
    # The subclass trains exactly as the stock Trainer does on the same model, data and seed:
    # the same loss at each of the 2 steps (normalised by the same token count) and the
    # same weights at the end.
    reference_losses, reference_weights = train(Trainer, os.path.join(workdir, "reference"))
    assert len(losses) == len(reference_losses) == 2, (losses, reference_losses)
    torch.testing.assert_close(torch.tensor(losses), torch.tensor(reference_losses))
    assert weights.keys() == reference_weights.keys()
    for name, value in reference_weights.items():
        torch.testing.assert_close(weights[name], value)
    print(f"check: losses {losses} and all {len(weights)} tensors equal the stock Trainer's")
    # --- check: end
