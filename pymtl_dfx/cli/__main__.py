"""`python -m pymtl_dfx.cli`: the `dfx` command."""

import sys

# The package the commands import (`from .common import UsageError`), not a
# second copy of it, so that main's handlers catch the commands' errors.
from pymtl_dfx.cli import main

sys.exit( main() )
