# Seed 000, "The contribution point", as written; only the import lines changed, plus
# the import of the ``platform`` the seed leaves undefined.
# Kept as the seed prints it: no reformatting, no import sorting.
# fmt: off
from mcp_adapter import TOOLS
from tests.extensions.seed_examples.host import platform

for contribution in platform.get_contributions(TOOLS):
    print(contribution.plugin, contribution.value.name)
