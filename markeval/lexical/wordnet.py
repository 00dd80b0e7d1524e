"""WordNet 3.0, read from its database files: just enough of it for METEOR's synonym module.

METEOR's third matching stage pairs a hypothesis word with a reference word when
both are lemma names of one WordNet synset. :class:`WordNet` parses the database files
(``index.*`` to find a word's synsets, ``data.*`` to read their lemma names, ``*.exc`` for
irregular forms), given as bytes, and reproduces what ``nltk.corpus.wordnet.synsets(word)``
returns, morphology (``morphy``) included, without NLTK's start-up cost. Finding the files
on disk, and laying them out for NLTK, is done at the edge:
:mod:`markeval.datasets.wordnet` (:func:`~markeval.datasets.wordnet.load_wordnet`).
"""

from __future__ import annotations

import functools
import re

from markeval._checks import check_choice

#: The database files read here; ``data.*`` and ``index.*`` per part of speech.
POS_FILES = {"n": "noun", "v": "verb", "a": "adj", "r": "adv"}

# WordNet's detachment rules (morph.c), in NLTK's order; NLTK's ``morphy`` applies
# them once to a word that is not in the exception list.
_SUBSTITUTIONS = {
    "n": (("s", ""), ("ses", "s"), ("ves", "f"), ("xes", "x"), ("zes", "z"), ("ches", "ch"),
          ("shes", "sh"), ("men", "man"), ("ies", "y")),
    "v": (("s", ""), ("ies", "y"), ("es", "e"), ("es", ""), ("ed", "e"), ("ed", ""),
          ("ing", "e"), ("ing", "")),
    "a": (("er", ""), ("est", ""), ("er", "e"), ("est", "e")),
    "r": (),
}
# An adjective lemma may carry a syntactic marker, e.g. ``galore(ip)``; NLTK strips it.
_MARKER = re.compile(r"(.*?)(\([^()]*\))?$")
# "lemma rest-of-line"; the license lines at the top start with a space and are skipped
_INDEX_LINE = re.compile(r"^([^ \n]+) ([^\n]*)$", re.M)
_VERSION = re.compile(r"Word[nN]et (\d+\+?|\d+\.\d+) Copyright")


def required_files(pos_files=POS_FILES) -> list[str]:
    """The database files :class:`WordNet` reads: ``data.*``, ``index.*`` and ``*.exc``.

    Examples
    --------
    >>> required_files()[:3]
    ['data.noun', 'index.noun', 'noun.exc']
    """
    names = []
    for suffix in pos_files.values():
        names += [f"data.{suffix}", f"index.{suffix}", f"{suffix}.exc"]
    return names


class WordNet:
    """Read-only access to a WordNet database: synsets, lemma names, morphology.

    Parameters
    ----------
    files : dict of str to bytes
        File name (``"data.noun"``, ``"index.noun"``, ``"noun.exc"``, ...) to content.
    source : str
        Where the files came from (shown in ``repr`` and signatures).

    Notes
    -----
    Build one with :func:`markeval.datasets.wordnet.load_wordnet`. Index and exception files are parsed on
    construction (about 0.15 s); a synset's line is read from the data file at its
    byte offset when first needed. Lookups are cached per word.
    """

    def __init__(self, files: dict[str, bytes], source: str):
        self.source = source
        self._data = {pos: files[f"data.{suffix}"] for pos, suffix in POS_FILES.items()}
        # the license header names the version, e.g. "WordNet 3.0 Copyright 2006 ..."
        found = _VERSION.search(self._data["a"][:4096].decode("utf-8", "replace"))
        self.version = found.group(1) if found else "unknown"
        # lemma -> rest of its index line, per part of speech; offsets are parsed on demand
        self._index = {pos: dict(_INDEX_LINE.findall(files[f"index.{suffix}"].decode("utf-8")))
                       for pos, suffix in POS_FILES.items()}
        self._exceptions: dict[str, dict[str, list[str]]] = {}
        for pos, suffix in POS_FILES.items():
            table = {}
            for line in files[f"{suffix}.exc"].decode("utf-8").splitlines():
                terms = line.split()
                if terms:
                    table[terms[0]] = terms[1:]
            self._exceptions[pos] = table

    def __repr__(self) -> str:
        return f"WordNet(version={self.version!r}, source={self.source!r})"

    def morphy(self, form: str, pos: str) -> list[str]:
        """Base forms of ``form`` that WordNet lists under part of speech ``pos``.

        The rules of NLTK 3.10's ``WordNetCorpusReader._morphy``: a word in the
        exception list maps to its listed base forms, any other word to the results
        of applying each detachment rule once; the word itself is always tried first.

        Parameters
        ----------
        form : str
            A lower-case word.
        pos : {'n', 'v', 'a', 'r'}

        Returns
        -------
        list of str
            Distinct forms in WordNet's index, in the order tried.

        Examples
        --------
        >>> from markeval.datasets.wordnet import load_wordnet
        >>> wn = load_wordnet()
        >>> wn.morphy("geese", "n"), wn.morphy("running", "v"), wn.morphy("better", "a")
        (['goose'], ['run'], ['better', 'good', 'well'])
        """
        check_choice(pos, "pos", POS_FILES)
        exceptions = self._exceptions[pos]
        if form in exceptions:
            forms = exceptions[form]
        else:
            forms = [form[: len(form) - len(old)] + new
                     for old, new in _SUBSTITUTIONS[pos] if form.endswith(old)]
        index = self._index[pos]
        return list(dict.fromkeys(f for f in [form, *forms] if f in index))

    def synsets(self, word: str) -> list[tuple[str, int]]:
        """The synsets of ``word`` as ``(pos, offset)``, in NLTK's order.

        Equivalent to ``[(s.pos(), s.offset()) for s in wordnet.synsets(word)]``
        except that adjective satellites report ``'a'`` (the file they live in).

        Examples
        --------
        >>> from markeval.datasets.wordnet import load_wordnet
        >>> load_wordnet().synsets("dog")[:2]
        [('n', 2084071), ('n', 10114209)]
        """
        word = word.lower()
        out = []
        for pos in POS_FILES:
            for form in self.morphy(word, pos):
                fields = self._index[pos][form].split()
                # index line: pos synset_cnt p_cnt [ptr...] sense_cnt tagsense_cnt offsets...
                n_synsets = int(fields[1])
                out += [(pos, int(offset)) for offset in fields[-n_synsets:]]
        return out

    @functools.lru_cache(maxsize=None)  # one WordNet per place (load_wordnet)
    def lemma_names(self, pos: str, offset: int) -> tuple[str, ...]:
        """Lemma names of the synset at byte ``offset`` of ``data.<pos>``, as in the file.

        Case is kept (``'Party'``), multi-word lemmas keep their underscores and
        adjective markers such as ``(p)`` are removed, as NLTK does.

        Examples
        --------
        >>> from markeval.datasets.wordnet import load_wordnet
        >>> load_wordnet().lemma_names("n", 2084071)
        ('dog', 'domestic_dog', 'Canis_familiaris')
        """
        data = self._data[pos]
        end = data.find(b"\n", offset)
        # data line: offset lex_filenum ss_type w_cnt(hex) word lex_id word lex_id ... | gloss
        head = data[offset: end if end >= 0 else len(data)].decode("utf-8").split(" ", 4)
        if len(head) < 5 or not head[0].isdigit() or int(head[0]) != offset:
            raise ValueError(f"no synset at offset {offset} of data.{POS_FILES[pos]}")
        n_words = int(head[3], 16)
        fields = head[4].split(" ", 2 * n_words)
        return tuple(_MARKER.match(name).group(1) if name.endswith(")") else name
                     for name in fields[: 2 * n_words: 2])

    @functools.lru_cache(maxsize=2**18)  # one WordNet per place (load_wordnet)
    def synonyms(self, word: str) -> frozenset[str]:
        """Every lemma name of every synset of ``word`` (all parts of speech).

        This is the set ``{l.name() for s in wordnet.synsets(word) for l in s.lemmas()}``.

        Examples
        --------
        >>> from markeval.datasets.wordnet import load_wordnet
        >>> sorted(n for n in load_wordnet().synonyms("good") if n in {"well", "goodness", "full"})
        ['full', 'goodness', 'well']
        """
        return frozenset(name for pos, offset in self.synsets(word)
                         for name in self.lemma_names(pos, offset))
