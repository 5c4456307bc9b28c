"""Check an installed failpedia away from the repository: diagnose, explain and the hook.

Run with the interpreter of an environment where only the wheel is installed (the release
workflow runs it for every wheel it builds, the wheel test runs it in a fresh virtual
environment). It imports nothing of ours itself and uses only the standard library, so it
runs on every platform the wheels are built for; it exits 1 naming each check that failed.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import sysconfig
import tempfile
from pathlib import Path

OOM_LOG = (
    "step 10 loss 2.1035\n"
    "RuntimeError: CUDA out of memory. Tried to allocate 20.00 MiB (GPU 0; 7.79 GiB total"
    " capacity; 6.80 GiB already allocated; 11.62 MiB free; 6.90 GiB reserved in total by"
    " PyTorch)\n"
)
ASSERT_MESSAGE = "CUDA error: device-side assert triggered"
HOOKED_SCRIPT = f"import failpedia.hook\nraise RuntimeError({ASSERT_MESSAGE!r})\n"


def failpedia_command() -> list[str]:
    """The installed console script of this interpreter's environment."""
    name = "failpedia.exe" if os.name == "nt" else "failpedia"
    return [str(Path(sysconfig.get_path("scripts")) / name)]


def run(command: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    environment = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}
    environment["PYTHONIOENCODING"] = "utf-8"
    return subprocess.run(
        command,
        cwd=cwd,
        env=environment,
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=300,
    )


def check(workdir: Path) -> list[str]:
    """Every check's failure, as a line saying what was expected and what came."""
    failures: list[str] = []
    command = failpedia_command()

    log = workdir / "train.log"
    log.write_text(OOM_LOG, encoding="utf-8")
    diagnosed = run([*command, "diagnose", "--json", str(log)], workdir)
    if diagnosed.returncode != 0:
        failures.append(f"diagnose exited {diagnosed.returncode}: {diagnosed.stderr.strip()}")
    else:
        findings = json.loads(diagnosed.stdout)["findings"]
        if not findings or findings[0]["id"] != "cuda-oom":
            failures.append(f"diagnose: expected cuda-oom first, got {findings!r:.300}")

    explained = run([*command, "explain", "cuda-oom"], workdir)
    if explained.returncode != 0 or "/cuda/cuda-oom/" not in explained.stdout:
        failures.append(f"explain cuda-oom exited {explained.returncode}: {explained.stderr:.300}")

    by_message = run([*command, "explain", ASSERT_MESSAGE], workdir)
    if by_message.returncode != 0 or "cuda-device-side-assert" not in by_message.stdout:
        failures.append(
            f"explain by message exited {by_message.returncode}: {by_message.stderr!r:.300}"
        )

    hooked = run([sys.executable, "-c", HOOKED_SCRIPT], workdir)
    if hooked.returncode != 1:
        failures.append(f"hook: the script's exit status became {hooked.returncode}, not 1")
    if f"RuntimeError: {ASSERT_MESSAGE}" not in hooked.stderr:
        failures.append("hook: the traceback is missing from stderr")
    if "cuda-device-side-assert" not in hooked.stderr:
        failures.append(f"hook: no finding under the traceback: {hooked.stderr.strip()[-300:]}")
    return failures


def main() -> int:
    with tempfile.TemporaryDirectory() as folder:
        failures = check(Path(folder))
    for failure in failures:
        print(f"check_installed_wheel: {failure}", file=sys.stderr)
    if not failures:
        print("check_installed_wheel: diagnose, explain and the hook work from the wheel")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
