"""Reproducer for lightning-srun-available-not-used.

`python repro.py`: this script plays the batch script of a two-node Slurm job,
`sbatch --nodes=2` (one CPU "device" per node here, a GPU in real jobs), with no task
count asked for, whose last line is plain `python train.py`: Slurm runs the batch
script once, on the first node. The training script (this file with `--train`) builds
`Trainer(num_nodes=2, devices=1)` with DDP over gloo. A stand-in `srun` is on the PATH, as
on every Slurm node, and the batch environment holds no `SLURM_NTASKS`, so Lightning
warns `The srun command is available on your system but is not used`, ignores Slurm,
and starts rank 0 of 2 by itself. Rank 1 is never started by anyone: rank 0 waits for it
in `init_process_group` until the timeout (20 s here, 30 minutes by default) ends the job.
`python repro.py --fixed`: the job asks for one task per node (`--ntasks-per-node=1`,
the Trainer's `devices`) and the batch script runs `srun python train.py`. The stand-in
srun does what Slurm's does: one copy of the command per task, each with its
`SLURM_PROCID`, `SLURM_LOCALID`, `SLURM_NODEID` and `SLURM_NTASKS`. Both ranks train on
their halves of the data. The check reads what each rank saw and compares the trained
weights with plain SGD over the whole data set in one process.
"""

import os
import random
import socket
import stat
import subprocess
import sys
import tempfile
import warnings
from datetime import timedelta

import torch
import torch.nn.functional as F

FIXED = "--fixed" in sys.argv[1:]
NODES, N, BATCH, LR = 2, 96, 8, 0.1  # 96 samples, 8 per rank per step

# What Slurm's srun does, reduced to what Lightning reads: start the command once per
# task, each task with its own ids. The real one runs them on the allocated nodes.
FAKE_SRUN = '''
import os, subprocess, sys
nodes = int(os.environ["SLURM_NNODES"])
per_node = int(os.environ.get("SLURM_NTASKS_PER_NODE", "1"))
ntasks = nodes * per_node
procs = []
for rank in range(ntasks):
    env = dict(os.environ, SLURM_NTASKS=str(ntasks), SLURM_NPROCS=str(ntasks),
               SLURM_PROCID=str(rank), SLURM_LOCALID=str(rank % per_node),
               SLURM_NODEID=str(rank // per_node), SLURM_STEP_ID="0",
               SLURM_STEP_NUM_TASKS=str(ntasks))
    procs.append(subprocess.Popen(sys.argv[1:], env=env))
sys.exit(max(p.wait() for p in procs))
'''


def make_data() -> tuple[torch.Tensor, torch.Tensor]:
    g = torch.Generator().manual_seed(0)
    x = torch.randn(N, 6, generator=g)
    return x, x @ torch.randn(6, 2, generator=g) + 0.1 * torch.randn(N, 2, generator=g)


def make_net() -> torch.nn.Module:
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(6, 8), torch.nn.Tanh(), torch.nn.Linear(8, 2))


def train() -> None:
    """The training script, as `python train.py` or `srun python train.py` starts it."""
    torch.set_num_threads(1)
    warnings.filterwarnings("ignore", message=".*does not have many workers.*")
    import lightning as L
    from lightning.pytorch.strategies import DDPStrategy

    class Regressor(L.LightningModule):
        def __init__(self) -> None:
            super().__init__()
            self.net = make_net()
            self.seen: list[int] = []

        def training_step(self, batch, batch_idx):
            idx, x, y = batch
            self.seen += idx.tolist()
            return F.mse_loss(self.net(x), y)

        def configure_optimizers(self):
            return torch.optim.SGD(self.parameters(), lr=LR)

    x, y = make_data()
    loader = torch.utils.data.DataLoader(
        torch.utils.data.TensorDataset(torch.arange(N), x, y), batch_size=BATCH)
    module = Regressor()
    trainer = L.Trainer(
        accelerator="cpu", devices=1, num_nodes=NODES, max_epochs=1,
        # gloo on CPU; a 20 s rendezvous timeout instead of the default 30 minutes
        strategy=DDPStrategy(process_group_backend="gloo", timeout=timedelta(seconds=20)),
        logger=False, enable_checkpointing=False, enable_progress_bar=False,
        enable_model_summary=False, default_root_dir=os.environ["RESULTS"],
    )
    trainer.fit(module, loader)
    rank = trainer.global_rank
    print(f"rank {rank}/{trainer.world_size} ({type(trainer.strategy.cluster_environment).__name__}):"
          f" {trainer.global_step} steps on {len(module.seen)} samples\n", end="", flush=True)
    torch.save({"world_size": trainer.world_size, "rank": rank, "seen": module.seen,
                "weights": module.net.state_dict()}, os.path.join(os.environ["RESULTS"], f"rank{rank}.pt"))


def free_port() -> int:
    for port in random.Random().sample(range(15000, 25000), 200):
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    raise RuntimeError("no free port between 15000 and 25000")


if __name__ == "__main__" and "--train" in sys.argv[1:]:
    train()
    sys.exit(0)

work = tempfile.mkdtemp()
bin_dir = os.path.join(work, "bin")  # stands for /usr/bin of a Slurm node: srun is there
os.makedirs(bin_dir)
with open(os.path.join(bin_dir, "fake_srun.py"), "w") as f:
    f.write(FAKE_SRUN)
for name, target in (("srun", f'"{bin_dir}/fake_srun.py"'), ("python", "")):
    path = os.path.join(bin_dir, name)  # `python` is this interpreter, as in an activated venv
    with open(path, "w") as f:
        f.write(f'#!/bin/sh\nexec "{sys.executable}" {target} "$@"\n')
    os.chmod(path, os.stat(path).st_mode | stat.S_IXUSR)

# The environment Slurm gives the batch script of `sbatch --nodes=2 train.sh`: no task count
# asked for, so no SLURM_NTASKS. Both "nodes" are this machine, so the node list is its
# address. Lightning takes its port from the job id (15000 + its last four digits).
job_id = f"81{free_port() - 15000:04d}"
allocation = {
    "SLURM_JOB_ID": job_id, "SLURM_JOBID": job_id, "SLURM_JOB_NAME": "train.sh",
    "SLURM_NNODES": str(NODES), "SLURM_JOB_NUM_NODES": str(NODES),
    "SLURM_NODELIST": "127.0.0.1", "SLURM_JOB_NODELIST": "127.0.0.1",
}
command = ["python", os.path.basename(__file__), "--train"]  # the batch script's last line
if FIXED:
    # --- fix: start
    # Ask for the tasks (#SBATCH --ntasks-per-node=1, the Trainer's devices; sbatch then
    # also exports SLURM_NTASKS) and launch them with srun: srun python train.py
    allocation.update(SLURM_NTASKS_PER_NODE="1", SLURM_NTASKS=str(NODES), SLURM_NPROCS=str(NODES))
    command = ["srun", *command]
    # --- fix: end
env = {k: v for k, v in os.environ.items() if not k.startswith("SLURM_")}
env.update(allocation, PATH=bin_dir + os.pathsep + env.get("PATH", ""), RESULTS=work)
print("batch script runs:", " ".join(command), flush=True)
try:
    here = os.path.dirname(os.path.abspath(__file__))
    exit_code = subprocess.run(command, env=env, cwd=here, timeout=150).returncode
except subprocess.TimeoutExpired:
    exit_code = "timed out"
print(f"job step exit code: {exit_code}", flush=True)

# --- check: start
assert exit_code == 0, f"the job step failed: {exit_code}"
results = [torch.load(os.path.join(work, f"rank{r}.pt")) for r in range(NODES)]
# Lightning gives each rank a DistributedSampler (shuffled, seed 0): epoch 0's permutation
# of the data, rank r taking every second index from position r.
order = torch.randperm(N, generator=torch.Generator().manual_seed(0)).tolist()
for r, res in enumerate(results):  # one process per task, each rank trained on its shard
    assert res["world_size"] == NODES and res["rank"] == r, (res["world_size"], res["rank"])
    assert res["seen"] == order[r::NODES], res["seen"]
assert sorted(results[0]["seen"] + results[1]["seen"]) == list(range(N))  # every sample once
# Reference: one process, no distribution, the same seed, batches of 16 in that order. At
# step k the two ranks' batches of 8 together are order[16k:16k + 16]; DDP averages the two
# ranks' gradients, each the gradient of the mean loss over its 8 samples, so the step uses
# the gradient of the mean loss over all 16: the reference's step.
reference = make_net()
optimizer = torch.optim.SGD(reference.parameters(), lr=LR)
x, y = make_data()
for start in range(0, N, NODES * BATCH):
    batch = order[start:start + NODES * BATCH]
    optimizer.zero_grad()
    F.mse_loss(reference(x[batch]), y[batch]).backward()
    optimizer.step()
for res in results:
    torch.testing.assert_close(res["weights"], reference.state_dict(), rtol=1e-5, atol=1e-6)
print(f"check: {NODES} ranks of world size {NODES}, each trained on its half of the {N} samples;"
      " the weights equal single-process SGD over the whole data in the sampler's order")
# --- check: end
