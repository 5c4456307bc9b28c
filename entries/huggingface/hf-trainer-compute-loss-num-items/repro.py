"""Reproducer for hf-trainer-compute-loss-num-items.

`python repro.py`: a Trainer subclass written for transformers 4.45 and older overrides
`compute_loss(self, model, inputs, return_outputs=False)` to train a language model with a
class-weighted cross-entropy (function words count a quarter). Since 4.46 `training_step`
calls `self.compute_loss(model, inputs, num_items_in_batch=num_items_in_batch)`, so the first
step raises `TypeError: WeightedLossTrainer.compute_loss() got an unexpected keyword argument
'num_items_in_batch'`.
`python repro.py --fixed`: the override takes `num_items_in_batch=None` and divides its
weighted loss sum by it (the label tokens of the whole accumulated step, which the Trainer
counts), and by this micro-batch's own label tokens when it is not given. The check trains
the same model with a plain PyTorch loop (same seed, same batches in the same order, the
weighted cross-entropy written out, SGD) and compares the logged loss of every step, the
final weights and the evaluation loss; it also trains an override that accepts the argument
but ignores it, and shows that it ends with other weights.

Everything is built in the script: a word-level vocabulary from 12 short sentences, a
2-layer Llama with hidden size 32, trained for 2 optimizer steps of 2 accumulated batches of
2 padded sentences on the CPU. Nothing is downloaded.
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

LR = 0.5  # plain SGD, so a loss scaled wrongly shows in the weights too
STEPS, BATCH, ACCUMULATE = 2, 2, 2

# Word-level data: sentences of different lengths, so each micro-batch holds a different
# number of label tokens and per-micro-batch means differ from one mean over the step.
SENTENCES = [
    "the cat sat on the mat .",
    "a dog ran .",
    "the bird sang a song in the tall green tree by the river .",
    "rain fell .",
    "the child read a book about the sea and the stars .",
    "a fox jumped over the fence .",
    "the old man walked to the market in the morning .",
    "snow fell on the hills .",
    "the cat slept .",
    "a boat crossed the lake at dawn .",
    "the dog ate .",
    "the girl painted a picture of the moon .",
]
PAD, MAX_LEN = "<pad>", 16
WORDS = sorted({word for sentence in SENTENCES for word in sentence.split()})
VOCAB = {PAD: 0, **{word: i + 1 for i, word in enumerate(WORDS)}}
FUNCTION_WORDS = {"the", "a", "on", "in", "by", "to", "at", "of", "and", "about", "over", "."}
# Class weights of the loss: function words count a quarter of content words.
CLASS_WEIGHTS = torch.tensor(
    [0.25 if word in FUNCTION_WORDS else 1.0 for word in VOCAB], dtype=torch.float32
)


def encode(sentence: str) -> dict[str, torch.Tensor]:
    ids = [VOCAB[word] for word in sentence.split()]
    length = len(ids)
    ids = ids + [VOCAB[PAD]] * (MAX_LEN - length)
    input_ids = torch.tensor(ids)
    labels = input_ids.clone()
    labels[length:] = -100  # padding: no loss on these positions
    attention_mask = (torch.arange(MAX_LEN) < length).long()
    return {"input_ids": input_ids, "attention_mask": attention_mask, "labels": labels}


def weighted_ce_sum(
    logits: torch.Tensor, labels: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor]:
    """Class-weighted cross-entropy summed over the positions that predict a label, and their count."""
    logits, targets = logits[:, :-1].float(), labels[:, 1:]  # position t predicts label t+1
    mask = targets.ne(-100)
    per_token = F.cross_entropy(
        logits.reshape(-1, logits.size(-1)),
        targets.reshape(-1),
        ignore_index=-100,
        reduction="none",
    ).view_as(targets)
    weights = CLASS_WEIGHTS.to(logits.device)[targets.clamp(min=0)]
    return (per_token * weights * mask).sum(), mask.sum()


class WeightedLossTrainer(Trainer):
    """A trainer written for transformers 4.45 and older (the hook's signature of then)."""

    def compute_loss(self, model, inputs, return_outputs=False):
        labels = inputs["labels"]
        outputs = model(input_ids=inputs["input_ids"], attention_mask=inputs["attention_mask"])
        loss_sum, count = weighted_ce_sum(outputs.logits, labels)
        loss = loss_sum / count  # mean over this micro-batch's label tokens
        return (loss, outputs) if return_outputs else loss


if FIXED:
    # --- fix: start
    class WeightedLossTrainer(Trainer):
        """The same trainer with the hook's signature of transformers 4.46 and later."""

        def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):
            labels = inputs["labels"]
            outputs = model(input_ids=inputs["input_ids"], attention_mask=inputs["attention_mask"])
            loss_sum, count = weighted_ce_sum(outputs.logits, labels)
            # num_items_in_batch: the label tokens of the whole accumulated step, counted by the
            # Trainer. Dividing the sum by it makes the micro-batch losses add up to one loss
            # over the step, as the Trainer's own loss does; without it, this batch's mean.
            denominator = num_items_in_batch if num_items_in_batch is not None else count
            loss = loss_sum / denominator
            return (loss, outputs) if return_outputs else loss

    # --- fix: end

train_samples = [encode(sentence) for sentence in SENTENCES[: STEPS * ACCUMULATE * BATCH]]
eval_samples = [encode(sentence) for sentence in SENTENCES[STEPS * ACCUMULATE * BATCH :]]

CONFIG = LlamaConfig(
    vocab_size=len(VOCAB),
    hidden_size=32,
    intermediate_size=64,
    num_hidden_layers=2,
    num_attention_heads=4,
    num_key_value_heads=2,
    max_position_embeddings=32,
    pad_token_id=VOCAB[PAD],
)


def new_model() -> LlamaForCausalLM:
    torch.manual_seed(0)
    return LlamaForCausalLM(CONFIG)


def train(trainer_class: type, output_dir: str) -> tuple[list[float], dict, float]:
    args = TrainingArguments(
        output_dir=output_dir,
        max_steps=STEPS,
        per_device_train_batch_size=BATCH,
        per_device_eval_batch_size=BATCH,
        gradient_accumulation_steps=ACCUMULATE,
        train_sampling_strategy="sequential",  # the batches in the order of `train_samples`
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
    trainer = trainer_class(
        model=new_model(), args=args, train_dataset=train_samples, eval_dataset=eval_samples
    )
    trainer.train()
    losses = [entry["loss"] for entry in trainer.state.log_history if "loss" in entry]
    weights = {name: value.detach().clone() for name, value in trainer.model.state_dict().items()}
    eval_loss = trainer.evaluate()["eval_loss"]
    return losses, weights, eval_loss


with tempfile.TemporaryDirectory(prefix="repro-trainer-") as output_dir:
    step_losses, weights, eval_loss = train(WeightedLossTrainer, output_dir)
    print("step losses:", step_losses)
    print("eval loss:", eval_loss)

    # --- check: start
    # The reference: the same model, batches and weighted loss in a plain PyTorch loop.
    # Each micro-batch's loss is its weighted cross-entropy sum divided by the label tokens
    # of the whole step (per_step_tokens=True); SGD steps once per step.
    def batches(samples: list, start: int) -> dict[str, torch.Tensor]:
        chunk = samples[start : start + BATCH]
        return {key: torch.stack([s[key] for s in chunk]) for key in chunk[0]}

    def reference_run(per_step_tokens: bool) -> tuple[list[float], dict, float]:
        model = new_model()
        model.train()
        optimizer = torch.optim.SGD(model.parameters(), lr=LR)
        losses = []
        for step in range(STEPS):
            micro = [
                batches(train_samples, (step * ACCUMULATE + i) * BATCH) for i in range(ACCUMULATE)
            ]
            step_tokens = sum(int(b["labels"][:, 1:].ne(-100).sum()) for b in micro)
            optimizer.zero_grad()
            step_loss = 0.0
            for b in micro:
                logits = model(input_ids=b["input_ids"], attention_mask=b["attention_mask"]).logits
                loss_sum, count = weighted_ce_sum(logits, b["labels"])
                # per_step_tokens=False: each micro-batch's own mean, not divided by the
                # accumulation steps, which is what transformers 5.23 trains with when an
                # override accepts num_items_in_batch and ignores it (the Trainer then takes
                # the loss as already scaled for gradient accumulation).
                loss = loss_sum / (step_tokens if per_step_tokens else count)
                loss.backward()
                step_loss += loss.item()
            optimizer.step()
            losses.append(step_loss)
        model.eval()
        with torch.no_grad():  # evaluation: each batch's own mean, averaged over the batches
            eval_means = []
            for start in range(0, len(eval_samples), BATCH):
                b = batches(eval_samples, start)
                logits = model(input_ids=b["input_ids"], attention_mask=b["attention_mask"]).logits
                loss_sum, count = weighted_ce_sum(logits, b["labels"])
                eval_means.append((loss_sum / count).item())
        return losses, model.state_dict(), sum(eval_means) / len(eval_means)

    reference_steps, reference_weights, reference_eval = reference_run(per_step_tokens=True)
    assert len(step_losses) == STEPS, step_losses
    torch.testing.assert_close(torch.tensor(step_losses), torch.tensor(reference_steps))
    assert weights.keys() == reference_weights.keys()
    for name, value in reference_weights.items():
        torch.testing.assert_close(weights[name], value)
    torch.testing.assert_close(torch.tensor(eval_loss), torch.tensor(reference_eval))

    # Accepting num_items_in_batch is not enough: an override that takes it and ignores it
    # trains on per-micro-batch means that the Trainer no longer divides by the accumulation
    # steps, and ends with other weights and a step loss about twice as large.
    class IgnoringTrainer(Trainer):
        def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):
            outputs = model(input_ids=inputs["input_ids"], attention_mask=inputs["attention_mask"])
            loss_sum, count = weighted_ce_sum(outputs.logits, inputs["labels"])
            loss = loss_sum / count
            return (loss, outputs) if return_outputs else loss

    ignoring_steps, ignoring_weights, _ = train(IgnoringTrainer, output_dir)
    mean_steps, mean_weights, _ = reference_run(per_step_tokens=False)
    torch.testing.assert_close(torch.tensor(ignoring_steps), torch.tensor(mean_steps))
    for name, value in mean_weights.items():
        torch.testing.assert_close(ignoring_weights[name], value)
    gap = max((weights[name] - value).abs().max().item() for name, value in mean_weights.items())
    assert gap > 1e-3, gap
    assert ignoring_steps[0] > 1.5 * step_losses[0], (ignoring_steps, step_losses)
    print(f"check: {STEPS} step losses, all {len(weights)} weight tensors and the eval loss")
    print("equal the plain PyTorch loop's; ignoring num_items_in_batch gives step losses")
    print(f"{ignoring_steps} instead of {step_losses} and weights off by {gap:.4f}")
    # --- check: end
