"""``mcp-adapter make:mcp-*``: the seed's generator, with this project's imports and the
tool's annotations set (so ``check`` is clean on what it writes)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import anyio
import pytest

from container import Container
from mcp_adapter import Server, compile_server
from mcp_adapter.cli import main, safe_files
from mcp_adapter.testing import McpTestClient

SEED_TEMPLATE = '''from mcp_adapter import McpResponse, Tool, ToolAnnotations
from schemas import Schema


class EchoToolInput(Schema):
    """Arguments controlled by the MCP client."""

    message: str


class EchoTool(Tool[EchoToolInput]):
    """Describe the work performed by this tool."""

    description = "Echo the provided message."
    input = EchoToolInput
    # What clients may assume; unset, they assume the worst (writes, destructive,
    # not idempotent, open world) and ask before every call. Say what it does.
    annotations = ToolAnnotations(
        read_only=True,
        destructive=False,
        idempotent=True,
        open_world=False,
    )

    async def handle(self, payload: EchoToolInput) -> McpResponse:
        """
        Process the validated input message.

        Parameters
        ----------
        payload : EchoToolInput
            Validated arguments supplied by the MCP client.

        Returns
        -------
        McpResponse
            Text response containing the input message.
        """
        return McpResponse.text(payload.message)
'''


@pytest.fixture(autouse=True)
def in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    return tmp_path


def load(path: Path) -> ModuleType:
    name = f"generated_{path.stem}_{abs(hash(path))}"
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def test_echo_renders_the_seed_template(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["make:mcp-tool", "echo"]) == 0
    path = Path("app/mcp/tools/echo_tool.py")
    assert path.read_text() == SEED_TEMPLATE
    assert "Created app/mcp/tools/echo_tool.py (EchoTool)" in capsys.readouterr().out


def test_generated_tool_imports_compiles_and_answers() -> None:
    assert main(["make:mcp-tool", "echo"]) == 0
    module = load(Path("app/mcp/tools/echo_tool.py"))

    class EchoServer(Server):
        tools = (module.EchoTool,)

    catalog = compile_server(EchoServer, Container())
    assert list(catalog.tools) == ["echo"]
    result = anyio.run(McpTestClient(Container(), catalog).tool, "echo", {"message": "hi"})
    result.assertOk()
    assert result.texts == ["hi"]


def test_check_is_clean_on_a_server_of_generated_tools(
    in_tmp: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["make:mcp-tool", "echo"]) == 0
    assert main(["make:mcp-tool", "support/find_ticket"]) == 0
    (in_tmp / "helpdesk.py").write_text(
        "from app.mcp.tools.echo_tool import EchoTool\n"
        "from app.mcp.tools.support.find_ticket_tool import FindTicketTool\n"
        "from mcp_adapter import Server\n\n\n"
        "class Helpdesk(Server):\n"
        "    tools = (EchoTool, FindTicketTool)\n"
    )
    capsys.readouterr()
    assert main(["check", "helpdesk.py:Helpdesk"]) == 0
    out = capsys.readouterr().out
    assert out.splitlines() == ["helpdesk.py:Helpdesk: ok (2 tools, 0 resources, 0 prompts)"]


def test_nested_name() -> None:
    assert main(["make:mcp-tool", "support/find_ticket"]) == 0
    path = Path("app/mcp/tools/support/find_ticket_tool.py")
    module = load(path)
    assert module.FindTicketTool.__name__ == "FindTicketTool"
    assert module.FindTicketToolInput.__name__ == "FindTicketToolInput"

    class Support(Server):
        tools = (module.FindTicketTool,)

    assert list(compile_server(Support, Container()).tools) == ["find-ticket"]


def test_path_option() -> None:
    assert main(["make:mcp-tool", "echo", "--path", "src/tools"]) == 0
    assert Path("src/tools/echo_tool.py").is_file()


def test_never_overwrites_unless_forced(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["make:mcp-tool", "echo"]) == 0
    path = Path("app/mcp/tools/echo_tool.py")
    path.write_text("# mine\n")
    capsys.readouterr()
    assert main(["make:mcp-tool", "echo"]) == 2
    err = capsys.readouterr().err
    assert err.splitlines() == [
        "error: app/mcp/tools/echo_tool.py already exists",
        "hint: choose another name, or pass --force to replace it",
    ]
    assert path.read_text() == "# mine\n"
    assert main(["make:mcp-tool", "echo", "--force"]) == 0
    assert path.read_text() == SEED_TEMPLATE


@pytest.mark.parametrize(
    "name",
    [
        "../escape",
        "support/../../x",
        "/etc/passwd",
        "C:/x",
        "1tool",
        "my tool",
        "class",
        "a//b",
        "",
    ],
)
def test_rejects_bad_names(name: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["make:mcp-tool", name]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ")
    assert "hint: " in err
    assert "Traceback" not in err
    assert not Path("app").exists()


@pytest.mark.parametrize(
    ("name", "file", "cls"),
    [
        ("EchoTool", "echo_tool.py", "EchoTool"),
        ("find-ticket", "find_ticket_tool.py", "FindTicketTool"),
    ],
)
def test_name_spellings(name: str, file: str, cls: str) -> None:
    assert main(["make:mcp-tool", name]) == 0
    assert hasattr(load(Path("app/mcp/tools") / file), cls)


def test_server_resource_and_prompt_compile_together() -> None:
    assert main(["make:mcp-tool", "echo"]) == 0
    assert main(["make:mcp-resource", "status"]) == 0
    assert main(["make:mcp-prompt", "support/triage"]) == 0
    assert main(["make:mcp-server", "helpdesk"]) == 0
    tool = load(Path("app/mcp/tools/echo_tool.py")).EchoTool
    resource = load(Path("app/mcp/resources/status_resource.py")).StatusResource
    prompt = load(Path("app/mcp/prompts/support/triage_prompt.py")).TriagePrompt
    server = load(Path("app/mcp/servers/helpdesk_server.py")).HelpdeskServer

    class Helpdesk(server):  # type: ignore[misc,valid-type]
        tools = (tool,)
        resources = (resource,)
        prompts = (prompt,)

    catalog = compile_server(Helpdesk, Container())
    assert catalog.name == "helpdesk"
    client = McpTestClient(Container(), catalog)
    read = anyio.run(client.read_resource, "app://status")
    assert read.message["result"]["contents"][0]["text"] == "Contents of status."
    got = anyio.run(client.prompt, "triage", {"topic": "billing"})
    assert got.message["result"]["messages"][0]["content"]["text"] == "Tell me about billing."


def test_help_lists_the_generators(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["make:mcp-tool", "--help"])
    assert exit_info.value.code == 0
    out = capsys.readouterr().out
    assert "NAME" in out
    assert "--force" in out
    assert "--path" in out


# Symbolic links below --path are refused, wherever they point, --force included.


@pytest.fixture(params=["dir_fd", "by path"])
def write_mode(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Both ways of writing: relative to opened folders (POSIX), and by path (no ``dir_fd``)."""
    if request.param == "by path":
        monkeypatch.setattr(safe_files, "_DIR_FD", False)
    elif not safe_files._DIR_FD:
        pytest.skip("this platform has no dir_fd")
    return str(request.param)


def refused(args: list[str], capsys: pytest.CaptureFixture[str], link: str) -> None:
    for force in ([], ["--force"]):
        capsys.readouterr()
        assert main([*args, *force]) == 2
        err = capsys.readouterr().err
        assert err.splitlines() == [
            f"error: {link} is a symbolic link; make:mcp-* never writes through one",
            "hint: remove the link, or pass a --path with no links below it",
        ]


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    folder = tmp_path.parent / f"{tmp_path.name}-outside"
    folder.mkdir()
    (folder / "victim.py").write_text("# not yours\n")
    return folder


def test_a_file_symlink_is_refused(
    write_mode: str, outside: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    Path("tools").mkdir()
    Path("tools/echo_tool.py").symlink_to(outside / "victim.py")
    refused(["make:mcp-tool", "echo", "--path", "tools"], capsys, "tools/echo_tool.py")
    assert (outside / "victim.py").read_text() == "# not yours\n"


def test_a_dangling_file_symlink_is_refused(
    write_mode: str, outside: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    Path("tools").mkdir()
    Path("tools/echo_tool.py").symlink_to(outside / "new.py")
    refused(["make:mcp-tool", "echo", "--path", "tools"], capsys, "tools/echo_tool.py")
    assert not (outside / "new.py").exists()


def test_a_symlink_to_a_file_inside_the_folder_is_refused(
    write_mode: str, capsys: pytest.CaptureFixture[str]
) -> None:
    Path("tools").mkdir()
    Path("tools/mine.py").write_text("# mine\n")
    Path("tools/echo_tool.py").symlink_to("mine.py")
    refused(["make:mcp-tool", "echo", "--path", "tools"], capsys, "tools/echo_tool.py")
    assert Path("tools/mine.py").read_text() == "# mine\n"


def test_a_folder_symlink_below_the_path_is_refused(
    write_mode: str, outside: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    Path("app/mcp/tools").mkdir(parents=True)
    Path("app/mcp/tools/support").symlink_to(outside, target_is_directory=True)
    refused(["make:mcp-tool", "support/find_ticket"], capsys, "app/mcp/tools/support")
    refused(["make:mcp-tool", "support/deep/find_ticket"], capsys, "app/mcp/tools/support")
    assert sorted(p.name for p in outside.iterdir()) == ["victim.py"]


def test_a_dangling_folder_symlink_is_refused(
    write_mode: str, outside: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    Path("tools").mkdir()
    Path("tools/support").symlink_to(outside / "gone", target_is_directory=True)
    refused(["make:mcp-tool", "support/find_ticket", "--path", "tools"], capsys, "tools/support")
    assert not (outside / "gone").exists()


def test_the_path_itself_may_be_a_symlink(write_mode: str, outside: Path) -> None:
    Path("linked").symlink_to(outside, target_is_directory=True)
    assert main(["make:mcp-tool", "echo", "--path", "linked"]) == 0
    assert (outside / "echo_tool.py").read_text() == SEED_TEMPLATE


def test_force_replaces_a_regular_file(write_mode: str) -> None:
    assert main(["make:mcp-tool", "support/echo"]) == 0
    path = Path("app/mcp/tools/support/echo_tool.py")
    path.write_text("# mine\n")
    assert main(["make:mcp-tool", "support/echo"]) == 2
    assert path.read_text() == "# mine\n"
    assert main(["make:mcp-tool", "support/echo", "--force"]) == 0
    assert path.read_text() == SEED_TEMPLATE


def test_a_file_where_a_folder_goes_is_refused(
    write_mode: str, capsys: pytest.CaptureFixture[str]
) -> None:
    Path("tools").mkdir()
    Path("tools/support").write_text("")
    assert main(["make:mcp-tool", "support/echo", "--path", "tools"]) == 2
    error = capsys.readouterr().err.splitlines()[0]
    assert error == "error: tools/support exists and is not a folder"
