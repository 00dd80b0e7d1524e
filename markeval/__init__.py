"""markeval: metrics for generated text, from perplexity and BLEU to Mark-Evaluate.

The public API is flat: every metric a reader needs is importable from ``markeval``.
Models and data sit in their own namespaces: ``markeval.encoders`` (the offline
sentence encoder), ``markeval.datasets`` (BBC, WMT17, TAC), ``markeval.exercises``
(the book's auto-checked exercises).
"""

from markeval._version import __version__

from markeval.distribution.coverage import DensityCoverageResult, density_coverage
from markeval.distribution.fid import FIDResult, fid, frechet_distance
from markeval.distribution.ipr import IPRResult, improved_precision_recall
from markeval.distribution.mauve import FrontierIntegralResult, MauveResult, mauve
from markeval.distribution.prd import PRDResult, prd
from markeval.distribution.vendi import VendiResult, vendi, vendi_score
from markeval.lexical._ngram import NGramReferences
from markeval import registry
from markeval._result import MetricResult
from markeval.lexical._ngram import SentenceScores
from markeval.lexical.bleu import (
    BLEUScore,
    BLEUStatistics,
    bleu,
    BLEUScoring,
    bleu_from_statistics,
    bleu_statistics,
    sentence_bleu,
    sentence_bleu_scores,
)
from markeval.encoders.causal_lm import CausalLMScorer, TokenLogProbs, load_causal_lm
from markeval.lexical.gleu import (
    GLEUScore,
    GLEUStatistics,
    gleu,
    gleu_from_statistics,
    gleu_statistics,
    sentence_gleu,
    sentence_gleu_scores,
)
from markeval.lexical.chrf import (
    CHRFScore,
    CHRFStatistics,
    chrf,
    chrf_from_statistics,
    chrf_statistics,
    sentence_chrf,
    sentence_chrf_scores,
)
from markeval.lexical.meteor import CorpusMeteorResult, MeteorResult, corpus_meteor, meteor
from markeval.lexical.ngram_lm import NGramLM
from markeval.lexical.perplexity import (
    PerplexityResult,
    cross_entropy,
    forward_cross_entropy,
    perplexity,
    reverse_cross_entropy,
)
from markeval.lexical.ter import (
    TERScore,
    TERStatistics,
    sentence_ter,
    sentence_ter_scores,
    ter,
    ter_from_statistics,
    ter_statistics,
)
from markeval.lexical.rouge import RougeResult, RougeScore, RougeTypeResult, rouge, rouge_tokenize
from markeval.population.ecology import (
    ChapmanEstimate,
    M0Estimate,
    PetersenEstimate,
    SchnabelEstimate,
    chapman,
    lincoln_petersen,
    m0_mle,
    schnabel,
)
from markeval.population.mark_evaluate import (
    MarkEvaluateResult,
    MECaptureResult,
    MEPetersenResult,
    MESchnabelResult,
    mark_evaluate,
    mark_evaluate_from_balls,
    me_capture,
    me_petersen,
    me_schnabel,
    me_score,
)
from markeval.population.samples import word_samples
from markeval.semantic.bertscore import BERTScoreResult, bertscore
from markeval.semantic.greedy import greedy_match
from markeval.semantic.emd import earth_movers_distance
from markeval.semantic.idf import IDFWeights, idf_weights, uniform_weights
from markeval.semantic.moverscore import MOVERSCORE_PRESETS, MoverScore, aggregate_layers, moverscore
from markeval.registry import MetricInfo
from markeval.resampling import BootstrapResult, ItemScores, SufficientStatistics, bootstrap
from markeval.significance import SignificanceResult, SystemComparison, paired_significance
from markeval.stats import Correlation, correlation, kendall, pearson, spearman
from markeval.text import ngram_counts, split_sentences, tokenize

__all__ = [
    "BLEUScore", "BLEUScoring", "BLEUStatistics", "CausalLMScorer", "Correlation",
    "CorpusMeteorResult", "FIDResult", "GLEUScore", "GLEUStatistics", "IPRResult", "MeteorResult",
    "ChapmanEstimate", "M0Estimate", "MECaptureResult", "MEPetersenResult", "MESchnabelResult",
    "MarkEvaluateResult", "PetersenEstimate", "SchnabelEstimate", "chapman", "lincoln_petersen",
    "m0_mle", "mark_evaluate", "mark_evaluate_from_balls", "me_capture", "me_petersen", "me_schnabel", "me_score", "schnabel", "word_samples",
    "NGramLM", "NGramReferences", "PRDResult", "PerplexityResult", "RougeResult", "RougeScore",
    "RougeTypeResult", "TokenLogProbs", "__version__", "bleu",
    "bleu_from_statistics", "bleu_statistics", "corpus_meteor", "correlation", "cross_entropy",
    "fid", "forward_cross_entropy", "frechet_distance", "gleu", "gleu_from_statistics",
    "gleu_statistics", "improved_precision_recall", "kendall", "load_causal_lm", "meteor",
    "ngram_counts", "pearson", "perplexity", "prd", "reverse_cross_entropy", "rouge",
    "rouge_tokenize", "sentence_bleu", "sentence_bleu_scores", "sentence_gleu",
    "sentence_gleu_scores", "spearman", "split_sentences", "tokenize",
    "BERTScoreResult", "IDFWeights", "MOVERSCORE_PRESETS", "MoverScore", "aggregate_layers",
    "bertscore", "earth_movers_distance", "greedy_match", "idf_weights", "moverscore",
    "uniform_weights",
    "BootstrapResult", "ItemScores", "MetricInfo", "MetricResult", "SentenceScores", "bootstrap",
    "SufficientStatistics", "registry",
    "CHRFScore", "CHRFStatistics", "chrf", "chrf_from_statistics",
    "chrf_statistics", "sentence_chrf", "sentence_chrf_scores",
    "SignificanceResult", "SystemComparison", "paired_significance",
    "TERScore", "TERStatistics", "sentence_ter", "sentence_ter_scores", "ter",
    "ter_from_statistics", "ter_statistics",
    "FrontierIntegralResult", "MauveResult", "mauve",
    "DensityCoverageResult", "density_coverage", "VendiResult", "vendi", "vendi_score",
]
