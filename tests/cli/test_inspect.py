"""``mcp-adapter list`` and ``check``, and how the CLI reports failures."""

from __future__ import annotations

import json
from pathlib import Path

import anyio
import pytest
from examples.demo.container import build_container
from examples.demo.server import DemoServer

from mcp_adapter.cli import main
from mcp_adapter.testing import McpTestClient
from tests.serving.harness import run_cli

DEMO = ["examples.demo.server:DemoServer", "--container", "examples.demo.container:build_container"]


def test_list_table(in_root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["list", *DEMO]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "Demo 0.1.0"
    assert lines[2].split() == ["TOOL", "TOOLSET", "TITLE", "ANNOTATIONS"]
    greet = next(line for line in lines if line.startswith("greet "))
    assert greet.split()[:2] == ["greet", "Demo"]  # a class tool: its server's toolset
    assert "Greet a user" in greet
    assert "read-only, non-destructive, idempotent, closed-world" in greet
    assert any(line.startswith("greeting  demo://greetings/{name}") for line in lines)
    assert "PROMPT    TITLE" in lines


@pytest.mark.parametrize("era", ["2026-07-28", "2025-11-25"])
def test_list_json_is_the_exact_tools_list_result(
    in_root: Path, capsys: pytest.CaptureFixture[str], era: str
) -> None:
    assert main(["list", *DEMO, "--json", "--protocol", era]) == 0
    printed = json.loads(capsys.readouterr().out)
    client = McpTestClient(build_container(), DemoServer, protocol=era)  # type: ignore[arg-type]
    expected = anyio.run(client.list_tools).message["result"]
    assert printed == expected
    assert [tool["name"] for tool in printed["tools"]] == ["greet", "summarize"]


def test_list_shows_each_tools_toolset() -> None:
    done = run_cli(["list", "tests.serving.apps:toolset_catalog"])
    assert done.returncode == 0, done.stderr
    rows = [line.split()[:2] for line in done.stdout.splitlines()[2:] if line]
    assert rows == [
        ["TOOL", "TOOLSET"],
        ["list-repos", "repos"],
        ["get-repo", "repos"],
        ["list-issues", "issues"],
        ["me", "users"],
    ]


def test_list_toolsets(in_root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["list", "tests.serving.apps:toolset_catalog", "--toolsets", "users"]) == 0
    out = capsys.readouterr().out
    assert [line.split()[:2] for line in out.splitlines()[2:]] == [
        ["TOOL", "TOOLSET"],
        ["me", "users"],
    ]


def test_check_ok_warns_about_unset_annotations(
    in_root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["check", "tests.cli.apps:FineServer"]) == 0
    out = capsys.readouterr().out
    assert "warning: tool 'loose' has no annotations" in out
    assert out.splitlines()[-1] == "tests.cli.apps:FineServer: ok (1 tool, 0 resources, 0 prompts)"


def test_check_demo_is_clean(in_root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", *DEMO]) == 0
    out = capsys.readouterr().out
    assert "warning" not in out
    assert "ok (3 tools, 1 resource, 1 prompt)" in out


def test_check_reports_every_problem_with_its_path(
    in_root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["check", "tests.cli.apps:BrokenServer", "--container", "tests.cli.apps:container"]
    assert main(args) == 1
    out = capsys.readouterr().out
    assert "error: missing binding: no binding for Clock" in out
    assert "path: NeedsRepositoryTool -> Repository(clock) -> ???" in out
    assert "error: invalid declaration: invalid name 'bad name!'" in out
    assert "path: BadNameTool.handle(clock) -> ???" in out
    assert out.splitlines()[-1] == "tests.cli.apps:BrokenServer: 3 problems"
    assert "Traceback" not in out


def _kinds(out: str) -> list[str]:
    """The kind of each top-level line (``error``, ``warning``, ``note``), in order."""
    return [line.split(":")[0] for line in out.splitlines() if not line.startswith(" ")][:-1]


def test_check_shows_warnings_and_notes_with_errors_errors_first(
    in_root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The server does not compile: its declared tools are still warned about, and the
    container's session-scoped services still noted."""
    args = ["check", "tests.cli.apps:BrokenServer"]
    assert main([*args, "--container", "tests.serving.sessions:build_container"]) == 1
    out = capsys.readouterr().out
    assert _kinds(out) == ["error"] * 3 + ["warning"] * 3 + ["note"]
    warned = [line.split("'")[1] for line in out.splitlines() if line.startswith("warning:")]
    assert warned == ["needs-repository", "bad name!", "loose"]
    assert "note: session-scoped: Conversation: one per 2025-11-25 session" in out
    assert out.splitlines()[-1] == "tests.cli.apps:BrokenServer: 3 problems"


def test_check_of_a_compiled_server_with_problems_shows_every_kind(
    in_root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["check", "tests.cli.apps:CompiledWithProblemsServer"]
    assert main([*args, "--container", "tests.cli.apps:broken_binding_container"]) == 1
    out = capsys.readouterr().out
    assert _kinds(out) == ["error", "warning", "warning", "note"]
    assert "error: missing binding: no binding for Clock" in out
    assert "warning: tool 'origin' has no annotations" in out
    assert "warning: tool 'loose' has no annotations" in out
    assert "note: tool 'origin' needs the HTTP request: it works over HTTP only" in out
    assert out.splitlines()[-1] == "tests.cli.apps:CompiledWithProblemsServer: 1 problem"


def test_serve_reports_compile_problems_in_one_block(in_root: Path) -> None:
    result = run_cli(["serve", "tests.cli.apps:BrokenServer"])
    assert result.returncode == 2
    lines = result.stderr.splitlines()
    assert lines[0].startswith("error: cannot compile tests.cli.apps:BrokenServer: ")
    assert (
        lines[-1] == "hint: run `mcp-adapter check tests.cli.apps:BrokenServer` after fixing them"
    )
    assert "Traceback" not in result.stderr


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["list", "nowhere.module:Server"], "error: cannot import module 'nowhere.module'"),
        (["list", "examples.demo.server"], "is not of the form MODULE:ATTR"),
        (["list", "examples.demo.server:Nope"], "has no attribute 'Nope'"),
        (["list", "examples.demo.server:GreetTool"], "not something to serve"),
        (
            ["list", *DEMO[:1], "--container", "tests.cli.apps:not_a_container"],
            "is a str, not a Container",
        ),
        (
            ["list", *DEMO[:1], "--container", "tests.cli.apps:exploding_container"],
            "RuntimeError: database is down",
        ),
        (["serve", *DEMO[:1], "--workers", "2"], "error: --workers only applies to HTTP"),
        (["serve", *DEMO[:1], "--http", "--workers", "2", "--stateful"], "cannot be spread"),
    ],
)
def test_errors_are_one_line_and_a_hint(
    in_root: Path, capsys: pytest.CaptureFixture[str], args: list[str], message: str
) -> None:
    assert main(args) == 2
    err = capsys.readouterr().err
    lines = err.splitlines()
    assert message in lines[0]
    assert len(lines) <= 2
    assert "Traceback" not in err


def test_debug_shows_the_traceback(in_root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    args = ["list", *DEMO[:1], "--container", "tests.cli.apps:exploding_container", "--debug"]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert "Traceback" in err
    assert "database is down" in err


def test_no_command_prints_help(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([]) == 2
    assert "serve" in capsys.readouterr().err


def test_check_refuses_a_published_schema_that_does_not_resolve(
    in_root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["check", "tests.cli.apps:UnresolvableSchemaServer"]) == 1
    out = capsys.readouterr().out
    for era in ("2026-07-28", "2025-11-25"):
        assert (
            f"tool 'external-ref' ({era}) inputSchema: $ref "
            "'https://example.com/elsewhere.json' does not resolve inside the schema"
        ) in out
    assert out.splitlines()[-1] == "tests.cli.apps:UnresolvableSchemaServer: 2 problems"
