"""Experiments that any user can rerun on their own data; the book's chapters call them.

Import from the modules (they pull in pandas and the metric families, so nothing is loaded
until used):

* :mod:`markeval.experiments.human_correlation` — Williams' test; correlation per group
  (topic), averaged, with undefined groups reported.
* :mod:`markeval.experiments.translation` — WMT17 system- and segment-level score tables and
  their correlations with direct assessment.
* :mod:`markeval.experiments.summarization` — TAC summary-level correlation (per topic, then
  averaged), with the choices of summaries and references made explicit.
* :mod:`markeval.experiments.word_set_metrics` — PRD, IPR and Mark-Evaluate of one set of
  word samples against another, every K from one geometry, and the rules for small sets; the
  WMT17 and TAC studies score their set metrics with it.
* :mod:`markeval.experiments.wmt17`, :mod:`markeval.experiments.tac` and
  :mod:`markeval.experiments.ladder` — the papers' WMT17 and TAC studies and the generator
  ladder, each in one place: constants, the harness that turns inputs into result rows, and
  the builders that set the rows beside the papers' tables (the chapters call the same
  builders). The synthetic experiments' harness is in :mod:`markeval.experiments.sensitivity`.
  The reproduction stages (:mod:`markeval.reproduce.stages`) only choose settings and units.
* :mod:`markeval.experiments.sensitivity` and :mod:`markeval.experiments.sensitivity_verdicts`
  — K sweep, mode collapse and word swap (Mark-Evaluate Figs. 2–4) with computed verdicts; also
  the one scoring function for sets of embeddings (:func:`~markeval.experiments.sensitivity.scores`)
  and the one word-swap perturbation, which the generator ladder reuses.
* :mod:`markeval.experiments.generators` and :mod:`markeval.experiments.ranking` — a ladder
  of text generators of known quality and the metrics' rank agreement with it.

The metrics' names, table labels, directions (higher is better or not) and what each is meant
to measure come from :mod:`markeval.registry`.
"""
