"""The papers' experiments at full scale, by one resumable command, with committed results.

``python -m markeval.reproduce`` (``make reproduce``) runs every stage in the ``ci`` and
``full`` profiles and writes the committed results (``markeval/results/``, shipped with
the package): each stage's rows, ``paper_comparison.csv``
(our number beside the paper's, one line per number the book compares), ``provenance.json``
and the per-stage time log ``timings.csv``. Finished units are kept under the markeval cache,
so an interrupted run resumes; ``--fresh`` recomputes a stage after its code changed.

* :mod:`~markeval.reproduce.stage` — what a stage is;
* :mod:`~markeval.reproduce.stages` — the stages, one module per experiment;
* :mod:`~markeval.reproduce.run` and :mod:`~markeval.reproduce.store` — running and resuming;
* :mod:`~markeval.reproduce.results` — reading the committed results and checking a slice of
  them against the code (chapters and the consistency test use it).
"""
