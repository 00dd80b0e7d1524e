"""Write ``checksums.json``: the pinned size and SHA-256 of every data file the loaders read.

Run it only when a source changes on purpose, from a trusted data root::

    python -m markeval.datasets.checksums ../shared/data
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from markeval.datasets._integrity import CHECKSUMS_FILE, corpus_digest, sha256_file
from markeval.datasets._sources import SOURCES
from markeval.datasets.bbc import bbc_dir, bbc_files


def compute_checksums(data_root: Path, bbc_folder: Path) -> dict:
    """The content of ``checksums.json``, computed from trusted copies."""
    table = {}
    for name, source in SOURCES.items():
        table[name] = {f: {"size": (data_root / name / f).stat().st_size,
                           "sha256": sha256_file(data_root / name / f)} for f in source.files}
    table["bbc"] = corpus_digest(bbc_files(bbc_folder), bbc_folder)
    return table


def main(argv: list[str] | None = None) -> None:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1:
        sys.exit("usage: python -m markeval.datasets.checksums DATA_ROOT (holding wmt17/, tac/)")
    table = compute_checksums(Path(args[0]), bbc_dir())
    CHECKSUMS_FILE.write_text(json.dumps(table, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    print(f"wrote {CHECKSUMS_FILE}")


if __name__ == "__main__":
    main()
