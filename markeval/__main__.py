"""``python -m markeval``: the command line (see :mod:`markeval.cli`)."""

import sys

from markeval.cli import main

if __name__ == "__main__":  # pytest --doctest-modules imports this module: do not run then
    sys.exit(main())
