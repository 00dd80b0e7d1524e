"""Tooling for the book, kept out of the library: ``pip install markeval`` does not ship it.

These modules need the book's environment (``requirements.txt``: nbformat, PyYAML,
jupyter-book), which the package does not declare. Run them from the repository root, e.g.
``python -m tools.student_edition _build/student`` (``make student``).
"""
