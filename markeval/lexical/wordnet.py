"""Offline WordNet 3.0: just enough of it for METEOR's synonym module.

METEOR's third matching stage pairs a hypothesis word with a reference word when
both are lemma names of one WordNet synset. This module reads the WordNet
database files directly (``index.*`` to find a word's synsets, ``data.*`` to
read their lemma names, ``*.exc`` for irregular forms) and reproduces what
``nltk.corpus.wordnet.synsets(word)`` returns, morphology (``morphy``) included,
without NLTK's start-up cost.

Where the WordNet comes from (first hit wins):

1. the ``path`` argument of :func:`load_wordnet`;
2. ``$MARKEVAL_WORDNET``;
3. ``/usr/share/wordnet`` and ``/usr/local/share/wordnet``: Princeton WordNet 3.0
   as packaged by Debian/Ubuntu (``apt-get install wordnet-base``);
4. NLTK's data folders (``$NLTK_DATA``, ``~/nltk_data``, ...): ``corpora/wordnet/``
   or the ``corpora/wordnet.zip`` that ``nltk.download("wordnet")`` writes.

:func:`setup_nltk_wordnet` goes the other way: it copies the Debian files into a
folder NLTK 3.10 accepts, so that ``nltk.translate.meteor_score`` can run on
exactly the same WordNet (the parity tests do this).
"""

from __future__ import annotations

import functools
import os
import re
import shutil
import sys
import zipfile
from pathlib import Path

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

# The lexicographer file names of WordNet 3.0 (``lexnames``, see lexnames(5WN)). Debian's
# wordnet-base lacks this file and NLTK's reader refuses to start without it.
LEXNAMES = (
    "adj.all", "adj.pert", "adv.all", "noun.Tops", "noun.act", "noun.animal", "noun.artifact",
    "noun.attribute", "noun.body", "noun.cognition", "noun.communication", "noun.event",
    "noun.feeling", "noun.food", "noun.group", "noun.location", "noun.motive", "noun.object",
    "noun.person", "noun.phenomenon", "noun.plant", "noun.possession", "noun.process",
    "noun.quantity", "noun.relation", "noun.shape", "noun.state", "noun.substance", "noun.time",
    "verb.body", "verb.change", "verb.cognition", "verb.communication", "verb.competition",
    "verb.consumption", "verb.contact", "verb.creation", "verb.emotion", "verb.motion",
    "verb.perception", "verb.possession", "verb.social", "verb.stative", "verb.weather",
    "adj.ppl",
)
_LEXNAME_CATEGORY = {"noun": 1, "verb": 2, "adj": 3, "adv": 4}

_INSTALL_HINT = (
    "METEOR's synonym module needs WordNet 3.0. Install it with\n"
    "    apt-get install wordnet-base      (Debian/Ubuntu: files in /usr/share/wordnet)\n"
    "or, with internet access, through NLTK:\n"
    "    python -c \"import nltk; nltk.download('wordnet')\"\n"
    "or point $MARKEVAL_WORDNET at a folder holding data.noun, index.noun, noun.exc, ...\n"
    "Without WordNet, METEOR still runs with synonyms=False (exact and stem modules only)."
)


class WordNetNotFoundError(FileNotFoundError):
    """No readable WordNet database in any of the searched places."""


def _required(pos_files=POS_FILES) -> list[str]:
    names = []
    for suffix in pos_files.values():
        names += [f"data.{suffix}", f"index.{suffix}", f"{suffix}.exc"]
    return names


def _nltk_data_dirs() -> list[Path]:
    # NLTK's default search path (nltk.data.path), rebuilt without importing nltk (~2 s).
    dirs = [Path(p) for p in os.environ.get("NLTK_DATA", "").split(os.pathsep) if p]
    dirs.append(Path.home() / "nltk_data")
    dirs += [Path(sys.prefix) / sub for sub in ("nltk_data", "share/nltk_data", "lib/nltk_data")]
    dirs += [Path(p) for p in ("/usr/share/nltk_data", "/usr/local/share/nltk_data",
                               "/usr/lib/nltk_data", "/usr/local/lib/nltk_data")]
    dirs.append(nltk_data_dir())
    return dirs


def candidate_locations() -> list[tuple[Path, str]]:
    """Places searched for WordNet, in order, each with why it is searched.

    Returns
    -------
    list of (pathlib.Path, str)
        A folder with the database files, or a ``wordnet.zip`` as NLTK downloads it.

    Examples
    --------
    >>> any(str(path) == "/usr/share/wordnet" for path, _ in candidate_locations())
    True
    """
    places = []
    env = os.environ.get("MARKEVAL_WORDNET")
    if env:
        places.append((Path(env).expanduser(), "$MARKEVAL_WORDNET"))
    for folder in ("/usr/share/wordnet", "/usr/local/share/wordnet"):
        places.append((Path(folder), "Debian/Ubuntu wordnet-base"))
    for root in _nltk_data_dirs():
        places.append((root / "corpora" / "wordnet", "NLTK data"))
        places.append((root / "corpora" / "wordnet.zip", "NLTK data (zip)"))
    return places


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
    Build one with :func:`load_wordnet`. Index and exception files are parsed on
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
        >>> sorted(n for n in load_wordnet().synonyms("good") if n in {"well", "goodness", "full"})
        ['full', 'goodness', 'well']
        """
        return frozenset(name for pos, offset in self.synsets(word)
                         for name in self.lemma_names(pos, offset))


def _read_folder(folder: Path) -> dict[str, bytes] | None:
    names = _required()
    if not all((folder / name).is_file() for name in names):
        return None
    return {name: (folder / name).read_bytes() for name in names}


def _read_zip(path: Path) -> dict[str, bytes] | None:
    if not path.is_file():
        return None
    try:
        with zipfile.ZipFile(path) as archive:
            members = {Path(m).name: m for m in archive.namelist()}
            if not all(name in members for name in _required()):
                return None
            return {name: archive.read(members[name]) for name in _required()}
    except zipfile.BadZipFile:
        return None


def find_wordnet(path: str | os.PathLike | None = None) -> Path:
    """The folder (or NLTK zip) that :func:`load_wordnet` would read.

    Raises
    ------
    WordNetNotFoundError
        Listing the places searched and how to install WordNet.

    Examples
    --------
    >>> find_wordnet().name in {"wordnet", "wordnet.zip"}
    True
    """
    places = [(Path(path).expanduser(), "path argument")] if path is not None else (
        candidate_locations())
    for place, _ in places:
        if place.suffix == ".zip" and _read_zip(place) is not None:
            return place
        if place.is_dir() and all((place / name).is_file() for name in _required()):
            return place
    searched = "\n".join(f"  - {p} ({why})" for p, why in places)
    raise WordNetNotFoundError(f"WordNet not found. Searched:\n{searched}\n{_INSTALL_HINT}")


@functools.lru_cache(maxsize=4)
def _load(place: Path) -> WordNet:
    files = _read_zip(place) if place.suffix == ".zip" else _read_folder(place)
    if files is None:  # the files vanished between find_wordnet and here
        raise WordNetNotFoundError(f"WordNet files at {place} are unreadable.\n{_INSTALL_HINT}")
    return WordNet(files, str(place))


def load_wordnet(path: str | os.PathLike | None = None) -> WordNet:
    """Load WordNet from ``path`` or the first of :func:`candidate_locations`; cached.

    Parameters
    ----------
    path : path-like, optional
        A folder with ``data.noun``, ``index.noun``, ``noun.exc``, ... (and the same
        for verb, adj, adv), or NLTK's ``wordnet.zip``.

    Returns
    -------
    WordNet

    Raises
    ------
    WordNetNotFoundError
        When no WordNet is found; the message says how to install one.

    Examples
    --------
    >>> wn = load_wordnet()
    >>> "well" in wn.synonyms("good")
    True
    """
    return _load(find_wordnet(path).resolve())


def nltk_data_dir() -> Path:
    """markeval's NLTK data folder, ``<cache root>/nltk_data`` (``~/.cache/markeval/nltk_data``
    unless ``MARKEVAL_CACHE`` moves the cache).

    Examples
    --------
    >>> from markeval.cache import cache_root
    >>> nltk_data_dir() == cache_root() / "nltk_data"
    True
    """
    from markeval.cache import cache_root

    return cache_root() / "nltk_data"


def _copied_files() -> list[str]:
    """The files :func:`setup_nltk_wordnet` copies into ``corpora/wordnet`` (it writes
    ``lexnames`` too, and ``index.sense`` when the source has none)."""
    return [*_required(), "index.sense", "cntlist.rev"]


def cached_files(folder: Path) -> list[Path]:
    """The files :func:`setup_nltk_wordnet` wrote under the ``nltk_data`` root ``folder``
    (for ``markeval cache``)."""
    return [Path(folder) / "corpora" / "wordnet" / name for name in [*_copied_files(), "lexnames"]]


def setup_nltk_wordnet(source: str | os.PathLike | None = None,
                       target: str | os.PathLike | None = None) -> Path:
    """Make a WordNet folder readable by NLTK 3.10 and return its ``nltk_data`` root.

    NLTK will not read ``/usr/share/wordnet`` directly: it looks for
    ``corpora/wordnet`` under its data path and needs a ``lexnames`` file (and an
    ``index.sense``) that Debian's ``wordnet-base`` does not ship. This copies the
    database files into ``<target>/corpora/wordnet``, writes ``lexnames`` and, when
    the source has none, an empty ``index.sense`` (NLTK reads it only to map
    between WordNet versions and for sense keys, which METEOR does not use).
    Idempotent. Use it with ``nltk.data.path.insert(0, str(root))``.

    Parameters
    ----------
    source : path-like, optional
        A WordNet folder (default: found by :func:`find_wordnet`; a zip is not needed
        here since NLTK reads its own zip).
    target : path-like, optional
        The ``nltk_data`` root; default :func:`nltk_data_dir`.

    Returns
    -------
    pathlib.Path
        The ``nltk_data`` root to put on ``nltk.data.path``.

    Examples
    --------
    >>> import tempfile
    >>> root = setup_nltk_wordnet(target=tempfile.mkdtemp())
    >>> (root / "corpora" / "wordnet" / "lexnames").read_text().splitlines()[3].split()
    ['03', 'noun.Tops', '1']
    """
    src = find_wordnet(source)
    if src.suffix == ".zip":
        raise ValueError(f"{src} is NLTK's own zip: NLTK reads it without any setup")
    root = Path(target) if target is not None else nltk_data_dir()
    folder = root / "corpora" / "wordnet"
    folder.mkdir(parents=True, exist_ok=True)
    for name in _copied_files():
        source_file, target_file = src / name, folder / name
        if source_file.is_file() and not (
            target_file.is_file() and target_file.stat().st_size == source_file.stat().st_size
        ):
            # copy, not symlink: NLTK resolves paths and rejects links leaving its data folder
            shutil.copyfile(source_file, target_file)
    if not (folder / "index.sense").is_file():
        (folder / "index.sense").write_text("", encoding="utf-8")
    lexnames = "".join(f"{i:02d}\t{name}\t{_LEXNAME_CATEGORY[name.split('.')[0]]}\n"
                       for i, name in enumerate(LEXNAMES))
    if not (folder / "lexnames").is_file() or (folder / "lexnames").read_text() != lexnames:
        (folder / "lexnames").write_text(lexnames, encoding="utf-8")
    return root
