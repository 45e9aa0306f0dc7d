"""What is measured: the per-call MCP workload, the container graph, the HTTP request and
apps, this adapter's side of them. Shared by the suites, the counts and the commands;
imports only :mod:`benchmarks.harness`."""
