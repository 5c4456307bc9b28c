"""A callback for the Hugging Face ``Trainer``: the entries matching an exception that
ends training, under its traceback.

``Trainer`` calls its callbacks on no exception, so the callback arms, when the trainer is
made and when training starts, what shows them where the exception ends up: the hooks of
``failpedia.hook`` in a script, the notebook extension in a notebook. It arms them on the
world's rank 0 only, unless ``all_ranks``: every rank raises, one diagnosis is enough.
"""

from __future__ import annotations

from typing import Any

from failpedia.integrations.excepthook import install_where_it_runs

try:
    from transformers import TrainerCallback, TrainerControl, TrainerState, TrainingArguments
except ImportError as error:  # pragma: no cover - depends on what is installed
    raise ImportError(
        "failpedia.integrations.hf_trainer needs transformers: pip install transformers"
    ) from error


class FailpediaCallback(TrainerCallback):
    """``Trainer(..., callbacks=[FailpediaCallback()])``: print the entries matching the
    exception that ends training under its traceback (rank 0 only, unless ``all_ranks``)."""

    def __init__(self, all_ranks: bool = False) -> None:
        self.all_ranks = all_ranks

    def _arm(self, state: TrainerState) -> None:
        if self.all_ranks or state.is_world_process_zero:
            install_where_it_runs()

    def on_init_end(
        self, args: TrainingArguments, state: TrainerState, control: TrainerControl, **_: Any
    ) -> None:
        self._arm(state)

    def on_train_begin(
        self, args: TrainingArguments, state: TrainerState, control: TrainerControl, **_: Any
    ) -> None:
        self._arm(state)
