"""Embedding metrics on contextual token vectors (see the package docstring for the public names).

The modules: :mod:`~markeval.semantic.idf` (token weights from a corpus the caller chooses),
:mod:`~markeval.semantic.bertscore` (greedy matching), :mod:`~markeval.semantic.emd` (exact
earth mover's distance), :mod:`~markeval.semantic.moverscore`, and
:mod:`~markeval.semantic.baseline` (BERTScore rescaling baselines we compute ourselves).
"""
