"""A server implementing every fixture of the official MCP conformance suite's server scenarios."""
