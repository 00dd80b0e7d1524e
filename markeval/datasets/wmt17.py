"""WMT17 news translation into English: sources, references, system outputs, DA scores.

The files are the MoverScore authors' copy (lowercased, Moses-tokenized, HTML
entities such as ``&apos;`` kept). Tables (DA judgements) come back as pandas
DataFrames, a fresh copy per call; texts come back as tuples inside frozen objects.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType

import pandas as pd

from markeval._checks import check_choice
from markeval.datasets._locate import locate
from markeval.datasets._sources import (
    WMT17_SYSTEMS,
    wmt17_reference_file,
    wmt17_source_file,
)

_SYSTEM_FILE = re.compile(r"^newstest2017\.(?P<system>.+)\.(?P<pair>[a-z]{2}-[a-z]{2})$")


@dataclass(frozen=True)
class Wmt17:
    """One WMT17 language pair: aligned sources, references and system outputs.

    Attributes
    ----------
    pair : str
        Language pair, e.g. ``'de-en'``.
    sources : tuple of str
        Source sentences (raw, not lowercased).
    references : tuple of str
        One English reference per source sentence.
    systems : Mapping[str, tuple of str]
        Read-only map from system name (file name without ``newstest2017.`` and the
        pair, e.g. ``'uedin-nmt.4723'``) to its outputs, line-aligned with
        ``references``; sorted by name.
    """

    pair: str
    sources: tuple[str, ...]
    references: tuple[str, ...]
    systems: Mapping[str, tuple[str, ...]]


@dataclass(frozen=True)
class SystemMatch:
    """Result of matching DA system names to system-output names.

    Attributes
    ----------
    mapping : Mapping[str, str]
        DA name → output name, for every matched DA name.
    rule : Mapping[str, str]
        DA name → the rule that matched it: ``'exact'``, ``'submission id'`` or
        ``'name'`` (case and punctuation ignored, submission id dropped).
    unmatched_da : tuple of str
        DA names with no system output.
    unmatched_outputs : tuple of str
        Output names that no DA name maps to.
    """

    mapping: Mapping[str, str]
    rule: Mapping[str, str]
    unmatched_da: tuple[str, ...]
    unmatched_outputs: tuple[str, ...]


def wmt17_pairs() -> tuple[str, ...]:
    """The seven into-English WMT17 language pairs that have system outputs.

    Returns
    -------
    tuple of str

    Examples
    --------
    >>> wmt17_pairs()
    ('cs-en', 'de-en', 'fi-en', 'lv-en', 'ru-en', 'tr-en', 'zh-en')
    """
    return tuple(WMT17_SYSTEMS)


def _check_pair(pair: str) -> str:
    if pair not in WMT17_SYSTEMS:
        raise ValueError(
            f"pair must be one of {', '.join(WMT17_SYSTEMS)} (into-English pairs with system "
            f"outputs), got {pair!r}"
        )
    return pair


def _read_lines(path: Path) -> tuple[str, ...]:
    # split("\n"), not splitlines(): splitlines also breaks at U+2028, U+0085, form
    # feeds... inside a segment, which would silently misalign the parallel files.
    text = path.read_text(encoding="utf-8")
    if text.endswith("\n"):
        text = text[:-1]
    return tuple(line.rstrip("\r") for line in text.split("\n")) if text else ()


def _detokenize(lines: tuple[str, ...]) -> tuple[str, ...]:
    try:
        from sacremoses import MosesDetokenizer
    except ImportError as err:  # pragma: no cover - sacremoses is a test/book dependency
        raise ImportError("detokenize=True needs sacremoses: pip install sacremoses") from err
    detok = MosesDetokenizer(lang="en")
    return tuple(detok.detokenize(line.split()) for line in lines)


@functools.lru_cache(maxsize=None)
def _load(folder: Path, pair: str, detokenize: bool) -> Wmt17:
    references = _read_lines(folder / wmt17_reference_file(pair))
    sources = _read_lines(folder / wmt17_source_file(pair))
    if len(sources) != len(references):
        raise ValueError(
            f"WMT17 {pair}: {wmt17_source_file(pair)} has {len(sources)} lines but "
            f"{wmt17_reference_file(pair)} has {len(references)}"
        )
    systems = {}
    for path in sorted((folder / "system-outputs" / pair).iterdir()):
        match = _SYSTEM_FILE.match(path.name)
        if match is None or match["pair"] != pair:
            continue
        outputs = _read_lines(path)
        if len(outputs) != len(references):
            raise ValueError(
                f"WMT17 {pair}: system file {path.name} has {len(outputs)} lines but the "
                f"reference has {len(references)}; the files are not line-aligned"
            )
        systems[match["system"]] = _detokenize(outputs) if detokenize else outputs
    if detokenize:
        references = _detokenize(references)
    return Wmt17(pair, sources, references, MappingProxyType(systems))


def load_wmt17(pair: str, *, detokenize: bool = False) -> Wmt17:
    """Load one WMT17 into-English language pair.

    Parameters
    ----------
    pair : str
        One of :func:`wmt17_pairs`, e.g. ``'de-en'``.
    detokenize : bool, default False
        Moses-detokenize references and outputs (sacremoses, English; this also
        unescapes ``&apos;`` etc.), as the MoverScore authors did before embedding.
        Sources are never changed.

    Returns
    -------
    Wmt17
        Cached: repeated calls return the same immutable object.

    Raises
    ------
    ValueError
        Unknown pair, or a source/system file whose line count differs from the reference.
    DataNotFoundError
        The data is nowhere to be found (see :func:`markeval.datasets.locate`).

    Examples
    --------
    >>> data = load_wmt17("de-en")
    >>> len(data.references), len(data.systems)
    (3004, 11)
    >>> sorted(data.systems)[:3]
    ['C-3MA.4958', 'KIT.4951', 'LIUM-NMT.4733']
    >>> load_wmt17("de-en") is data  # cached
    True
    """
    pair = _check_pair(pair)  # before locating: a typo must not start a download
    return _load(locate("wmt17"), pair, bool(detokenize))


def expand_systems(system: str) -> tuple[str, ...]:
    """Split a DA ``SYSTEM`` field into its systems.

    WMT17 judged identical outputs once and named all their systems joined by ``+``.

    Parameters
    ----------
    system : str

    Returns
    -------
    tuple of str

    Examples
    --------
    >>> expand_systems("uedin-nmt.5111+online-B.0")
    ('uedin-nmt.5111', 'online-B.0')
    >>> expand_systems("KIT.4951")
    ('KIT.4951',)
    """
    if not isinstance(system, str) or not system:
        raise ValueError(f"system must be a non-empty str, got {system!r}")
    return tuple(system.split("+"))


@functools.lru_cache(maxsize=None)
def _read_table(path: Path) -> pd.DataFrame:
    return pd.read_csv(path, sep=" ", dtype={"LP": str, "SYSTEM": str})


def _select(table: pd.DataFrame, pair: str | None) -> pd.DataFrame:
    if pair is None:
        return table.reset_index(drop=True)
    check_choice(pair, "pair", sorted(table["pair"].unique()))
    return table[table["pair"] == pair].reset_index(drop=True)


def wmt17_da_segments(pair: str | None = None, *, with_text: bool = False,
                      detokenize: bool = False) -> pd.DataFrame:
    """Segment-level direct-assessment (DA) scores of WMT17, from ``DA-seglevel.csv``.

    Parameters
    ----------
    pair : str, optional
        Keep one language pair. The file also covers ``en-ru`` and ``en-zh``
        (no system outputs here); default all nine pairs.
    with_text : bool, default False
        Add columns ``hypothesis`` and ``reference`` (only for :func:`wmt17_pairs`).
        For a joined ``SYSTEM`` field the first system's output is used; the
        joined systems produced identical outputs.
    detokenize : bool, default False
        With ``with_text``, Moses-detokenize the texts (see :func:`load_wmt17`).

    Returns
    -------
    pandas.DataFrame
        Columns ``pair``, ``system`` (raw, possibly ``'a+b'``: see
        :func:`expand_systems`), ``sid`` (1-based line number), ``score``
        (standardized DA), in file order; a fresh copy per call.

    Examples
    --------
    >>> seg = wmt17_da_segments("de-en")
    >>> len(seg), list(seg.columns)
    (560, ['pair', 'system', 'sid', 'score'])
    """
    raw = _read_table(locate("wmt17") / "DA-seglevel.csv")
    table = pd.DataFrame({
        "pair": raw["LP"], "system": raw["SYSTEM"],
        "sid": raw["SID"].astype(int), "score": raw["HUMAN"].astype(float),
    })
    table = _select(table, pair)
    if not with_text:
        return table
    missing = sorted(set(table["pair"]) - set(WMT17_SYSTEMS))
    if missing:
        raise ValueError(f"with_text=True needs system outputs, which {missing} lack; "
                         f"pass pair= one of {', '.join(WMT17_SYSTEMS)}")
    hypotheses, references = [""] * len(table), [""] * len(table)
    for pair_name, rows in table.groupby("pair", sort=False):
        data = load_wmt17(pair_name)
        match = wmt17_system_match(pair_name).mapping
        for i, system, sid in zip(rows.index, rows["system"], rows["sid"]):
            hypotheses[i] = data.systems[match[expand_systems(system)[0]]][sid - 1]
            references[i] = data.references[sid - 1]
    if detokenize:
        # Only the judged lines: much faster than detokenizing every system file.
        hypotheses, references = _detokenize(tuple(hypotheses)), _detokenize(tuple(references))
    return table.assign(hypothesis=hypotheses, reference=references)


def wmt17_da_systems(pair: str | None = None) -> pd.DataFrame:
    """Official WMT17 system-level DA scores, from ``DA-syslevel.csv``.

    Parameters
    ----------
    pair : str, optional
        Keep one language pair; default all 14 (into and out of English).

    Returns
    -------
    pandas.DataFrame
        Columns ``pair``, ``system``, ``score``, in file order (best first within
        a pair); a fresh copy per call.

    Examples
    --------
    >>> sys_da = wmt17_da_systems("cs-en")
    >>> sys_da["system"].tolist()
    ['uedin-nmt.4955', 'online-B.0', 'online-A.0', 'PJATK.4760']
    """
    raw = _read_table(locate("wmt17") / "DA-syslevel.csv")
    table = pd.DataFrame({"pair": raw["LP"], "system": raw["SYSTEM"],
                          "score": raw["HUMAN"].astype(float)})
    return _select(table, pair)


def _submission_id(name: str) -> str | None:
    # WMT17 names end in ".<submission id>"; online systems all share the id 0.
    head, _, tail = name.rpartition(".")
    return tail if head and tail.isdigit() and int(tail) != 0 else None


def _loose(name: str) -> str:
    head, _, tail = name.rpartition(".")
    base = head if head and tail.isdigit() else name
    return re.sub(r"[^a-z0-9]", "", base.lower())


def match_system_names(da_names: Iterable[str], output_names: Iterable[str]) -> SystemMatch:
    """Match DA system names to system-output names, most specific rule first.

    Rules, in order: identical name; same non-zero submission id (the number
    after the last dot, unique per WMT17 submission: catches renamed systems);
    same name ignoring case, punctuation and the submission id, when that is
    unambiguous. Anything else is reported unmatched, never guessed.

    Parameters
    ----------
    da_names, output_names : iterable of str
        Individual system names (expand joined DA names first).

    Returns
    -------
    SystemMatch

    Examples
    --------
    >>> m = match_system_names(["CASICT-DCU-NMT.5144", "online-A.0", "KIT.1"],
    ...                        ["CASICT-cons.5144", "online-A.0", "Online-B.0"])
    >>> dict(m.mapping)
    {'CASICT-DCU-NMT.5144': 'CASICT-cons.5144', 'online-A.0': 'online-A.0'}
    >>> m.rule["CASICT-DCU-NMT.5144"], m.unmatched_da, m.unmatched_outputs
    ('submission id', ('KIT.1',), ('Online-B.0',))
    """
    da_names = list(dict.fromkeys(da_names))
    outputs = list(dict.fromkeys(output_names))
    for name in (*da_names, *outputs):
        if not isinstance(name, str) or not name:
            raise ValueError(f"system names must be non-empty str, got {name!r}")
    by_id: dict[str, list[str]] = {}
    by_loose: dict[str, list[str]] = {}
    for name in outputs:
        if (sid := _submission_id(name)) is not None:
            by_id.setdefault(sid, []).append(name)
        by_loose.setdefault(_loose(name), []).append(name)
    mapping, rule = {}, {}
    for name in da_names:
        candidates = [
            ("exact", [name] if name in outputs else []),
            ("submission id", by_id.get(_submission_id(name) or "", [])),
            ("name", by_loose.get(_loose(name), [])),
        ]
        for how, found in candidates:
            if len(found) == 1:
                mapping[name], rule[name] = found[0], how
                break
    used = set(mapping.values())
    return SystemMatch(
        mapping=MappingProxyType(mapping),
        rule=MappingProxyType(rule),
        unmatched_da=tuple(n for n in da_names if n not in mapping),
        unmatched_outputs=tuple(n for n in outputs if n not in used),
    )


def wmt17_system_match(pair: str) -> SystemMatch:
    """Match the DA system names of ``pair`` (seg- and system-level) to its output files.

    Parameters
    ----------
    pair : str
        One of :func:`wmt17_pairs`.

    Returns
    -------
    SystemMatch
        On the MoverScore copy every name matches exactly (see the tests).

    Examples
    --------
    >>> m = wmt17_system_match("zh-en")
    >>> len(m.mapping), m.unmatched_da, m.unmatched_outputs
    (16, (), ())
    """
    _check_pair(pair)
    seg = wmt17_da_segments(pair)["system"]
    names = [n for joined in seg for n in expand_systems(joined)]
    names += wmt17_da_systems(pair)["system"].tolist()
    return match_system_names(sorted(set(names)), WMT17_SYSTEMS[pair])
