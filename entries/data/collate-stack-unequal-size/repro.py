"""Reproducer for collate-stack-unequal-size.

`python repro.py`: a dataset returns sequences of shape [3, length] with a different
length per sample. The DataLoader's default collate calls `torch.stack` on them:
- with num_workers=0 it raises `stack expects each tensor to be equal size, but got
  [3, 20] at entry 0 and [3, 17] at entry 1` (printed, then the script goes on);
- with num_workers=2 the same batch fails inside worker 0 and is re-raised in the main
  process as `Caught RuntimeError in DataLoader worker process 0.`; because the first
  sample is the longest, the worker's shared-memory preallocation fails before
  `torch.stack` runs, so the original traceback ends in `Trying to resize storage that
  is not resizable`.
`python repro.py --fixed`: a padding collate_fn pads each batch to its longest sequence
and returns the true lengths, in both loader configurations.
"""

import sys
import traceback

import torch
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset

FIXED = "--fixed" in sys.argv[1:]
LENGTHS = [20, 17, 23, 9]  # one sequence length per sample


class VariableLengthSequences(Dataset):
    def __len__(self) -> int:
        return len(LENGTHS)

    def __getitem__(self, index: int):
        features = torch.full((3, LENGTHS[index]), float(index))  # [channels, time]
        return features, index % 2  # (sequence, label)


collate_fn = None  # the DataLoader's default_collate
if FIXED:
# --- fix: start
    def pad_collate(batch):
        """Pad every sequence on its last dimension to the longest in the batch; keep the lengths."""
        sequences, labels = zip(*batch)
        lengths = torch.tensor([seq.shape[-1] for seq in sequences])
        longest = int(lengths.max())
        padded = torch.stack([F.pad(seq, (0, longest - seq.shape[-1])) for seq in sequences])
        return padded, lengths, torch.tensor(labels)

    collate_fn = pad_collate
# --- fix: end


def run(num_workers: int) -> list:
    loader = DataLoader(
        VariableLengthSequences(), batch_size=2, num_workers=num_workers, collate_fn=collate_fn
    )
    batches = []
    for batch in loader:
        print(f"num_workers={num_workers}: batch shape {tuple(batch[0].shape)}, lengths {batch[1].tolist()}")
        batches.append(batch)
    return batches


if __name__ == "__main__":
    try:
        in_main_process = run(num_workers=0)
    except RuntimeError:
        traceback.print_exc()  # keep going: show how the same batch fails in a worker
    in_workers = run(num_workers=2)

    # --- check: start
    dataset = VariableLengthSequences()
    for batches in (in_main_process, in_workers):
        rows = [row for padded, lengths, labels in batches for row in zip(padded, lengths, labels)]
        assert len(rows) == len(dataset)
        for index, (padded, length, label) in enumerate(rows):
            sequence, expected_label = dataset[index]
            assert length == sequence.shape[-1] and label == expected_label
            assert torch.equal(padded[:, :length], sequence), index  # the sample, unchanged
            assert not padded[:, length:].any(), index  # then only padding
    print("check: every sample is in its batch unchanged, padded after its true length")
    # --- check: end
