"""``python -m markeval.reproduce``: run the reproduction (``make reproduce`` runs it)."""

from markeval.reproduce.cli import main

main()
