"""Reproducer for webdataset-nodesplitter-missing.

`python repro.py`: a dataset of 24 samples is written as 4 WebDataset tar shards. Two CPU
ranks (gloo) start as a DDP job does, and each reads the shards with
`wds.WebDataset(urls)`, whose default node splitter, `single_node_only`, sees a world
size of 2 and raises `ValueError: you need to add an explicit nodesplitter to your input
pipeline for multi-node training`.
`python repro.py --fixed`: the dataset is built with `nodesplitter=wds.split_by_node`, so
rank r reads shards r, r + 2, ... The check asserts that the samples the two ranks read
are, together, the whole dataset, each sample exactly once and with the value written.
"""

import json
import os
import sys
import tempfile
from datetime import timedelta

import torch.distributed as dist
import torch.multiprocessing as mp
import webdataset as wds
from torch.utils.data import DataLoader

FIXED = "--fixed" in sys.argv[1:]
WORLD_SIZE = 2
SHARDS = 4
PER_SHARD = 6


def make_dataset(urls: list[str]) -> wds.WebDataset:
    # The default node splitter, single_node_only, refuses a world size above 1.
    return wds.WebDataset(urls, shardshuffle=False).decode()


if FIXED:
    # --- fix: start
    def make_dataset(urls: list[str]) -> wds.WebDataset:
        # Each rank reads its own shards: rank r gets shards r, r + world_size, ...
        return wds.WebDataset(urls, shardshuffle=False, nodesplitter=wds.split_by_node).decode()
    # --- fix: end


def write_shards(folder: str) -> list[str]:
    urls = []
    for shard in range(SHARDS):
        url = os.path.join(folder, f"train-{shard:06d}.tar")
        with wds.TarWriter(url) as sink:
            for i in range(PER_SHARD):
                key = f"{shard:02d}_{i:02d}"
                sink.write({"__key__": key, "txt": f"value of {key}"})
        urls.append(url)
    return urls


def worker(rank: int, folder: str, urls: list[str]) -> None:
    dist.init_process_group(
        "gloo",
        init_method=f"file://{os.path.join(folder, 'store')}",
        rank=rank,
        world_size=WORLD_SIZE,
        timeout=timedelta(seconds=60),
    )
    loader = DataLoader(make_dataset(urls), batch_size=None, num_workers=0)
    samples = {sample["__key__"]: sample["txt"] for sample in loader}
    print(f"rank {rank}: read {len(samples)} samples", flush=True)
    with open(os.path.join(folder, f"rank{rank}.json"), "w") as handle:
        json.dump(samples, handle)
    dist.destroy_process_group()


if __name__ == "__main__":
    folder = tempfile.mkdtemp()
    urls = write_shards(folder)
    # join=True: if a rank raises, the others are stopped and the error is re-raised here.
    mp.spawn(worker, args=(folder, urls), nprocs=WORLD_SIZE, join=True)

    # --- check: start
    read = []
    for rank in range(WORLD_SIZE):
        with open(os.path.join(folder, f"rank{rank}.json")) as handle:
            read.append(json.load(handle))
    keys = [key for samples in read for key in samples]
    expected = {f"{shard:02d}_{i:02d}" for shard in range(SHARDS) for i in range(PER_SHARD)}
    assert len(keys) == len(expected) and set(keys) == expected  # each sample exactly once
    assert all(value == f"value of {key}" for samples in read for key, value in samples.items())
    assert all(len(samples) == len(expected) // WORLD_SIZE for samples in read)  # split evenly
    print(f"check: the {WORLD_SIZE} ranks read all {len(expected)} samples, each exactly once")
    # --- check: end
