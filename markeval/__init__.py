"""markeval: metrics for generated text, from perplexity and BLEU to Mark-Evaluate.

The public API is flat: every metric a reader needs is importable from ``markeval``.
Models and data sit in their own namespaces: ``markeval.encoders`` (the offline
sentence encoder), ``markeval.datasets`` (BBC, WMT17, TAC), ``markeval.exercises``
(the book's auto-checked exercises).
"""

__version__ = "0.1.0"

from markeval.stats import Correlation, correlation, kendall, pearson, spearman

__all__ = ["Correlation", "__version__", "correlation", "kendall", "pearson", "spearman"]
