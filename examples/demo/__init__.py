"""The seeds' demo server: greet, summarize, a greeting resource and prompt, a private tool."""
