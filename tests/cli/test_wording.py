"""Counts in the CLI's output agree with their number: ``1 prompt``, ``2 prompts``; so do
the verbs after a list of flags."""

from __future__ import annotations

import pytest

from tests.serving.harness import run_cli


@pytest.mark.parametrize(
    ("target", "last_line"),
    [
        ("tests.cli.apps:FineServer", "ok (1 tool, 0 resources, 0 prompts)"),
        ("tests.cli.apps:TwoOfEachServer", "ok (1 tool, 2 resources, 2 prompts)"),
        ("tests.cli.apps:OneProblemServer", "1 problem"),
        ("tests.cli.apps:UnresolvableSchemaServer", "2 problems"),
    ],
)
def test_check_counts_agree(target: str, last_line: str) -> None:
    done = run_cli(["check", target])
    assert done.stdout.splitlines()[-1] == f"{target}: {last_line}"


def test_serve_counts_one_problem_in_the_singular() -> None:
    done = run_cli(["serve", "tests.cli.apps:OneProblemServer"])
    assert done.returncode == 2
    assert done.stderr.splitlines()[0] == (
        "error: cannot compile tests.cli.apps:OneProblemServer: 1 problem"
    )


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--workers", "2"], "error: --workers only applies to HTTP"),
        (
            ["--stateful", "--workers", "3", "--max-body-size", "4"],
            "error: --workers, --stateful and --max-body-size only apply to HTTP",
        ),
        (["--http", "--scope", "read"], "error: --scope needs --auth MODULE:ATTR"),
        (
            ["--http", "--scope", "read", "--anonymous"],
            "error: --scope and --anonymous need --auth MODULE:ATTR",
        ),
    ],
)
def test_verbs_agree_with_the_flags_they_follow(args: list[str], message: str) -> None:
    done = run_cli(["serve", "tests.cli.apps:TwoOfEachServer", *args])
    assert done.returncode == 2
    assert done.stderr.splitlines()[0] == message
