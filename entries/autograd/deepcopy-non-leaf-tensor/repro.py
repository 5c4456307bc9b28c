"""Reproducer for deepcopy-non-leaf-tensor.

`python repro.py`: a student network keeps the features of its last forward pass in
an attribute (`self.last_features`), for a feature penalty computed outside the model.
After a first training step the training loop creates an exponential moving average
(EMA) teacher with `copy.deepcopy(student)`. The cached features are an output of the
graph, not a leaf, and `Tensor.__deepcopy__` refuses to copy non-leaf tensors.
`python repro.py --fixed`: the teacher is built as a new instance that loads the
student's `state_dict` (parameters and buffers only, never cached activations); the
check compares its outputs with the student's at copy time, and verifies that further
training of the student leaves the teacher's weights unchanged except for the EMA
update, computed by hand.
"""

import copy
import sys

import torch
import torch.nn as nn

FIXED = "--fixed" in sys.argv[1:]

torch.manual_seed(0)
print("torch", torch.__version__)


class Student(nn.Module):
    """Encoder + head; remembers the last features for a penalty on them."""

    def __init__(self) -> None:
        super().__init__()
        self.encoder = nn.Linear(8, 16)
        self.norm = nn.BatchNorm1d(16)
        self.head = nn.Linear(16, 4)
        self.last_features = None

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        feats = torch.relu(self.norm(self.encoder(x)))
        self.last_features = feats  # a non-leaf tensor of this step's graph
        return self.head(feats)


def make_ema_teacher(model: nn.Module) -> nn.Module:
    """The teacher starts as an exact copy of the student."""
    return copy.deepcopy(model).requires_grad_(False)


if FIXED:
    # --- fix: start
    def make_ema_teacher(model: nn.Module) -> nn.Module:
        """A new instance loaded from the student's state_dict: no cached activations."""
        teacher = Student()
        teacher.load_state_dict(model.state_dict())
        return teacher.requires_grad_(False)

    # --- fix: end


student = Student()
optimizer = torch.optim.SGD(student.parameters(), lr=0.1)
data = [(torch.randn(32, 8), torch.randint(0, 4, (32,))) for _ in range(4)]


def train_step(x: torch.Tensor, y: torch.Tensor) -> None:
    """Cross-entropy plus a small penalty on the cached features."""
    loss = nn.functional.cross_entropy(student(x), y)
    loss = loss + 1e-3 * student.last_features.pow(2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()


train_step(*data[0])
teacher = make_ema_teacher(student)  # EMA teacher created after the first step
probe = torch.randn(16, 8)
student.eval()
teacher.eval()
with torch.no_grad():
    student_out, teacher_out = student(probe), teacher(probe)
snapshot = {k: v.clone() for k, v in teacher.state_dict().items()}
student.train()

decay = 0.9
student_history = []
for x, y in data[1:]:
    train_step(x, y)
    student_history.append({n: p.detach().clone() for n, p in student.named_parameters()})
    with torch.no_grad():
        for t_param, s_param in zip(teacher.parameters(), student.parameters()):
            t_param.mul_(decay).add_(s_param, alpha=1 - decay)
print("teacher created and updated for", len(data) - 1, "steps")

# --- check: start
torch.testing.assert_close(teacher_out, student_out)  # an exact copy at creation
# Replay the EMA by hand from the copy-time snapshot and the student's weights after
# each step: the teacher moved by exactly these updates and nothing else.
expected = {n: snapshot[n].clone() for n, _ in teacher.named_parameters()}
for weights in student_history:
    for name in expected:
        expected[name] = decay * expected[name] + (1 - decay) * weights[name]
student_params = dict(student.named_parameters())
for name, param in teacher.named_parameters():
    torch.testing.assert_close(param, expected[name])
    assert param.data_ptr() != student_params[name].data_ptr(), f"{name} shares storage"
    assert not torch.equal(param, student_params[name]), f"{name} follows the student"
for name, buf in teacher.named_buffers():
    torch.testing.assert_close(buf, snapshot[name])  # training the student left them alone
print("check: teacher equals the student at copy time and then moves only by the EMA")
# --- check: end
