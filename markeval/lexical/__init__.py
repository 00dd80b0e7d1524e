"""lexical metrics (see the package docstring for the public names)."""
