"""The CI workflows keep the rules that make "only reviewed code runs on the self-hosted
runner" true by the repository's own files (CONTRIBUTING.md lists the settings that
complete them: the ``gpu`` environment's reviewers, branch protection, an ephemeral
runner).

- A job on a self-hosted runner runs only for pushes to ``main``, the schedule and
  ``workflow_dispatch``: never for a pull request or a workflow another one triggered.
- It runs in the ``gpu`` environment (maintainers approve each run), reads the
  repository only, and leaves no credential in the checkout.
- Records are pushed back only by a hosted job that runs for ``main`` itself.
- Every workflow grants nothing but read access at its top; writes are granted to the
  one job that needs them. Every ``failpedia verify`` in CI refuses to run uncontained.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from helpers import REPO_ROOT

WORKFLOWS = sorted((REPO_ROOT / ".github" / "workflows").glob("*.yml"))
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


def self_hosted(job: dict[str, Any]) -> bool:
    runs_on = job.get("runs-on", [])
    labels = [runs_on] if isinstance(runs_on, str) else list(runs_on)
    return "self-hosted" in labels


def steps_running(job: dict[str, Any], text: str) -> list[dict[str, Any]]:
    return [step for step in job.get("steps", []) if text in str(step.get("run", ""))]


def all_jobs() -> list[tuple[str, str, dict[str, Any], dict[str, Any]]]:
    found = []
    for path in WORKFLOWS:
        workflow = load(path)
        for name, job in workflow["jobs"].items():
            found.append((path.name, name, job, workflow))
    return found


def test_the_workflows_exist() -> None:
    assert {path.name for path in WORKFLOWS} >= {
        "checks.yml",
        "gpu.yml",
        "links.yml",
        "pages.yml",
    }
    assert any(self_hosted(job) for _, _, job, _ in all_jobs()), "no self-hosted job left"


def test_the_built_sites_links_are_checked_on_a_schedule() -> None:
    workflow = load(WORKFLOWS[0].parent / "links.yml")
    assert "schedule" in triggers(workflow)
    (job,) = workflow["jobs"].values()
    assert steps_running(job, "mkdocs build --strict --site-dir site")
    checker = [step for step in job["steps"] if "lychee-action" in step.get("uses", "")]
    assert checker and "site/**/*.html" in checker[0]["with"]["args"]


def test_gpu_proofs_are_spread_over_shares_of_the_catalog() -> None:
    job = load(WORKFLOWS[0].parent / "gpu.yml")["jobs"]["verify"]
    shares = job["strategy"]["matrix"]["shard"]
    (step,) = steps_running(job, "scripts/verify-gpu.sh")
    assert f'--shard "${{{{ matrix.shard }}}}/{len(shares)}"' in step["run"]


@pytest.mark.parametrize("path", WORKFLOWS, ids=lambda path: path.name)
def test_workflows_with_self_hosted_jobs_never_run_for_pull_requests(path: Path) -> None:
    workflow = load(path)
    if not any(self_hosted(job) for job in workflow["jobs"].values()):
        return
    events = triggers(workflow)
    assert set(events) <= SELF_HOSTED_TRIGGERS, f"{path.name}: triggers {sorted(events)}"
    assert not set(events) & UNTRUSTED_TRIGGERS
    if "push" in events:
        assert events["push"] == {"branches": ["main"]}, f"{path.name}: push {events['push']}"


def test_self_hosted_jobs_are_approved_read_only_and_keep_no_credentials() -> None:
    for workflow_name, name, job, _ in all_jobs():
        if not self_hosted(job):
            continue
        where = f"{workflow_name}: {name}"
        environment = job.get("environment")
        environment = environment.get("name") if isinstance(environment, dict) else environment
        assert environment == "gpu", f"{where}: runs outside the gpu environment"
        assert job.get("permissions") == {"contents": "read"}, f"{where}: {job.get('permissions')}"
        checkouts = [step for step in job["steps"] if "actions/checkout" in step.get("uses", "")]
        assert checkouts, where
        for step in checkouts:
            assert step.get("with", {}).get("persist-credentials") is False, where
        assert not steps_running(job, "git push"), f"{where}: pushes from the self-hosted runner"


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


def test_every_verify_in_ci_requires_containment() -> None:
    runs = [
        (workflow_name, name, step["run"])
        for workflow_name, name, job, _ in all_jobs()
        for step in steps_running(job, "failpedia verify")
    ]
    assert runs, "CI proves no reproducer"
    for workflow_name, name, command in runs:
        assert "--require-containment" in command, f"{workflow_name}: {name}: {command}"
    script = (REPO_ROOT / "scripts" / "test.sh").read_text(encoding="utf-8")
    verify_lines = [line for line in script.splitlines() if line.startswith("failpedia verify")]
    assert verify_lines and all("--require-containment" in line for line in verify_lines)
    assert "bubblewrap" in script
