"""docs/tasks.md's server for real clients: a long tool and one that asks, as tasks."""
