"""The demo's services: plain classes, bound in ``examples/demo/container.py``."""

from __future__ import annotations


class GreetingService:
    def greet(self, name: str) -> str:
        return f"Hello, {name}!"


class NameFormatter:
    def normalize(self, name: str) -> str:
        return name.strip()
