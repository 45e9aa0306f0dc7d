"""What the seed's examples assume exists: a sandbox launcher and a spec's parts.

Not from the seed: the seed calls ``launch(...)`` and names ``launch_sandbox`` and
``LAUNCH_SANDBOX_ANNOTATIONS`` without showing them.
"""

from __future__ import annotations

from mcp.types import ToolAnnotations

LAUNCHED: list[tuple[str, str]] = []


async def launch(sandbox_name: str, variant: str) -> dict:
    if sandbox_name == "explode":
        raise RuntimeError("the sandbox host at 10.0.0.7 refused (secret detail)")
    LAUNCHED.append((sandbox_name, variant))
    return {"sandbox": sandbox_name, "variant": variant, "status": "running"}


async def launch_sandbox(sandbox_name: str, variant: str = "eval") -> dict:
    """Launch a sandbox for this session to run code in."""
    return await launch(sandbox_name, variant)


LAUNCH_SANDBOX_ANNOTATIONS = ToolAnnotations(
    read_only_hint=False,
    destructive_hint=False,
    idempotent_hint=False,
    open_world_hint=True,
)
