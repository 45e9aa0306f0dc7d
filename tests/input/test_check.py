"""``mcp-adapter check`` lists which components may ask the client for what."""

from __future__ import annotations

from tests.serving.harness import run_cli


def test_check_lists_what_each_component_may_ask() -> None:
    done = run_cli(["check", "tests.input.test_kinds:Kinds"])
    assert done.returncode == 0, done.stdout + done.stderr
    notes = [line for line in done.stdout.splitlines() if "may ask for" in line]
    assert notes == [
        "note: tool 'summary' may ask for: sampling (summarize)",
        "note: tool 'agent' may ask for: sampling (with_tools)",
        "note: tool 'roots' may ask for: roots (roots)",
        "note: tool 'sign_in' may ask for: elicitation (url) (sign_in)",
        "note: tool 'plain_sign_in' may ask for: elicitation (url) (sign_in)",
        "note: tool 'unsaid' may ask for: any question (its return annotation names none) (unsaid)",
    ]


def test_check_lists_both_styles_of_tools() -> None:
    done = run_cli(["check", "tests.input.test_resolve:Tools"])
    assert done.returncode == 0, done.stdout + done.stderr
    notes = [line for line in done.stdout.splitlines() if "may ask for" in line]
    assert notes == [
        "note: tool 'delete' may ask for: elicitation (form) (confirm_delete)",
        "note: tool 'branch' may ask for: elicitation (form) (confirm_delete)",
    ]
