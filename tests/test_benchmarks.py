"""Every script in ``benchmarks/`` runs at its smallest size, so that none can rot unseen.

The benchmarks time markeval against the reference implementations at sizes that take minutes
to hours, so nothing else runs them, and one crashed for weeks unnoticed (#60). Each script
takes ``--smoke``: its smallest workload through every code path (markeval and the anchor, the
comparisons, the printed ratios), writing into scratch copies instead of the committed results
(``benchmarks/_smoke.py``). A script here without the flag fails, so a new one cannot skip it.
"""

from __future__ import annotations

import hashlib
import subprocess
import sys

import pytest

from conftest import REPO, needs_tac, needs_wmt17

#: The scripts: every module of ``benchmarks/`` that runs as one (not the helpers they import).
SCRIPTS = sorted(p.name for p in (REPO / "benchmarks").glob("*.py")
                 if 'if __name__ == "__main__":' in p.read_text(encoding="utf-8"))
#: Scripts that read the shared human-judgement data skip where it is absent, as the tests on it
#: do (``word_sets`` of ``benchmarks/neighbour_data.py`` reads WMT17).
NEEDS = {"bleu.py": [needs_wmt17], "chrf_ter.py": [needs_wmt17],
         "embedding_metrics.py": [needs_wmt17], "mark_evaluate_scale.py": [needs_wmt17],
         "mauve_scale.py": [needs_wmt17], "memoize.py": [needs_wmt17],
         "meteor_rouge.py": [needs_wmt17, needs_tac], "neighbour_agreement.py": [needs_wmt17],
         "neighbour_index.py": [needs_wmt17], "parallel_units.py": [needs_tac],
         "significance.py": [needs_wmt17],
         "triangle_bound.py": [needs_wmt17], "word_curve_exact.py": [needs_wmt17]}
#: Scripts whose smoke run takes ten seconds or more on two cores (a model loaded, a worker
#: pool started, an index built; about four minutes together): `make test-full`. `make test`
#: smoke-runs the others, so the harness (arguments, scratch copies, nothing written into the
#: repository) is checked on every run.
SLOW = {"bertscore_baseline.py", "embedding_metrics.py", "encoders.py", "gpu.py",
        "mark_evaluate_scale.py", "mauve_scale.py", "memoize.py", "neighbour_agreement.py",
        "neighbour_index.py", "parallel_units.py", "perplexity.py", "triangle_bound.py",
        "word_curve_exact.py"}
#: What a run must leave as it was: the scripts and the results they write, the README's table,
#: the packaged BERTScore baseline.
WATCHED = ("benchmarks", "markeval/results", "markeval/semantic/bertscore_baseline.json",
           "README.md")
#: Seconds a smoke run may take: the slowest need about a minute of CPU (model loading, the
#: GGUF de-quantisation, worker pools). Past it, a script hangs or ignores --smoke.
TIMEOUT_S = 300


def _watched_files() -> dict[str, str]:
    """SHA-256 of each watched file, tracked or new (not ignored by git)."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard", "--", *WATCHED],
        cwd=REPO, check=True, capture_output=True).stdout.decode().split("\0")
    return {name: hashlib.sha256((REPO / name).read_bytes()).hexdigest()
            for name in filter(None, listed) if (REPO / name).is_file()}


def test_the_scripts_are_found():
    assert {"bleu.py", "fresh_machine.py", "perplexity.py"} <= set(SCRIPTS)
    assert "neighbour_data.py" not in SCRIPTS and "_smoke.py" not in SCRIPTS
    assert set(NEEDS) | SLOW <= set(SCRIPTS), "NEEDS or SLOW names a script that is gone"


@pytest.mark.parametrize("script", [
    pytest.param(name, marks=[*NEEDS.get(name, []), *([pytest.mark.slow] if name in SLOW else [])])
    for name in SCRIPTS])
def test_smoke_run(script):
    before = _watched_files()
    run = subprocess.run([sys.executable, str(REPO / "benchmarks" / script), "--smoke"],
                         cwd=REPO, capture_output=True, text=True, timeout=TIMEOUT_S)
    assert run.returncode == 0, (
        f"benchmarks/{script} --smoke exited {run.returncode}\n"
        f"--- stdout (end)\n{run.stdout[-3000:]}\n--- stderr (end)\n{run.stderr[-3000:]}")
    after = _watched_files()
    changed = sorted(name for name in before.keys() | after.keys()
                     if before.get(name) != after.get(name))
    assert not changed, f"benchmarks/{script} --smoke wrote into the repository: {changed}"
