"""Reproducer for sklearn-input-contains-nan.

`python repro.py`: a binary classifier trained with a hand-written binary cross-entropy,
`-(y * log(p) + (1 - y) * log(1 - p))` on `p = sigmoid(logits)`, and scored each epoch
with scikit-learn's `roc_auc_score`. The features are large, the logits grow past 17,
and float32's sigmoid rounds them to exactly 1.0: `log(1 - p)` is `log(0) = -inf`, and
for the positive samples `0 * -inf` is NaN. The loss turns NaN, the gradients and then
every weight follow, the model predicts NaN, and scikit-learn's input validation refuses
the scores with `ValueError: Input contains NaN.`
`python repro.py --fixed`: the loss is computed from the logits,
`F.binary_cross_entropy_with_logits`, which never takes the log of a rounded
probability. The check recomputes the AUC scikit-learn reported by hand (the share of
positive-negative pairs ranked correctly, in float64) and confirms the weights stayed
finite and the model separates the classes.

scikit-learn 1.8.0, joblib and threadpoolctl are installed apart
(`reproducer.private_requirements`) and put on `sys.path` here.
"""

import os
import sys

import torch
import torch.nn.functional as F

PRIVATE = os.path.join(sys.prefix, "failpedia-private")
for release in ("scikit-learn-1.8.0", "joblib-1.5.3", "threadpoolctl-3.6.0"):
    sys.path.insert(0, os.path.join(PRIVATE, release))
from sklearn.metrics import roc_auc_score  # noqa: E402

FIXED = "--fixed" in sys.argv[1:]
torch.manual_seed(0)


def loss_fn(logits: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    p = torch.sigmoid(logits)  # rounds to exactly 1.0 in float32 once a logit passes ~17
    return -(y * torch.log(p) + (1 - y) * torch.log(1 - p)).mean()


if FIXED:
    # --- fix: start
    def loss_fn(logits: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return F.binary_cross_entropy_with_logits(logits, y)  # log-sum-exp form, no log(0)
    # --- fix: end


X = 5 * torch.randn(512, 8)
w_true = torch.randn(8)
Y = (X @ w_true + 2 * torch.randn(512) > 0).float()
X_train, Y_train, X_val, Y_val = X[:384], Y[:384], X[384:], Y[384:]
model = torch.nn.Linear(8, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=1.0)

aucs = []
for epoch in range(8):
    optimizer.zero_grad()
    loss = loss_fn(model(X_train)[:, 0], Y_train)
    loss.backward()
    optimizer.step()
    with torch.no_grad():
        scores = model(X_val)[:, 0]
    print(f"epoch {epoch}: train loss {loss.item():.4f}, max |logit| {scores.abs().max():.1f}")
    auc = roc_auc_score(Y_val.numpy(), scores.numpy())
    aucs.append((auc, scores))
    print(f"epoch {epoch}: val AUC {auc:.4f}")

# --- check: start
for auc, scores in aucs:  # AUC by hand: positive-negative pairs ranked correctly (ties half)
    pos, neg = scores[Y_val == 1].double(), scores[Y_val == 0].double()
    diff = pos[:, None] - neg[None, :]
    by_hand = ((diff > 0).double() + 0.5 * (diff == 0).double()).mean().item()
    assert abs(auc - by_hand) < 1e-12, (auc, by_hand)
assert all(torch.isfinite(p).all() for p in model.parameters())
assert aucs[-1][0] > 0.9, aucs[-1][0]
print(f"check: scikit-learn's AUC equals the pairwise count every epoch; weights finite; final AUC {aucs[-1][0]:.4f}")
# --- check: end
