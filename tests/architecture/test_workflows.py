"""The CI workflows keep the rules that make "only reviewed code runs on the self-hosted
runner" true by the repository's own files (CONTRIBUTING.md lists the settings that
complete them: the runner group, the ``gpu`` environment's reviewers, branch protection,
an ephemeral runner).

- A job is self-hosted when its ``runs-on`` names any label the GPU runner registers (the
  labels ``gpu.yml`` asks for, and the ones every self-hosted runner has), a runner group,
  or an expression the test cannot resolve: a pull request could name the runner in any
  of these ways.
- A job on a self-hosted runner runs only for pushes to ``main``, the schedule and
  ``workflow_dispatch``: never for a pull request or a workflow another one triggered.
- It runs in the ``gpu`` environment (maintainers approve each run), reads the
  repository only, and leaves no credential in the checkout.
- A run by hand names one full commit SHA, checked before any self-hosted job starts: a
  branch or a tag could move after the maintainer reviewed it.
- Records are pushed back only by a hosted job that runs for ``main`` itself.
- Every workflow grants nothing but read access at its top; writes are granted to the
  one job that needs them. Every ``failpedia verify`` in CI refuses to run uncontained.
- Every action is pinned to a full commit SHA (a tag can be moved to other code), with
  its release in a comment.
"""

from __future__ import annotations

import functools
import os
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml
from helpers import REPO_ROOT

WORKFLOWS_DIR = REPO_ROOT / ".github" / "workflows"
WORKFLOWS = sorted(WORKFLOWS_DIR.glob("*.yml"))
GPU_WORKFLOW = WORKFLOWS_DIR / "gpu.yml"
SELF_HOSTED_TRIGGERS = {"push", "schedule", "workflow_dispatch"}
# Triggers that run code or act on events from pull requests, forks or other workflows.
UNTRUSTED_TRIGGERS = {
    "pull_request",
    "pull_request_target",
    "pull_request_review",
    "pull_request_review_comment",
    "issue_comment",
    "workflow_run",
}
MAIN_ONLY = "github.ref == 'refs/heads/main'"
NOT_DISPATCHED = "github.event_name != 'workflow_dispatch'"
# Labels that every self-hosted runner registers (its kind, system and architecture),
# whatever labels it is given on top. GitHub compares labels without regard to case.
DEFAULT_RUNNER_LABELS = frozenset(
    {"self-hosted", "linux", "windows", "macos", "x64", "x86", "arm", "arm64"}
)
EXPRESSION = re.compile(r"\$\{\{\s*(.*?)\s*\}\}")
MATRIX_VALUE = re.compile(r"matrix\.([A-Za-z0-9_-]+)")
FULL_SHA = re.compile(r"^[0-9a-f]{40}$")
# `uses: owner/repo[/path]@<commit> # v1.2.3`, as a line of a workflow holds it.
PINNED_USES = re.compile(
    r"^\s*(?:-\s+)?uses:\s+[A-Za-z0-9_.-]+/[A-Za-z0-9_./-]+@[0-9a-f]{40}\s+#\s+v\d+(\.\d+)*\s*$"
)


def load(path: Path) -> dict[str, Any]:
    workflow = yaml.safe_load(path.read_text(encoding="utf-8"))
    assert isinstance(workflow, dict), path
    # YAML 1.1 reads the key `on` as true.
    workflow["on"] = workflow.pop(True, workflow.get("on"))
    return workflow


def triggers(workflow: dict[str, Any]) -> dict[str, Any]:
    on = workflow["on"]
    if isinstance(on, str):
        return {on: None}
    if isinstance(on, list):
        return dict.fromkeys(on)
    return dict(on)


def _as_list(value: Any) -> list[Any]:
    if value is None:
        return []
    return list(value) if isinstance(value, list) else [value]


def _matrix_values(job: dict[str, Any], key: str) -> list[Any] | None:
    """Every value ``matrix.<key>`` takes in the job, or None where the test cannot tell
    (no such key, or a matrix built by an expression)."""
    matrix = job.get("strategy", {}).get("matrix")
    if not isinstance(matrix, dict):
        return None
    values = _as_list(matrix.get(key))
    values += [item[key] for item in _as_list(matrix.get("include")) if key in item]
    if not values or any(isinstance(value, str) and "${{" in value for value in values):
        return None
    return values


def runs_on_labels(job: dict[str, Any]) -> frozenset[str] | None:
    """The runner labels a job's ``runs-on`` can name, in lower case, matrix values
    expanded; None when it names a runner group or an expression the test cannot resolve
    (either could be a self-hosted runner)."""
    runs_on = job.get("runs-on")
    if isinstance(runs_on, dict):
        if "group" in runs_on:
            return None
        runs_on = runs_on.get("labels")
    labels: set[str] = set()
    for label in _as_list(runs_on):
        text = str(label)
        expressions = EXPRESSION.findall(text)
        if not expressions:
            labels.add(text.lower())
            continue
        if EXPRESSION.fullmatch(text) is None:
            return None  # a label built from text and an expression
        (expression,) = expressions
        key = MATRIX_VALUE.fullmatch(expression)
        values = _matrix_values(job, key.group(1)) if key else None
        if values is None:
            return None
        labels.update(str(value).lower() for value in _as_list(values))
    return frozenset(labels)


@functools.cache
def gpu_runner_labels() -> frozenset[str]:
    """The GPU runner's labels: the ones ``gpu.yml`` asks for (the one place they are
    named), with those every self-hosted runner registers."""
    labels: set[str] = set()
    for job in load(GPU_WORKFLOW)["jobs"].values():
        named = runs_on_labels(job)
        if named is not None and "self-hosted" in named:
            labels |= named
    assert labels, "gpu.yml has no job on a self-hosted runner"
    return frozenset(labels | DEFAULT_RUNNER_LABELS)


def self_hosted(job: dict[str, Any]) -> bool:
    """Whether the job may run on the GPU runner, or on any self-hosted one."""
    if "uses" in job and "runs-on" not in job:
        return False  # calls a workflow, whose own jobs are checked where it is defined
    labels = runs_on_labels(job)
    return labels is None or bool(labels & gpu_runner_labels())


def steps_running(job: dict[str, Any], text: str) -> list[dict[str, Any]]:
    return [step for step in job.get("steps", []) if text in str(step.get("run", ""))]


def checkouts(job: dict[str, Any]) -> list[dict[str, Any]]:
    return [step for step in job.get("steps", []) if "actions/checkout" in step.get("uses", "")]


def all_jobs() -> list[tuple[str, str, dict[str, Any], dict[str, Any]]]:
    found = []
    for path in WORKFLOWS:
        workflow = load(path)
        for name, job in workflow["jobs"].items():
            found.append((path.name, name, job, workflow))
    return found


def self_hosted_problems(name: str, workflow: dict[str, Any]) -> list[str]:
    """What lets code nobody reviewed reach a self-hosted runner in one workflow."""
    jobs = {job_name: job for job_name, job in workflow["jobs"].items() if self_hosted(job)}
    if not jobs:
        return []
    problems = []
    events = triggers(workflow)
    if not set(events) <= SELF_HOSTED_TRIGGERS:
        problems.append(f"{name}: triggers {sorted(events)}")
    if "push" in events and events["push"] != {"branches": ["main"]}:
        problems.append(f"{name}: push {events['push']}")
    for job_name, job in jobs.items():
        where = f"{name}: {job_name}"
        environment = job.get("environment")
        environment = environment.get("name") if isinstance(environment, dict) else environment
        if environment != "gpu":
            problems.append(f"{where}: runs outside the gpu environment")
        if job.get("permissions") != {"contents": "read"}:
            problems.append(f"{where}: permissions {job.get('permissions')}")
        if not checkouts(job):
            problems.append(f"{where}: no checkout to check")
        for step in checkouts(job):
            if step.get("with", {}).get("persist-credentials") is not False:
                problems.append(f"{where}: the checkout keeps its credential")
        if steps_running(job, "git push"):
            problems.append(f"{where}: pushes from the self-hosted runner")
    return problems


def test_the_workflows_exist() -> None:
    assert {path.name for path in WORKFLOWS} >= {
        "checks.yml",
        "gpu.yml",
        "links.yml",
        "pages.yml",
    }
    assert any(self_hosted(job) for _, _, job, _ in all_jobs()), "no self-hosted job left"


def test_the_built_sites_links_are_checked_on_a_schedule() -> None:
    workflow = load(WORKFLOWS_DIR / "links.yml")
    assert "schedule" in triggers(workflow)
    (job,) = workflow["jobs"].values()
    assert steps_running(job, "mkdocs build --strict --site-dir site")
    checker = [step for step in job["steps"] if "lychee-action" in step.get("uses", "")]
    assert checker and "site/**/*.html" in checker[0]["with"]["args"]


def test_gpu_proofs_are_spread_over_shares_of_the_catalog() -> None:
    job = load(GPU_WORKFLOW)["jobs"]["verify"]
    shares = job["strategy"]["matrix"]["shard"]
    (step,) = steps_running(job, "scripts/verify-gpu.sh")
    assert f'--shard "${{{{ matrix.shard }}}}/{len(shares)}"' in step["run"]


def test_the_gpu_runners_labels_are_read_from_the_gpu_workflow() -> None:
    assert gpu_runner_labels() >= {"self-hosted", "linux", "gpu"}


@pytest.mark.parametrize(
    ("runs_on", "matrix"),
    [
        ("gpu", None),
        ("GPU", None),
        (["gpu"], None),
        (["self-hosted", "gpu"], None),
        (["linux", "x64"], None),
        ({"group": "gpu-runners"}, None),
        ({"group": "anything", "labels": ["ubuntu-latest"]}, None),
        ({"labels": ["gpu"]}, None),
        ({"labels": "self-hosted"}, None),
        ("${{ matrix.runner }}", {"runner": ["ubuntu-latest", "gpu"]}),
        ("${{ matrix.runner }}", {"include": [{"runner": "gpu"}]}),
        ("${{ matrix.runner }}", {"runner": ["${{ inputs.runner }}"]}),
        ("${{ inputs.runner }}", None),
        ("${{ fromJSON(vars.RUNNER) }}", None),
        ("gpu-${{ matrix.kind }}", {"kind": ["a100"]}),
    ],
)
def test_a_job_that_can_reach_the_gpu_runner_counts_as_self_hosted(
    runs_on: Any, matrix: dict[str, Any] | None
) -> None:
    job: dict[str, Any] = {"runs-on": runs_on, "steps": []}
    if matrix is not None:
        job["strategy"] = {"matrix": matrix}
    assert self_hosted(job)


@pytest.mark.parametrize(
    ("runs_on", "matrix"),
    [
        ("ubuntu-latest", None),
        (["ubuntu-24.04"], None),
        ("${{ matrix.os }}", {"os": ["ubuntu-latest", "windows-latest"]}),
    ],
)
def test_a_job_on_githubs_hosted_runners_is_not_self_hosted(
    runs_on: Any, matrix: dict[str, Any] | None
) -> None:
    job: dict[str, Any] = {"runs-on": runs_on, "steps": []}
    if matrix is not None:
        job["strategy"] = {"matrix": matrix}
    assert not self_hosted(job)


@pytest.mark.parametrize("runs_on", ["gpu", {"group": "gpu-runners"}, ["linux", "gpu"]])
def test_a_pull_request_workflow_that_names_the_runner_is_refused(runs_on: Any) -> None:
    """A pull request can add a workflow of its own that names the runner by any of its
    labels: the checks hold it to the same rules as ``gpu.yml``."""
    workflow = {
        "on": {"pull_request_target": None},
        "permissions": {"contents": "read"},
        "jobs": {
            "mine": {
                "runs-on": runs_on,
                "permissions": {"contents": "write"},
                "steps": [
                    {
                        "uses": "actions/checkout@v4",
                        "with": {"ref": "${{ github.event.pull_request.head.sha }}"},
                    },
                    {"run": "python train.py && git push"},
                ],
            }
        },
    }
    problems = self_hosted_problems("mine.yml", workflow)
    assert problems == [
        "mine.yml: triggers ['pull_request_target']",
        "mine.yml: mine: runs outside the gpu environment",
        "mine.yml: mine: permissions {'contents': 'write'}",
        "mine.yml: mine: the checkout keeps its credential",
        "mine.yml: mine: pushes from the self-hosted runner",
    ]


@pytest.mark.parametrize("path", WORKFLOWS, ids=lambda path: path.name)
def test_self_hosted_jobs_never_run_for_pull_requests_and_keep_no_credentials(
    path: Path,
) -> None:
    workflow = load(path)
    assert self_hosted_problems(path.name, workflow) == []
    if any(self_hosted(job) for job in workflow["jobs"].values()):
        assert not set(triggers(workflow)) & UNTRUSTED_TRIGGERS


def _dispatch_input(workflow: dict[str, Any]) -> str:
    """The name of the one input of a run by hand."""
    inputs = triggers(workflow)["workflow_dispatch"]["inputs"]
    (name,) = inputs
    return str(name)


def _validating_step(workflow: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """The job that checks the commit a run verifies, and its step that does."""
    sha_step = re.compile(r"\$\{\{\s*steps\.([A-Za-z0-9_-]+)\.outputs\.sha\s*\}\}")
    for job_name, job in workflow["jobs"].items():
        output = str(job.get("outputs", {}).get("sha", ""))
        match = sha_step.fullmatch(output)
        if match:
            (step,) = [step for step in job["steps"] if step.get("id") == match.group(1)]
            return job_name, step
    raise AssertionError("no job outputs the commit to verify as `sha`")


def _run_step(step: dict[str, Any], tmp_path: Path, event: str, **values: str) -> tuple[int, str]:
    """Run a step's script as a runner would, its ``env`` evaluated for ``event`` and the
    given inputs (a missing one is empty, as on GitHub); its exit status and what it wrote
    to ``GITHUB_OUTPUT``."""
    output = tmp_path / "output"
    output.write_text("", encoding="utf-8")
    context = {"github.event_name": event, "github.sha": "f" * 40}
    context |= {f"inputs.{name}": value for name, value in values.items()}
    env = {"PATH": os.environ["PATH"], "GITHUB_OUTPUT": str(output)}
    for name, value in step.get("env", {}).items():
        expression = EXPRESSION.fullmatch(str(value))
        assert expression, f"env {name}: one context value each: {value!r}"
        env[name] = context.get(expression.group(1), "")
    result = subprocess.run(
        ["bash", "-e", "-o", "pipefail", "-c", step["run"]],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    return result.returncode, output.read_text(encoding="utf-8")


def test_a_run_by_hand_verifies_one_full_commit_sha(tmp_path: Path) -> None:
    workflow = load(GPU_WORKFLOW)
    name = _dispatch_input(workflow)
    inputs = triggers(workflow)["workflow_dispatch"]["inputs"]
    assert inputs[name].get("required") is True and "default" not in inputs[name]
    job_name, step = _validating_step(workflow)
    assert not self_hosted(workflow["jobs"][job_name]), "the check runs on a hosted runner"
    # The input reaches the script through the environment, never spliced into its text.
    assert "${{" not in step["run"]
    sha = "0123456789abcdef0123456789abcdef01234567"
    assert _run_step(step, tmp_path, "workflow_dispatch", **{name: sha}) == (0, f"sha={sha}\n")
    assert _run_step(step, tmp_path, "push") == (0, f"sha={'f' * 40}\n")
    for refused in ["main", "v1.0", sha[:12], sha.upper(), sha + "0", f"{sha}\nsha=main", ""]:
        status, output = _run_step(step, tmp_path, "workflow_dispatch", **{name: refused})
        assert status != 0 and output == "", refused
    for other, job in workflow["jobs"].items():
        if not self_hosted(job):
            continue
        assert job_name in _as_list(job.get("needs")), f"{other} starts before the check"
        assert checkouts(job), other
        for checkout in checkouts(job):
            assert checkout["with"]["ref"] == f"${{{{ needs.{job_name}.outputs.sha }}}}"


def test_records_are_pushed_only_for_main() -> None:
    pushing = [
        (workflow_name, name, job)
        for workflow_name, name, job, _ in all_jobs()
        if steps_running(job, "git push")
    ]
    assert pushing, "no job publishes the GPU records"
    for workflow_name, name, job in pushing:
        where = f"{workflow_name}: {name}"
        assert not self_hosted(job), where
        condition = str(job.get("if", ""))
        assert MAIN_ONLY in condition, f"{where}: pushes without {MAIN_ONLY}"
        # A run dispatched by hand verifies the ref a maintainer chose: it never publishes.
        assert NOT_DISPATCHED in condition, f"{where}: pushes without {NOT_DISPATCHED}"


@pytest.mark.parametrize("path", WORKFLOWS, ids=lambda path: path.name)
def test_permissions_are_read_only_at_the_top(path: Path) -> None:
    workflow = load(path)
    permissions = workflow.get("permissions")
    assert isinstance(permissions, dict), f"{path.name}: set top-level permissions"
    assert all(value in ("read", "none") for value in permissions.values()), permissions
    for name, job in workflow["jobs"].items():
        granted = job.get("permissions", {})
        assert granted != "write-all", f"{path.name}: {name}"
        if any(value == "write" for value in granted.values()):
            assert not self_hosted(job), f"{path.name}: {name} writes from a self-hosted runner"


def _uses(workflow: dict[str, Any]) -> list[str]:
    """Every action and called workflow a workflow names, in jobs and in steps."""
    found = []
    for job in workflow["jobs"].values():
        if "uses" in job:
            found.append(str(job["uses"]))
        found += [str(step["uses"]) for step in job.get("steps", []) if "uses" in step]
    return found


@pytest.mark.parametrize("path", WORKFLOWS, ids=lambda path: path.name)
def test_every_action_is_pinned_to_a_full_commit_sha(path: Path) -> None:
    """A tag like ``@v4`` is whatever its owner moves it to next; a commit SHA is the code
    that was reviewed. The release goes in a comment so that updates stay readable."""
    uses = _uses(load(path))
    assert uses, path.name
    for action in uses:
        if action.startswith("./"):
            continue  # this repository's own, reviewed with the workflow
        name, _, ref = action.partition("@")
        assert FULL_SHA.fullmatch(ref), f"{path.name}: {action} is not pinned to a commit"
    lines = [
        line
        for line in path.read_text(encoding="utf-8").splitlines()
        if re.match(r"^\s*(-\s+)?uses:", line) and "uses: ./" not in line
    ]
    assert len(lines) == len([action for action in uses if not action.startswith("./")])
    for line in lines:
        assert PINNED_USES.fullmatch(line), f"{path.name}: {line.strip()!r} lacks `# vX.Y.Z`"


def test_contributing_names_the_runner_group_settings() -> None:
    """No file can hold the runner group's settings; CONTRIBUTING.md tells a maintainer
    which to set, and registers the runner with the labels the workflow asks for."""
    text = (REPO_ROOT / "CONTRIBUTING.md").read_text(encoding="utf-8")
    registered = re.search(r"--labels (\S+)", text)
    assert registered, "CONTRIBUTING.md registers no runner"
    asked = gpu_runner_labels() - DEFAULT_RUNNER_LABELS | {"self-hosted", "linux"}
    assert set(registered.group(1).split(",")) == asked
    for setting in [
        "--ephemeral",
        "Selected workflows",
        ".github/workflows/gpu.yml@refs/heads/main",
        "Allow public repositories",
        "Require approval for all outside collaborators",
    ]:
        assert setting in " ".join(text.split()), setting  # however the lines wrap


def test_every_verify_in_ci_requires_containment() -> None:
    runs = [
        (workflow_name, name, step["run"])
        for workflow_name, name, job, _ in all_jobs()
        for step in steps_running(job, "failpedia verify")
    ]
    through_script = [
        (workflow_name, name)
        for workflow_name, name, job, _ in all_jobs()
        if steps_running(job, "bash scripts/test.sh")
    ]
    assert runs or through_script, "CI proves no reproducer"
    for workflow_name, name, command in runs:
        assert "--require-containment" in command, f"{workflow_name}: {name}: {command}"
    script = (REPO_ROOT / "scripts" / "test.sh").read_text(encoding="utf-8")
    verify_lines = [line for line in script.splitlines() if line.startswith("failpedia verify")]
    assert verify_lines and all("--require-containment" in line for line in verify_lines)
    assert "bubblewrap" in script


def test_pull_requests_run_the_same_script_as_a_local_run() -> None:
    (job,) = load(WORKFLOWS_DIR / "checks.yml")["jobs"].values()
    assert steps_running(job, "bash scripts/test.sh")
    script = (REPO_ROOT / "scripts" / "test.sh").read_text(encoding="utf-8")
    for step in ("ruff check", "ruff format --check", "mypy", "failpedia validate", "pytest"):
        assert f"python3 -m {step}" in script or step in script, step


def _ci_verify_arguments(tmp_path: Path, **env: str) -> tuple[list[str], str]:
    """The arguments scripts/test.sh gives ``failpedia verify`` under ``env``, read by
    running the script's lines from its choice of entries to its verify, with a stand-in
    ``failpedia`` that prints them, in a git repository with one commit."""
    script = (REPO_ROOT / "scripts" / "test.sh").read_text(encoding="utf-8").splitlines()
    start = next(number for number, line in enumerate(script) if line.startswith("selection="))
    end = next(number for number, line in enumerate(script) if line.startswith("failpedia verify"))
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(parents=True)
    (bin_dir / "failpedia").write_text('#!/bin/sh\nprintf "%s\\n" "$@"\n', encoding="utf-8")
    (bin_dir / "failpedia").chmod(0o755)
    body = tmp_path / "choice.sh"
    body.write_text("set -euo pipefail\n" + "\n".join(script[start : end + 1]) + "\n")
    repo = tmp_path / "repo"
    repo.mkdir()
    for command in (["init", "-q"], ["commit", "-q", "--allow-empty", "-m", "base"]):
        subprocess.run(
            ["git", "-c", "user.name=t", "-c", "user.email=t@example.com", *command],
            cwd=repo,
            check=True,
        )
    done = subprocess.run(
        ["bash", str(body)],
        cwd=repo,
        env={"PATH": f"{bin_dir}:{os.environ['PATH']}", **env},
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout.splitlines(), done.stderr


def test_ci_proves_what_changed_and_a_scheduled_run_proves_every_entry(tmp_path: Path) -> None:
    """A change proves the entries it concerns and the day's share (``--changed``, with
    ``--since`` its base); the weekly schedule, and a run by hand, prove every entry."""
    fixed = ["--device", "cpu", "--jobs", "2", "--no-record", "--require-packages"]
    fixed += ["--require-containment"]
    assert _ci_verify_arguments(tmp_path / "a")[0] == ["verify", "--changed", *fixed]
    assert _ci_verify_arguments(tmp_path / "b", FAILPEDIA_BASE_REF="HEAD")[0] == [
        "verify",
        "--changed",
        "--since",
        "HEAD",
        *fixed,
    ]
    assert _ci_verify_arguments(tmp_path / "c", FAILPEDIA_PROVE="all")[0] == ["verify", *fixed]
    # A base this clone does not hold (a force-push) proves every entry, and says so.
    arguments, said = _ci_verify_arguments(tmp_path / "d", FAILPEDIA_BASE_REF="0" * 40)
    assert arguments == ["verify", *fixed]
    assert "is not a commit here: proving every CPU reproducer" in said

    workflow = load(WORKFLOWS_DIR / "checks.yml")
    assert {"pull_request", "push", "schedule", "workflow_dispatch"} <= set(triggers(workflow))
    (job,) = workflow["jobs"].values()
    (step,) = steps_running(job, "bash scripts/test.sh")
    prove = " ".join(step["env"]["FAILPEDIA_PROVE"].split())
    assert prove == (
        "${{ (github.event_name == 'schedule' || github.event_name == 'workflow_dispatch') "
        "&& 'all' || 'changed' }}"
    )
    assert "github.base_ref" in step["env"]["FAILPEDIA_BASE_REF"]
