"""Text utilities shared by the metrics: sentence splitting, tokenizers, n-grams."""

from __future__ import annotations

import functools
import re
from collections import Counter

from markeval._checks import (check_bool, check_choice, check_int, check_list, check_string,
                              check_strings)

# A sentence ends at . ! or ? (optionally followed by closing quotes/brackets) before
# whitespace and an upper-case letter, digit or opening quote. Common abbreviations
# ("Mr.", "Dr.") and single initials ("J. Smith", "U.S.") do not end a sentence, so
# that news text is not cut mid-sentence.
_ABBREVIATIONS = frozenset({
    "Mr", "Mrs", "Ms", "Dr", "Prof", "Sr", "Jr", "St", "Gen", "Gov", "Sen", "Rep", "Lt", "Col",
    "Capt", "Sgt", "Rev", "Inc", "Ltd", "Co", "Corp", "vs", "etc", "No", "Mt", "Jan", "Feb",
    "Mar", "Apr", "Jun", "Jul", "Aug", "Sep", "Sept", "Oct", "Nov", "Dec",
})
_CANDIDATE_END = re.compile(r"(?<=[.!?])(['\")\]]*)\s+(?=['\"(\[]?[A-Z0-9])")
_LAST_WORD = re.compile(r"([A-Za-z]+)\.$")


def _ends_sentence(prefix: str) -> bool:
    last = _LAST_WORD.search(prefix)
    if last is None:
        return True
    word = last.group(1)
    return word not in _ABBREVIATIONS and not (len(word) == 1 and word.isupper())


def split_sentences(text: str) -> list[str]:
    """Split running text into sentences with a rule-based splitter.

    Paragraph breaks always end a sentence. Within a paragraph a sentence ends at
    ``.``, ``!`` or ``?`` followed by white space and a capital letter or digit,
    except after common abbreviations and single-letter initials. Good enough for
    edited news prose (BBC); not a substitute for a trained splitter on messy text.

    Parameters
    ----------
    text : str
        Running text; paragraphs separated by blank lines or newlines.

    Returns
    -------
    list of str
        Sentences with surrounding white space removed; empty pieces dropped.

    Examples
    --------
    >>> split_sentences("Mr. Smith went to Washington. He met Dr. Jones!\\nThen he left.")
    ['Mr. Smith went to Washington.', 'He met Dr. Jones!', 'Then he left.']
    """
    check_string(text, "text")
    sentences: list[str] = []
    for paragraph in re.split(r"\n\s*", text):
        start = 0
        for boundary in _CANDIDATE_END.finditer(paragraph):
            if _ends_sentence(paragraph[start : boundary.start()]):
                sentences.append(paragraph[start : boundary.end(1)].strip())
                start = boundary.end()
        sentences.append(paragraph[start:].strip())
    return [s for s in sentences if s]


# --- Tokenizers (sacrebleu-compatible) -------------------------------------------------------
#
# BLEU scores depend on tokenisation, so markeval reproduces sacrebleu's tokenizers exactly:
# ``13a`` (mteval-v13a.pl, WMT's default), ``intl`` (mteval-v14 international), ``none``
# (split on white space only), ``char`` (every non-space character a token) and ``zh``
# (every CJK character a token, the rest as 13a's regular expressions). Every text is
# pre-processed as sacrebleu does: optional lower-casing, then ``rstrip()``, then the
# tokenizer, then ``str.split()``. sacrebleu's ``ja-mecab``, ``ko-mecab``, ``spm``,
# ``flores101``/``flores200`` and ``spBLEU-1K`` need a downloaded model (MeCab dictionaries, a
# SentencePiece model) and are not offered.

TOKENIZERS = ("13a", "intl", "none", "char", "zh")

# 13a step 1 puts spaces around these ASCII symbols. sacrebleu's class also contains the
# space itself; padding a space with spaces changes no token, so it is left out here.
_13A_SYMBOLS = re.compile(r"[!-&(-+/:-@\[-`{-~]")
# 13a steps 2-4, in sacrebleu's order: periods and commas unless next to a digit, and a dash
# after a digit.
_13A_RULES = (
    (re.compile(r"([^0-9])([\.,])"), r"\1 \2 "),
    (re.compile(r"([\.,])([^0-9])"), r" \1 \2"),
    (re.compile(r"([0-9])(-)"), r"\1 \2 "),
)
# Steps 2 and 3 change nothing but runs of periods and commas, each run by itself and only
# according to whether a digit (or nothing) is on either side of it. Scanning for the runs is
# fast (the pattern starts with a character set) where steps 2 and 3 test every position, so
# they are applied run by run (see _13a_run).
_13A_RUN = re.compile(r"[.,]+")
_DIGITS = "0123456789"  # "" is in it as well: nothing beside a run acts as a digit there
_INTL_RULES = (  # compiled on first use: they need the third-party `regex` module (\p{...})
    (r"(\P{N})(\p{P})", r"\1 \2 "),
    (r"(\p{P})(\P{N})", r" \1 \2"),
    (r"(\p{S})", r" \1 "),
)
_intl_compiled: list = []

# Tokenised lines are cached (as sacrebleu does) so that references shared by many systems
# are tokenised once. The cache is dropped whole when it grows past this many lines.
_CACHE_LINES = 2**17
_token_cache: dict[tuple[str, bool], dict[str, tuple[str, ...]]] = {}


def _13a_prepare(line: str) -> str:
    """mteval-v13a's language-independent part: drop <skipped>, join lines, unescape."""
    line = line.replace("<skipped>", "").replace("-\n", "").replace("\n", " ")
    if "&" in line:
        line = line.replace("&quot;", '"').replace("&amp;", "&")
        line = line.replace("&lt;", "<").replace("&gt;", ">")
    return line


def _13a_rules(text: str) -> str:
    """13a's regular expressions (sacrebleu's TokenizerRegexp) on ``text``, steps 1-4."""
    text = _13A_SYMBOLS.sub(r" \g<0> ", text)
    text = _13A_RUN.sub(_13a_run_in_place, text)
    step4, replacement = _13A_RULES[2]
    return step4.sub(replacement, text)


def _13a_run_in_place(match: re.Match) -> str:
    text, start, end = match.string, match.start(), match.end()
    return _13a_run(match.group(), text[start - 1 : start] in _DIGITS,
                    text[end : end + 1] in _DIGITS)


@functools.lru_cache(maxsize=4096)
def _13a_run(run: str, digit_before: bool, digit_after: bool) -> str:
    """Steps 2 and 3 on one run of periods and commas, with a digit (or nothing) or another
    character on either side: the rules themselves, on the run between two such characters."""
    window = ("1" if digit_before else "a") + run + ("1" if digit_after else "a")
    for pattern, replacement in _13A_RULES[:2]:
        window = pattern.sub(replacement, window)
    return window[1:-1]


def _tokenize_13a(lines: list[str]) -> list[tuple[str, ...]]:
    # The regular expressions run once over all lines joined by "\n" (much faster than a call
    # per line). This is exact: after _13a_prepare no line contains "\n", and every line is
    # padded with spaces as in sacrebleu, so no rule can match across a line boundary.
    text = _13a_rules("\n".join([f" {_13a_prepare(line)} " for line in lines]))
    return [tuple(chunk.split()) for chunk in text.split("\n")]


def _tokenize_intl(lines: list[str]) -> list[tuple[str, ...]]:
    if not _intl_compiled:
        try:
            import regex
        except ImportError:  # pragma: no cover - regex is installed with sacrebleu
            raise ImportError(
                "tokenize='intl' needs the 'regex' package (pip install regex)"
            ) from None
        _intl_compiled.extend((regex.compile(p), r) for p, r in _INTL_RULES)
    out = []
    # Line by line: the intl rules are not padded, so a line start must stay a text start.
    for line in lines:
        for pattern, replacement in _intl_compiled:
            line = pattern.sub(replacement, line)
        out.append(tuple(line.split()))
    return out


def _tokenize_none(lines: list[str]) -> list[tuple[str, ...]]:
    return [tuple(line.split()) for line in lines]


def _tokenize_char(lines: list[str]) -> list[tuple[str, ...]]:
    # sacrebleu joins the characters with spaces and BLEU splits on white space: every
    # character that str.split() does not treat as a separator is a token.
    return [tuple("".join(line.split())) for line in lines]


# sacrebleu's zh ranges, compared as sacrebleu compares them: single characters against the
# range ends as strings. Two of its ends are written with five hex digits ("\u20000",
# "\u2f800"), which Python reads as a four-digit escape followed by a digit, so those two
# ranges really are U+2001..U+2A6D (general punctuation, arrows, math symbols ...) and
# U+2F81..U+2FA1, not the CJK Extension B and the Compatibility Supplement. Reproduced on
# purpose, so that zh BLEU agrees with sacrebleu's.
_ZH_RANGES = (
    (0x3400, 0x4DB5), (0x4E00, 0x9FA5), (0x9FA6, 0x9FBB), (0xF900, 0xFA2D), (0xFA30, 0xFA6A),
    (0xFA70, 0xFAD9), (0x2001, 0x2A6D), (0x2F81, 0x2FA1), (0xFF00, 0xFFEF), (0x2E80, 0x2EFF),
    (0x3000, 0x303F), (0x31C0, 0x31EF), (0x2F00, 0x2FDF), (0x2FF0, 0x2FFF), (0x3100, 0x312F),
    (0x31A0, 0x31BF), (0xFE10, 0xFE1F), (0xFE30, 0xFE4F), (0x2600, 0x26FF), (0x2700, 0x27BF),
    (0x3200, 0x32FF), (0x3300, 0x33FF),
)
_ZH_CHARS = re.compile("([" + "".join(f"\\U{a:08x}-\\U{b:08x}" for a, b in _ZH_RANGES) + "])")


def _tokenize_zh(lines: list[str]) -> list[tuple[str, ...]]:
    # 13a's rules on each line as it is: zh does not pad the line with spaces, so a period at
    # the very start stays attached.
    return [tuple(_13a_rules(_ZH_CHARS.sub(r" \1 ", line.strip())).split()) for line in lines]


_TOKENIZER_FUNCTIONS = {"13a": _tokenize_13a, "intl": _tokenize_intl, "none": _tokenize_none,
                        "char": _tokenize_char, "zh": _tokenize_zh}


def check_tokenizer(tokenize) -> str:
    """Return ``tokenize`` if it names a known tokenizer; raise naming the choices otherwise."""
    return check_choice(tokenize, "tokenize", TOKENIZERS)


def tokenize_many(
    texts, tokenize: str = "13a", *, lowercase: bool = False
) -> list[tuple[str, ...]]:
    """Tokenise many texts exactly as sacrebleu does, with a cache shared across calls.

    Each text is lower-cased (if asked), right-stripped, tokenised and split on white
    space. Results are cached per line, so tokenising the same references again for
    another system is almost free.

    Parameters
    ----------
    texts : list of str
        The texts (sentences) to tokenise.
    tokenize : {"13a", "intl", "none", "char", "zh"}
        ``"13a"``: mteval-v13a (WMT's standard; unescapes ``&quot; &amp; &lt; &gt;``,
        splits off punctuation and symbols). ``"intl"``: mteval-v14 international
        (Unicode punctuation and symbols; needs the ``regex`` package). ``"none"``:
        split on white space only (for pre-tokenised text). ``"char"``: every
        non-space character is a token. ``"zh"``: every Chinese character (and CJK
        punctuation, full-width form ...) is a token, the rest is split as 13a splits
        it (without 13a's unescaping); sacrebleu's choice for Chinese.
    lowercase : bool
        Lower-case before tokenising.

    Returns
    -------
    list of tuple of str
        One tuple of tokens per text.

    Examples
    --------
    >>> tokenize_many(["Hello, world!", "It costs $3.50."])
    [('Hello', ',', 'world', '!'), ('It', 'costs', '$', '3.50', '.')]
    """
    texts = check_strings(texts, "texts", allow_empty_list=True)
    function = _TOKENIZER_FUNCTIONS[check_tokenizer(tokenize)]
    lowercase = check_bool(lowercase, "lowercase")
    cache = _token_cache.setdefault((tokenize, lowercase), {})
    missing = list(dict.fromkeys(t for t in texts if t not in cache))
    if missing:
        if len(cache) + len(missing) > _CACHE_LINES:
            cache.clear()
            missing = list(dict.fromkeys(texts))
        prepared = [t.lower().rstrip() if lowercase else t.rstrip() for t in missing]
        cache.update(zip(missing, function(prepared)))
    return [cache[t] for t in texts]


def tokenize(text: str, tokenize: str = "13a", *, lowercase: bool = False) -> list[str]:
    """Tokenise one text exactly as sacrebleu does (see :func:`tokenize_many`).

    Examples
    --------
    >>> tokenize("The cat isn't on the mat.")
    ['The', 'cat', "isn't", 'on', 'the', 'mat', '.']
    >>> tokenize("the cat &apos;s mat &amp; hat")  # 13a unescapes &amp; but not &apos;
    ['the', 'cat', '&', 'apos', ';', 's', 'mat', '&', 'hat']
    >>> tokenize("The Cat sat.", "none", lowercase=True)
    ['the', 'cat', 'sat.']
    >>> tokenize("猫坐在垫子上。It's 3.5m.", "zh")
    ['猫', '坐', '在', '垫', '子', '上', '。', "It's", '3.5m', '.']
    >>> tokenize("a cat.", "char")
    ['a', 'c', 'a', 't', '.']
    """
    check_string(text, "text")
    return list(tokenize_many([text], tokenize, lowercase=lowercase)[0])


def ngrams(tokens, n: int) -> list[tuple[str, ...]]:
    """All contiguous ``n``-grams of ``tokens`` in order (empty if there are fewer tokens).

    Examples
    --------
    >>> ngrams("the cat sat".split(), 2)
    [('the', 'cat'), ('cat', 'sat')]
    """
    n = check_int(n, "n", minimum=1, why="n must be a positive int")
    tokens = check_list(tokens, "tokens", "a sequence of tokens", "split the text first")
    return [tuple(tokens[i : i + n]) for i in range(len(tokens) - n + 1)]


def ngram_counts(tokens, max_order: int, *, min_order: int = 1) -> Counter:
    """Count every n-gram of ``tokens`` with ``min_order <= n <= max_order``.

    The readable reference implementation; the metrics use a vectorised equivalent.

    Examples
    --------
    >>> counts = ngram_counts("the cat the cat".split(), 2)
    >>> counts[("the", "cat")], counts[("cat",)], counts[("cat", "the")]
    (2, 2, 1)
    """
    min_order = check_int(min_order, "min_order", minimum=1, why="min_order must be a positive int")
    max_order = check_int(max_order, "max_order", minimum=min_order,
                          why=f"max_order must be an int >= min_order={min_order}")
    tokens = check_list(tokens, "tokens", "a sequence of tokens", "split the text first")
    counts: Counter = Counter()
    for n in range(min_order, max_order + 1):
        counts.update(ngrams(tokens, n))
    return counts
