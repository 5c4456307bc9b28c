"""A callback for Lightning: the entries matching an exception that stops ``fit``,
``validate``, ``test`` or ``predict``, printed from inside the trainer.

Lightning calls ``on_exception`` when it catches the exception, before it raises it on:
the findings are printed then (on stderr; rendered in a notebook), above the traceback
that follows, on the trainer's global rank 0 only, unless ``all_ranks``. An exception
reported here is not reported again when it ends the script under ``failpedia.hook``.
``KeyboardInterrupt`` and ``SystemExit`` are left alone. Warnings shown once the trainer
is set up are matched with the exception.
"""

from __future__ import annotations

from failpedia.integrations.excepthook import record_warnings, show_findings

try:
    from lightning.pytorch import Callback, LightningModule, Trainer
except ImportError as error:  # pragma: no cover - depends on what is installed
    raise ImportError(
        "failpedia.integrations.lightning needs Lightning: pip install lightning"
    ) from error


class FailpediaCallback(Callback):
    """``Trainer(callbacks=[FailpediaCallback()])``: print the entries matching the
    exception that stops the trainer (rank 0 only, unless ``all_ranks``)."""

    def __init__(self, all_ranks: bool = False) -> None:
        self.all_ranks = all_ranks

    def setup(self, trainer: Trainer, pl_module: LightningModule, stage: str) -> None:
        if self.all_ranks or trainer.global_rank == 0:
            record_warnings()

    def on_exception(
        self, trainer: Trainer, pl_module: LightningModule, exception: BaseException
    ) -> None:
        if isinstance(exception, Exception) and (self.all_ranks or trainer.global_rank == 0):
            show_findings(exception)
