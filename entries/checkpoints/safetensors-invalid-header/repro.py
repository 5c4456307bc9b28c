"""Reproducer for safetensors-invalid-header.

`python repro.py`: a fine-tuned LoRA adapter is published on a model hub (a local HTTP
server standing in for huggingface.co, which serves a file's web page under `/blob/`
and its raw bytes under `/resolve/`). A script downloads it with the link copied from
the browser's address bar, the `/blob/` page, and saves the HTML as
`adapter_model.safetensors`. `safetensors.torch.load_file` reads the first 8 bytes,
`<!DOCTYP`, as the little-endian header length (about 5.8e18 bytes), which is over the
100 MB limit, and raises `Error while deserializing header: header too large`
(`HeaderTooLarge` before safetensors 0.6).
`python repro.py --fixed`: the download uses the file's `/resolve/` link, the raw
bytes the hub's download button and `hf_hub_download` fetch. The check loads the
adapter and compares every tensor with the ones that were published.
"""

import http.server
import os
import sys
import tempfile
import threading
import urllib.request

import torch
from safetensors.torch import load_file, save_file

FIXED = "--fixed" in sys.argv[1:]

with tempfile.TemporaryDirectory(prefix="repro-safetensors-header-") as workdir:
    # The published adapter: LoRA A/B matrices for two attention projections.
    torch.manual_seed(0)
    published = {
        f"base_model.model.layers.{i}.self_attn.{proj}.lora_{ab}.weight": torch.randn(shape)
        for i in range(2)
        for proj in ("q_proj", "v_proj")
        for ab, shape in (("A", (8, 64)), ("B", (64, 8)))
    }
    hub_file = os.path.join(workdir, "hub_adapter_model.safetensors")
    save_file(published, hub_file)

    class Hub(http.server.BaseHTTPRequestHandler):
        """`/blob/` serves the file's web page, `/resolve/` the file itself."""

        def do_GET(self) -> None:
            if "/blob/" in self.path:
                body = (
                    "<!DOCTYPE html>\n<html><head><title>adapter_model.safetensors · "
                    "acme/llama-lora at main</title></head><body><h1>adapter_model.safetensors</h1>"
                    "<a href=\"" + self.path.replace("/blob/", "/resolve/") + "\">download</a>"
                    "</body></html>\n"
                ).encode()
                content_type = "text/html; charset=utf-8"
            elif "/resolve/" in self.path:
                with open(hub_file, "rb") as f:
                    body = f.read()
                content_type = "application/octet-stream"
            else:
                self.send_error(404)
                return
            self.send_response(200)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Hub)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    hub = f"http://127.0.0.1:{server.server_address[1]}"

    # The link as copied from the browser while looking at the file on the hub.
    url = f"{hub}/acme/llama-lora/blob/main/adapter_model.safetensors"
    if FIXED:
        # --- fix: start
        # Download the file, not its web page: `/resolve/` serves the raw bytes
        # (or use huggingface_hub.hf_hub_download(repo_id, filename)).
        url = url.replace("/blob/", "/resolve/")
        # --- fix: end

    local = os.path.join(workdir, "adapter_model.safetensors")
    with urllib.request.urlopen(url) as response, open(local, "wb") as out:
        out.write(response.read())
    with open(local, "rb") as f:
        first_bytes = f.read(16)
    print(f"downloaded {url} -> {os.path.getsize(local)} bytes, starting with {first_bytes!r}")

    adapter = load_file(local)
    server.shutdown()
    print(f"loaded {len(adapter)} tensors")

    # --- check: start
    assert sorted(adapter) == sorted(published), sorted(adapter)
    for name, tensor in published.items():
        torch.testing.assert_close(adapter[name], tensor, rtol=0, atol=0)
    print("check: every published LoRA tensor loaded with identical values")
    # --- check: end
