"""Not from the seed: the platform the contribution-point example iterates."""

from mcp_adapter import Platform
from tests.extensions.seed_examples.notebook import Notebook
from tests.extensions.seed_examples.offering import Sandboxes

platform = Platform([Sandboxes(), Notebook()])
