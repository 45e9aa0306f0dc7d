"""MCP components served through the official ``mcp`` SDK, with services from a container."""
