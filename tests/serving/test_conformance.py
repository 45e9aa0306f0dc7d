"""The official MCP conformance suite against ``examples/conformance`` over HTTP on 127.0.0.1.

The pinned releases (and the Node 22 they need) are installed by the test itself
into ``build/conformance/`` on first use; only ``npm`` must exist (without it the
tests are skipped with the line saying what to install, and fail in CI,
``CI=true``). Release 0.1.16 runs its ``active`` and ``pending`` suites, with no
failure. Release 0.2.0-alpha.12 runs what each spec revision requires (``--requirements``): the
scenarios expected to pass are listed and must pass; those expected to fail are
listed with the reason, and fail this test if they start passing, so that the
lists stay true (move a scenario to the passing list when the work lands).
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from examples.conformance import suite

from tests import needs
from tests.serving.harness import serve_process

PASSING: dict[str, frozenset[str]] = {
    "2025-11-25": frozenset(
        {
            "server-initialize",
            "logging-set-level",
            "ping",
            "completion-complete",
            "tools-list",
            "tools-call-simple-text",
            "tools-call-image",
            "tools-call-audio",
            "tools-call-embedded-resource",
            "tools-call-mixed-content",
            "tools-call-with-logging",
            "tools-call-error",
            "tools-call-with-progress",
            "tools-call-sampling",
            "tools-call-elicitation",
            "elicitation-sep1034-defaults",
            "server-sse-multiple-streams",
            "elicitation-sep1330-enums",
            "resources-list",
            "resources-read-text",
            "resources-read-binary",
            "resources-templates-read",
            "resources-subscribe",
            "resources-unsubscribe",
            "prompts-list",
            "prompts-get-simple",
            "prompts-get-with-args",
            "prompts-get-embedded-resource",
            "prompts-get-with-image",
            "dns-rebinding-protection",
            # not scored for 2025-11-25 (added after its release, or pending), passed all the same
            "server-session-lifecycle",
            "json-schema-2020-12",
            "server-sse-polling",
        }
    ),
    "2026-07-28": frozenset(
        {
            "completion-complete",
            "tools-list",
            "tools-call-simple-text",
            "tools-call-image",
            "tools-call-audio",
            "tools-call-embedded-resource",
            "tools-call-mixed-content",
            "tools-call-error",
            "tools-call-with-progress",
            "server-sse-multiple-streams",
            "resources-list",
            "resources-read-text",
            "resources-read-binary",
            "resources-templates-read",
            "sep-2164-resource-not-found",
            "prompts-list",
            "prompts-get-simple",
            "prompts-get-with-args",
            "prompts-get-embedded-resource",
            "prompts-get-with-image",
            "dns-rebinding-protection",
            "caching",
            "input-required-result-missing-input-response",
            "input-required-result-unsupported-methods",
            "input-required-result-ignore-extra-params",
            "input-required-result-validate-input",
            "server-stateless",
            "input-required-result-basic-elicitation",
            "input-required-result-basic-sampling",
            "input-required-result-basic-list-roots",
            "input-required-result-request-state",
            "input-required-result-multiple-input-requests",
            "input-required-result-multi-round",
            "input-required-result-result-type",
            "input-required-result-tampered-state",
            "input-required-result-capability-check",
            "input-required-result-non-tool-request",
            "tasks-lifecycle",
            "tasks-capability-negotiation",
            "tasks-wire-fields",
            "tasks-request-state-removal",
            "tasks-request-headers",
            "tasks-dispatch-and-envelope",
            "tasks-required-task-error",
            "tasks-mrtr-input",
            "tasks-mrtr-composition",
            # not scored for 2026-07-28 (an extension, or pending), passed all the same
            "tasks-status-notifications",
            "json-schema-2020-12",
            "http-header-validation",
            "http-custom-header-server-validation",
        }
    ),
}

FAILING: dict[str, dict[str, str]] = {
    "2025-11-25": {},
    "2026-07-28": {},
}
"""Scenarios expected to fail, with the reason (none at these releases)."""


def toolchain(version: str, cache: Path | None = None) -> suite.Toolchain:
    """The suite's ``version``, installed with ``npm`` if it is not there yet."""
    found = suite.installed(suite.CACHE_ROOT / version if cache is None else cache, version)
    if found is not None:
        return found
    needs.command("npm", suite.NPM_MISSING.removeprefix("npm not found: "))
    return suite.install(version, cache)


@pytest.fixture(scope="module")
def server_url() -> Iterator[str]:
    with serve_process([sys.executable, "-m", "examples.conformance", "--port", "0"]) as served:
        yield served.url


@pytest.mark.parametrize("which", ["active", "pending"])
def test_release_0_1_16_passes_with_no_failures(server_url: str, which: str) -> None:
    result = suite.run(server_url, which, toolchain(suite.CONFORMANCE_VERSION))
    assert result.scenarios, result.output
    assert not result.failed, f"failing scenarios: {result.failed}\n{result.output}"
    assert result.returncode == 0, result.output


@pytest.mark.parametrize("revision", suite.REVISIONS)
def test_each_revisions_requirements_pass_but_the_known_gaps(
    server_url: str, revision: str
) -> None:
    result = suite.run(server_url, revision, toolchain(suite.REQUIREMENTS_VERSION))
    assert result.scenarios, result.output
    ran = set(result.scenarios)
    expected = PASSING[revision] | set(FAILING[revision])
    assert ran == expected, (
        f"scenarios run {sorted(ran - expected)}, missing {sorted(expected - ran)}"
    )
    regressed = sorted(PASSING[revision] - set(result.passed))
    assert not regressed, f"scenarios that must pass failed: {regressed}\n{result.output}"
    newly = sorted(set(FAILING[revision]) & set(result.passed))
    assert not newly, (
        f"scenarios listed as failing now pass: {newly}; move them to PASSING[{revision!r}]"
    )


@pytest.mark.parametrize(
    ("ci", "outcome"), [("", pytest.skip.Exception), ("true", pytest.fail.Exception)]
)
def test_without_npm_the_suite_says_what_is_missing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, ci: str, outcome: type[BaseException]
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    monkeypatch.setenv("CI", ci)
    with pytest.raises(outcome) as raised:
        toolchain(suite.CONFORMANCE_VERSION, tmp_path / "cache")
    assert str(raised.value).startswith(suite.NPM_MISSING)
    assert not (tmp_path / "cache").exists()
