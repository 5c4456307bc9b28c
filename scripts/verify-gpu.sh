#!/usr/bin/env bash
# Prove every CUDA entry on a machine with one GPU and write the records to a folder.
#
#   bash scripts/verify-gpu.sh RECORDS_DIR [failpedia verify options...]
#
# Needs only what a GPU machine for training already has: Python 3.10+, a CUDA build of
# torch, PyYAML, and the packages the CUDA entries declare (`failpedia requirements
# --device cuda`). No network and no installation: Failpedia runs from this checkout.
# RECORDS_DIR receives one record per entry (<id>.json) and report/verify-gpu.json (the
# whole run as JSON); `failpedia merge-records RECORDS_DIR verification` brings them home.
# Extra options go to `failpedia verify`, e.g. `--shard 2/4`. Reproducers run contained
# in bubblewrap; on a machine without it, verify refuses to run them unless given
# `--unsafe-uncontained` (only for reviewed code on a machine you can throw away).
set -euo pipefail

if [ $# -lt 1 ]; then
    echo "usage: bash scripts/verify-gpu.sh RECORDS_DIR [failpedia verify options...]" >&2
    exit 2
fi
records=$1
shift
root=$(cd "$(dirname "$0")/.." && pwd)
python=${PYTHON:-python3}
export PYTHONPATH="$root/generator${PYTHONPATH:+:$PYTHONPATH}"

"$python" - <<'PY'
import sys

import torch

if not torch.cuda.is_available():
    sys.exit("verify-gpu: torch sees no CUDA device; run this on a machine with a GPU")
print(
    f"verify-gpu: torch {torch.__version__}, CUDA {torch.version.cuda}, "
    f"{torch.cuda.device_count()} x {torch.cuda.get_device_name(0)}",
    file=sys.stderr,
)
PY

mkdir -p "$records/report"
cd "$root"
status=0
"$python" -m failpedia.cli verify --device cuda --records "$records" --json "$@" \
    > "$records/report/verify-gpu.json" || status=$?
"$python" - "$records/report/verify-gpu.json" <<'PY'
import json
import sys

try:
    with open(sys.argv[1], encoding="utf-8") as file:
        document = json.load(file)
except ValueError:  # verify stopped before its report; its stderr says why
    sys.exit(0)
for result in document["results"]:
    print(f"{result['verdict']:<14} {result['entry']}: {result['reason']}", file=sys.stderr)
PY
exit "$status"
