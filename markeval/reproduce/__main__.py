"""``python -m markeval.reproduce``: run the reproduction (``make reproduce`` runs it)."""

import signal
import sys

from markeval.reproduce.cli import main

status = main()
# Everything is computed and written: a Ctrl-C that lands while the worker pool shuts down
# must not print its threads' traceback.
signal.signal(signal.SIGINT, signal.SIG_IGN)
sys.exit(status)
