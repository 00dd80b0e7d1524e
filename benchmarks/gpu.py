"""CPU against CUDA: seconds, and agreement of the scores, for the encoders and the metrics.

On a machine where torch sees a GPU, each task runs on the CPU and on ``--device`` at every
size, best of ``--repeats`` after an untimed warm-up (model loading, CUDA context and kernel
start-up are not timed):

* ``sentence_embeddings`` — ``n`` BBC News sentences with the packaged all-MiniLM-L6-v2;
* ``bertscore`` — ``n`` pairs of BBC sentences (layer and options at their defaults);
* ``moverscore`` — the same pairs, preset v2;
* ``mark_evaluate`` — all four exact Mark-Evaluate scores of two sets of ``m`` unit vectors
  (384-d, like sentence embeddings): NumPy's BLAS on the CPU (the default backend) against
  ``backend="torch"`` on the GPU.

Each row prints seconds on both, their ratio ``cpu_s / cuda_s`` (the GPU's speed-up), and the
largest absolute difference between the two results against the task's tolerance (argued at
:data:`TOLERANCES`). A difference beyond its tolerance fails the run (exit status 1, nothing
written); otherwise the rows go to ``--csv`` with the GPU's name, torch's version and the
commit.

``--smoke`` is the smallest run (8 sentences or pairs, 300 points per set, one repeat), and
writes into a scratch copy of the CSV, never the committed file (``benchmarks/_smoke.py``).
Without CUDA nothing can be compared: the script prints "no CUDA device: nothing measured" and
exits with status 2, except with ``--smoke``, where it runs the CPU half alone, so that the
script can be checked on any machine, and exits 0.

    python benchmarks/gpu.py [--sizes 32 1024] [--me-sizes 1000 20000] [--k 3] [--repeats 2]
                             [--device cuda] [--threads N] [--csv benchmarks/results/gpu.csv]
                             [--smoke]
"""

from __future__ import annotations

import argparse
import csv
import dataclasses
import functools
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _smoke import scratch_copy  # noqa: E402
from geometry import data as unit_clouds  # noqa: E402  (benchmarks/geometry.py)

REPO = Path(__file__).resolve().parents[1]
CSV = REPO / "benchmarks" / "results" / "gpu.csv"
COLUMNS = ("task", "size", "cpu_s", "cuda_s", "ratio", "max_abs_diff", "tolerance", "device",
           "cpu_threads", "torch", "commit")

#: Largest |CPU − CUDA| accepted per task.
TOLERANCES = {
    # Per coordinate: float32 forward passes of the same weights with other kernels and
    # summation orders (tests/test_encoders.py and tests/test_cuda.py use the same bound).
    "sentence_embeddings": 1e-5,
    # Per sentence (precision, recall and F1): cosines of those vectors, which two CPU
    # implementations reproduce within 1e-5 (tests/test_bertscore.py); ten times that for a
    # device that reorders every sum, still below the third decimal the book reports.
    "bertscore": 1e-4,
    # Per sentence: transport costs over distances of the same vectors; the same argument
    # (tests/test_moverscore.py: 1e-5 against the moverscore package, 9e-7 to 1.3e-6 seen).
    "moverscore": 1e-4,
    # Every count and score: the GPU only screens pairs, and each decision it cannot prove
    # is remade on the CPU in float64, so both backends decide identically (markeval.geometry,
    # "Exactness").
    "mark_evaluate": 0.0,
}
TEXT_TASKS = ("sentence_embeddings", "bertscore", "moverscore")


@functools.lru_cache(maxsize=1)
def shuffled_bbc() -> tuple[str, ...]:
    """The distinct BBC News sentences in a fixed random order (topics mixed); read once."""
    from markeval.datasets import bbc_sentences

    sentences = list(bbc_sentences(unique=True)["sentence"])
    return tuple(sentences[i] for i in np.random.default_rng(0).permutation(len(sentences)))


def bbc_texts(n: int) -> list[str]:
    """The first ``n`` of :func:`shuffled_bbc`."""
    sentences = shuffled_bbc()
    if len(sentences) < n:
        raise SystemExit(f"only {len(sentences)} BBC sentences available, asked for {n}")
    return list(sentences[:n])


def commit() -> str:
    """The checked-out commit, marked ``-dirty`` when tracked files have changed."""
    try:
        head = subprocess.run(["git", "rev-parse", "--short=10", "HEAD"], cwd=REPO, check=True,
                              capture_output=True, text=True).stdout.strip()
        changed = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"],
                                 cwd=REPO, check=True, capture_output=True, text=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return "unknown"  # a copy of the tree without its .git
    return head + ("-dirty" if changed.strip() else "")


def numbers(result) -> np.ndarray:
    """Every int and float field of a Mark-Evaluate result, in a fixed order."""
    out = []
    for part in (result.petersen, result.schnabel_quality, result.schnabel_diversity,
                 result.capture):
        out += [v for v in dataclasses.astuple(part)
                if isinstance(v, (int, float)) and not isinstance(v, bool)]
    return np.array(out, dtype=np.float64)


def max_abs_diff(a: np.ndarray, b: np.ndarray) -> float:
    """Largest |a − b|, with equal entries (infinite estimates included) counting 0."""
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    if a.shape != b.shape:
        return float("inf")
    with np.errstate(invalid="ignore"):
        gap = np.where(a == b, 0.0, np.abs(a - b))
    return float(np.nan_to_num(gap, nan=np.inf).max(initial=0.0))


def make_task(task: str, size: int, k: int):
    """``run(device) -> array`` for one task and size: the values compared across devices."""
    from markeval import bertscore, moverscore
    from markeval.encoders import default_model, sentence_embeddings
    from markeval.population.mark_evaluate import mark_evaluate

    if task == "mark_evaluate":
        a, b = unit_clouds(size, 384)

        def run(device):
            if device == "cpu":
                return numbers(mark_evaluate(a, b, k, progress=False))
            return numbers(mark_evaluate(a, b, k, backend="torch", device=device,
                                         progress=False))
        return run
    texts = bbc_texts(2 * size)
    hyps, refs = texts[:size], texts[size:]

    def run(device):
        model = default_model(device)
        if task == "sentence_embeddings":
            return sentence_embeddings(hyps, model, progress=False)
        if task == "bertscore":
            s = bertscore(hyps, refs, model=model, progress=False)
            return np.array([s.sentence_precision, s.sentence_recall, s.sentence_f1])
        return np.array(moverscore(hyps, refs, model=model, progress=False).sentence_scores)
    return run


def best_seconds(run, device: str, repeats: int, synchronize) -> tuple[float, np.ndarray]:
    best, out = float("inf"), None
    for _ in range(repeats):
        start = time.perf_counter()
        out = run(device)
        synchronize()  # results come back as NumPy arrays already; this makes it explicit
        best = min(best, time.perf_counter() - start)
    return best, out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[32, 1024],
                        help="sentences (pairs for the metrics) per text task")
    parser.add_argument("--me-sizes", type=int, nargs="+", default=[1000, 20_000],
                        help="points per set for Mark-Evaluate")
    parser.add_argument("--k", type=int, default=3, help="Mark-Evaluate's k")
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--device", default="cuda", help="the GPU to compare with the CPU")
    parser.add_argument("--threads", type=int, default=0,
                        help="torch intra-op threads on the CPU (0: torch's choice)")
    parser.add_argument("--csv", type=Path, default=CSV,
                        help=f"where the rows go (default {CSV.relative_to(REPO)})")
    parser.add_argument("--smoke", action="store_true",
                        help="smallest run: 8 sentences or pairs, 300 points per set, 1 repeat, "
                             "written to a scratch copy of --csv; without CUDA, the CPU half")
    args = parser.parse_args()
    if args.smoke:
        args.sizes, args.me_sizes, args.repeats = [8], [300], 1
        args.csv = scratch_copy(args.csv)

    import torch

    if args.threads:
        torch.set_num_threads(args.threads)
    has_cuda = torch.cuda.is_available()
    if not has_cuda and not args.smoke:
        print("no CUDA device: nothing measured", file=sys.stderr)
        sys.exit(2)
    sizes, me_sizes, repeats = sorted(args.sizes), sorted(args.me_sizes), args.repeats
    devices = ["cpu", args.device] if has_cuda else ["cpu"]
    gpu_name = torch.cuda.get_device_name(args.device) if has_cuda else ""
    sync = (lambda: torch.cuda.synchronize(args.device)) if has_cuda else (lambda: None)
    print(f"devices: cpu ({torch.get_num_threads()} torch threads)"
          + (f", {args.device} ({gpu_name})" if has_cuda else " only: no CUDA device (--smoke)")
          + f"; torch {torch.__version__}; best of {repeats}")

    rows, failures, revision = [], [], commit()
    plan = [(task, n) for task in TEXT_TASKS for n in sizes]
    plan += [("mark_evaluate", m) for m in me_sizes]
    warmed = set()
    for task, size in plan:
        run = make_task(task, size, args.k)
        if task not in warmed:
            # Untimed: loads the model on each device, starts CUDA and its kernels.
            warm = make_task(task, 8 if task in TEXT_TASKS else 200, args.k)
            for device in devices:
                warm(device)
            warmed.add(task)
        cpu_s, cpu_out = best_seconds(run, "cpu", repeats, lambda: None)
        row = {"task": task, "size": size, "cpu_s": f"{cpu_s:.3f}", "cuda_s": "", "ratio": "",
               "max_abs_diff": "", "tolerance": TOLERANCES[task], "device": gpu_name,
               "cpu_threads": torch.get_num_threads(), "torch": torch.__version__,
               "commit": revision}
        line = f"{task:20s} n={size:<7d} cpu {cpu_s:8.3f} s"
        if has_cuda:
            cuda_s, cuda_out = best_seconds(run, args.device, repeats, sync)
            diff = max_abs_diff(cpu_out, cuda_out)
            row.update(cuda_s=f"{cuda_s:.3f}", ratio=f"{cpu_s / cuda_s:.2f}",
                       max_abs_diff=f"{diff:.3g}")
            line += (f"   {args.device} {cuda_s:8.3f} s   ratio {cpu_s / cuda_s:7.2f}x   "
                     f"max |diff| {diff:.2e} (tolerance {TOLERANCES[task]:g})")
            if not diff <= TOLERANCES[task]:
                failures.append(f"{task} n={size}: max |CPU - CUDA| {diff:.3g} > "
                                f"{TOLERANCES[task]:g}")
        print(line, flush=True)
        rows.append(row)

    if failures:
        print("FAILED: CUDA disagrees with the CPU beyond tolerance (nothing written):\n  "
              + "\n  ".join(failures), file=sys.stderr)
        sys.exit(1)
    args.csv.parent.mkdir(parents=True, exist_ok=True)
    with open(args.csv, "w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=COLUMNS)
        writer.writeheader()
        writer.writerows(rows)
    print(f"wrote {len(rows)} rows to {args.csv}")
    if not has_cuda:
        print("no CUDA device: ran the CPU half only (--smoke); nothing compared")


if __name__ == "__main__":
    main()
