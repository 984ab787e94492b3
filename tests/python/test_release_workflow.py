"""The release workflow (.github/workflows/release.yml): what it builds, and that it publishes
on a version tag only. It runs on GitHub; this checks its shape here."""

from __future__ import annotations

from pathlib import Path

import pytest

WORKFLOW = Path(__file__).resolve().parents[2] / ".github" / "workflows" / "release.yml"


@pytest.fixture(scope="module")
def workflow() -> dict:
    yaml = pytest.importorskip("yaml", reason="needs PyYAML (installed with the test extras' dask)")
    return yaml.safe_load(WORKFLOW.read_text())


def _uses(job: dict) -> list[dict]:
    return [s for s in job["steps"] if "uses" in s]


def test_wheels_for_manylinux_and_macos_and_an_sdist_with_maturin(workflow):
    jobs = workflow["jobs"]
    targets = {
        name: [p["target"] for p in jobs[name]["strategy"]["matrix"]["platform"]]
        for name in ("linux", "macos")
    }
    assert targets == {"linux": ["x86_64", "aarch64"], "macos": ["x86_64", "aarch64"]}
    for name in ("linux", "macos", "sdist"):
        builds = [s for s in _uses(jobs[name]) if s["uses"].startswith("PyO3/maturin-action@")]
        assert len(builds) == 1, name
        uploads = [s for s in _uses(jobs[name]) if s["uses"].startswith("actions/upload-artifact@")]
        assert uploads and uploads[0]["with"]["path"] == "dist", name
    linux_build = next(s for s in _uses(jobs["linux"]) if s["uses"].startswith("PyO3/maturin-action@"))
    assert linux_build["with"]["manylinux"] == "auto"
    assert next(s for s in _uses(jobs["sdist"]) if "maturin" in s["uses"])["with"]["command"] == "sdist"


def test_publishing_happens_on_a_version_tag_only(workflow):
    on = workflow.get("on", workflow.get(True))  # YAML 1.1 reads the key `on` as True
    assert on["push"] == {"tags": ["v*"]}
    jobs = workflow["jobs"]
    for name in ("release", "pages"):
        assert jobs[name]["if"] == "startsWith(github.ref, 'refs/tags/v')", name
    assert set(jobs["release"]["needs"]) == {"linux", "macos", "sdist", "docs"}
    publish = [s for s in _uses(jobs["release"]) if s["uses"].startswith("pypa/gh-action-pypi-publish@")]
    assert len(publish) == 1
    # Nothing else publishes.
    for name, job in jobs.items():
        if name not in ("release", "pages"):
            assert not any("publish" in s["uses"] or "deploy" in s["uses"] for s in _uses(job)), name


def test_the_docs_job_builds_the_site_as_the_test_suite_does(workflow):
    run = "\n".join(s.get("run", "") for s in workflow["jobs"]["docs"]["steps"])
    assert "python -m sphinx -W" in run and " docs " in run
