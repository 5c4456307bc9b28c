"""Reproducer for hf-model-path-not-found.

Training wrote its checkpoints under `run-1/checkpoint-100` and `run-1/checkpoint-200`
(here a tiny GPT-2, saved with `save_pretrained`) in the job's working directory. The
evaluation job is launched from the same directory with the folder typed by hand as a
relative path: `run1/checkpoint-200`, one hyphen short. The Hub it talks to is a local
stand-in on 127.0.0.1 (`HF_ENDPOINT`) that answers an unknown repository the way the Hub
does (404 with `X-Error-Code: RepoNotFound`), so the run needs no network.

`python repro.py`: the typed folder does not exist, so transformers treats the string as a
Hub repository id; `run1/checkpoint-200` has the `namespace/name` form, the Hub answers
that no such repository exists, and transformers raises `OSError: run1/checkpoint-200 is
not a local folder and is not a valid model identifier listed on
'https://huggingface.co/models'`.
`python repro.py --fixed`: the path is built from the same setting training saved to
(`RUN_DIR` and the step it saved), made absolute, and checked to exist before loading, so a
wrong path stops with a `FileNotFoundError` naming the folder instead of a Hub lookup. The
check compares the loaded weights and logits with the checkpoint training saved at that
step.
"""

import http.server
import os
import sys
import tempfile
import threading


class StandInHub(http.server.BaseHTTPRequestHandler):
    """Answers every request as the Hub answers a repository that does not exist."""

    def _not_found(self, body: bool) -> None:
        payload = b'{"error":"Repository not found"}'
        self.send_response(404)
        self.send_header("X-Error-Code", "RepoNotFound")
        self.send_header("X-Error-Message", "Repository not found")
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        if body:
            self.wfile.write(payload)

    def do_HEAD(self) -> None:  # noqa: N802
        self._not_found(body=False)

    def do_GET(self) -> None:  # noqa: N802
        self._not_found(body=True)

    def log_message(self, *args) -> None:
        pass


hub = http.server.ThreadingHTTPServer(("127.0.0.1", 0), StandInHub)
threading.Thread(target=hub.serve_forever, daemon=True).start()

_hf_home = tempfile.TemporaryDirectory(prefix="repro-hf-home-")
os.environ["HF_HOME"] = _hf_home.name
os.environ["HF_ENDPOINT"] = f"http://127.0.0.1:{hub.server_address[1]}"
os.environ["HF_HUB_OFFLINE"] = "0"
os.environ["HF_HUB_DISABLE_TELEMETRY"] = "1"
os.environ["NO_PROXY"] = os.environ["no_proxy"] = "127.0.0.1"

import torch  # noqa: E402
from transformers import AutoModelForCausalLM, GPT2Config, GPT2LMHeadModel  # noqa: E402

FIXED = "--fixed" in sys.argv[1:]
RUN_DIR = "run-1"  # the setting training saves under
STEP = 200  # the step the evaluation is meant to load


def train_and_save(run_dir: str) -> dict[int, dict[str, torch.Tensor]]:
    """Stand-in for the training job: save checkpoint-100 and checkpoint-200."""
    torch.manual_seed(0)
    model = GPT2LMHeadModel(GPT2Config(vocab_size=16, n_embd=16, n_layer=1, n_head=2, n_positions=16))
    saved = {}
    for step in (100, 200):
        with torch.no_grad():
            model.lm_head.weight.add_(0.01)  # the weights change between checkpoints
        model.save_pretrained(os.path.join(run_dir, f"checkpoint-{step}"))
        saved[step] = {name: value.clone() for name, value in model.state_dict().items()}
    return saved


with tempfile.TemporaryDirectory(prefix="repro-output-") as output:
    os.chdir(output)  # training and evaluation run from the same working directory
    saved = train_and_save(RUN_DIR)
    print("training wrote:", sorted(os.listdir(RUN_DIR)))

    checkpoint = "run1/checkpoint-200"  # the bug: the path typed by hand, one hyphen short
    if FIXED:
        # --- fix: start
        # Build the path from the setting training saved under, make it absolute, and
        # stop with a clear error if the folder is not there (a missing path is sent to
        # the Hub as a repository id).
        checkpoint = os.path.abspath(os.path.join(RUN_DIR, f"checkpoint-{STEP}"))
        if not os.path.isfile(os.path.join(checkpoint, "config.json")):
            raise FileNotFoundError(f"no saved checkpoint at {checkpoint}")
        # --- fix: end

    print("loading", os.path.relpath(checkpoint, output))
    model = AutoModelForCausalLM.from_pretrained(checkpoint).eval()
    tokens = torch.tensor([[1, 2, 3, 4, 5]])
    with torch.no_grad():
        logits = model(tokens).logits
    print("forward pass ok, logits shape:", tuple(logits.shape))

    # --- check: start
    # The model loaded is the checkpoint training saved at step 200: same weights, and
    # the same logits as a fresh model given those weights.
    expected = saved[200]
    loaded = model.state_dict()
    assert loaded.keys() == expected.keys(), "the loaded model has other parameters"
    for name, value in expected.items():
        torch.testing.assert_close(loaded[name], value, rtol=0, atol=0)
    reference = GPT2LMHeadModel(model.config).eval()
    reference.load_state_dict(expected)
    with torch.no_grad():
        torch.testing.assert_close(logits, reference(tokens).logits)
    print(f"check: all {len(loaded)} tensors and the logits equal the checkpoint saved at step 200")
    # --- check: end
    os.chdir(tempfile.gettempdir())
