"""How declarations become a catalog: names, contracts, parameter plans, hooks, middleware,
all checked at once (``compile_server``); knows nothing of dispatching."""
