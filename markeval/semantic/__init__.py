"""Embedding metrics on contextual token vectors (see the package docstring for the public names).

The modules: :mod:`~markeval.semantic.idf` (token weights from a corpus the caller chooses),
:mod:`~markeval.semantic.tokens` (what the cores read: token vectors, weights, special-token
mask), :mod:`~markeval.semantic.greedy` (greedy matching on arrays, BERTScore's core),
:mod:`~markeval.semantic.bertscore` (its text layer), :mod:`~markeval.semantic.emd` (exact
earth mover's distance), :mod:`~markeval.semantic.moverscore`, and
:mod:`~markeval.semantic.baseline` (BERTScore rescaling baselines we compute ourselves).
"""
