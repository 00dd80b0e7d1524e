"""Find WordNet 3.0 on disk (or in NLTK's zip), load it, and lay it out for NLTK.

Where the WordNet comes from (first hit wins):

1. the ``path`` argument of :func:`load_wordnet`;
2. ``$MARKEVAL_WORDNET``;
3. ``/usr/share/wordnet`` and ``/usr/local/share/wordnet``: Princeton WordNet 3.0
   as packaged by Debian/Ubuntu (``apt-get install wordnet-base``);
4. NLTK's data folders (``$NLTK_DATA``, ``~/nltk_data``, ...): ``corpora/wordnet/``
   or the ``corpora/wordnet.zip`` that ``nltk.download("wordnet")`` writes.

:func:`setup_nltk_wordnet` goes the other way: it copies the Debian files into a
folder NLTK 3.10 accepts (``<cache root>/nltk_data``), so that
``nltk.translate.meteor_score`` can run on exactly the same WordNet (the parity tests do
this). The database itself is parsed by :class:`markeval.lexical.wordnet.WordNet`.
"""

from __future__ import annotations

import functools
import os
import shutil
import sys
import zipfile
from pathlib import Path

from markeval import _written as written
from markeval.cache import atomic_write, cache_root
from markeval.lexical.wordnet import WordNet, required_files

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


def _read_folder(folder: Path) -> dict[str, bytes] | None:
    names = required_files()
    if not all((folder / name).is_file() for name in names):
        return None
    return {name: (folder / name).read_bytes() for name in names}


def _read_zip(path: Path) -> dict[str, bytes] | None:
    if not path.is_file():
        return None
    try:
        with zipfile.ZipFile(path) as archive:
            members = {Path(m).name: m for m in archive.namelist()}
            if not all(name in members for name in required_files()):
                return None
            return {name: archive.read(members[name]) for name in required_files()}
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
        if place.is_dir() and all((place / name).is_file() for name in required_files()):
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
    >>> nltk_data_dir() == cache_root() / "nltk_data"
    True
    """
    return cache_root() / "nltk_data"


def _copied_files() -> list[str]:
    """The files :func:`setup_nltk_wordnet` copies into ``corpora/wordnet`` (it writes
    ``lexnames`` too, and ``index.sense`` when the source has none)."""
    return [*required_files(), "index.sense", "cntlist.rev"]


def cached_files(folder: Path) -> list[Path]:
    """The files :func:`setup_nltk_wordnet` wrote under the ``nltk_data`` root ``folder``,
    unchanged since (for ``markeval cache``; :mod:`markeval._written`)."""
    wordnet = Path(folder) / "corpora" / "wordnet"
    records = written.recorded(wordnet)
    return [wordnet / name for name in [*_copied_files(), "lexnames"]
            if written.is_ours(wordnet / name, records)]


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
    # atomic_write replaces only a file markeval wrote and nobody changed since; a changed
    # one (an edited data.noun) is refused by name (markeval.cache.NotOursError).
    for name in _copied_files():
        source_file, target_file = src / name, folder / name
        if source_file.is_file() and not (
            target_file.is_file() and target_file.stat().st_size == source_file.stat().st_size
        ):
            # copy, not symlink: NLTK resolves paths and rejects links leaving its data folder
            with open(source_file, "rb") as copied:
                atomic_write(target_file, lambda fh: shutil.copyfileobj(copied, fh))
    if not (folder / "index.sense").is_file():
        atomic_write(folder / "index.sense", lambda fh: None)
    lexnames = "".join(f"{i:02d}\t{name}\t{_LEXNAME_CATEGORY[name.split('.')[0]]}\n"
                       for i, name in enumerate(LEXNAMES))
    if not (folder / "lexnames").is_file() or (folder / "lexnames").read_text() != lexnames:
        atomic_write(folder / "lexnames", lambda fh: fh.write(lexnames.encode("utf-8")))
    return root
