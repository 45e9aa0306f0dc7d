"""What users declare: ``Tool``, ``Resource``, ``Prompt``, ``Server``, middleware, and the
``McpRequest`` and ``McpResponse`` their handlers take and return. Imports only the root."""
