"""Redis is an optional dependency: serving without it never imports ``redis``, and asking
for it without the package installed is one clear line."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

NO_REDIS = "import sys; sys.modules['redis'] = None  # as if it were not installed\n"


def _run(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", NO_REDIS + code],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_serving_without_redis_never_imports_it() -> None:
    done = _run(
        "import anyio\n"
        "from container import Container\n"
        "from mcp_adapter import http_app\n"
        "from mcp_adapter.stores import InMemoryEventLog, InMemoryRateStore\n"
        "from tests.notifications.apps import NotesServer\n"
        "app = http_app(NotesServer, Container(), stateless=False)\n"
        "async def main():\n"
        "    async with app.router.lifespan_context(app):\n"
        "        pass\n"
        "anyio.run(main)\n"
        "print(sorted(name for name in sys.modules if name.startswith('mcp_adapter.stores.')))\n"
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == (
        "['mcp_adapter.stores.events', 'mcp_adapter.stores.handles', "
        "'mcp_adapter.stores.rates', 'mcp_adapter.stores.rounds']"
    )


def test_asking_for_redis_without_the_package_says_how_to_install_it() -> None:
    done = _run(
        "from mcp_adapter.cli import main\n"
        "raise SystemExit(main(['serve', 'tests.notifications.apps:NotesServer', '--redis', 'redis://h:1/0']))\n"
    )
    assert done.returncode == 2
    assert done.stderr.splitlines() == [
        "error: --redis needs the redis package, which is not installed",
        "hint: pip install 'mcp-adapter-di[redis]'",
    ]
