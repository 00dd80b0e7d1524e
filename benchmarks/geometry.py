"""k-NN radii + ball membership: markeval.geometry against a plain torch.cdist full matrix.

Both compute, for a reference set S and a candidate set S' (n points each, d dimensions): the
k-th nearest-neighbour radius of every s ∈ S (self excluded), then for every s' whether it lies
in some ball of S and how many s' each ball of S holds. The anchor is what one writes first:
``torch.cdist(S, S)`` and ``torch.cdist(S', S)`` as full n × n float32 matrices, ``kthvalue``
for the radii and a ``<=`` for membership (approximate: float32 and cdist's matmul path). Prints
for each: seconds, peak memory (traced NumPy allocations + torch's CPU allocator high-water mark
are not both visible, so peak RSS growth is reported), achieved GFLOP/s counting the 2·n·n·d
flops of each distance matrix, the time ratio, and how many membership decisions differ.

    python benchmarks/geometry.py [--n 10000] [--dim 384] [--k 3] [--dtype float64]
                                  [--backend numpy] [--device cpu] [--repeats 1] [--smoke]
"""

from __future__ import annotations

import argparse
import resource
import time

import numpy as np


def rss_mib() -> float:
    with open("/proc/self/statm") as fh:
        return int(fh.read().split()[1]) * resource.getpagesize() / 2**20


class PeakRSS:
    """Peak resident memory growth over a block, sampled by a background thread."""

    def __enter__(self):
        import threading

        self.base = rss_mib()
        self.peak = self.base
        self._stop = threading.Event()

        def sample():
            while not self._stop.wait(0.005):
                self.peak = max(self.peak, rss_mib())

        self._thread = threading.Thread(target=sample, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()
        self.peak = max(self.peak, rss_mib())
        self.growth = self.peak - self.base


def data(n: int, dim: int, seed: int = 0):
    """Two clouds of unit vectors, shifted apart a little, like sentence embeddings."""
    rng = np.random.default_rng(seed)
    s = rng.normal(size=(n, dim)).astype(np.float32)
    t = (rng.normal(size=(n, dim)) + 0.3 * rng.normal(size=dim)).astype(np.float32)
    s /= np.linalg.norm(s, axis=1, keepdims=True)
    t /= np.linalg.norm(t, axis=1, keepdims=True)
    return s, t


def run_markeval(s, t, k, backend, device, dtype):
    from markeval.geometry import ball_membership, knn_balls

    balls = knn_balls(s, k, backend=backend, device=device, dtype=dtype)
    m = ball_membership(t, balls, backend=backend, device=device, dtype=dtype)
    return m.inside_any, m.points_per_ball


def run_cdist(s, t, k, device):
    import torch

    S = torch.as_tensor(s, device=device)
    T = torch.as_tensor(t, device=device)
    d_ss = torch.cdist(S, S)
    d_ss.fill_diagonal_(float("inf"))
    radii = torch.kthvalue(d_ss, k, dim=1).values
    del d_ss
    inside = torch.cdist(T, S) <= radii[None, :]
    return inside.any(dim=1).cpu().numpy(), inside.sum(dim=0).cpu().numpy()


def timed(fn, repeats):
    best, out, mem = float("inf"), None, 0.0
    for _ in range(repeats):
        with PeakRSS() as peak:
            start = time.perf_counter()
            out = fn()
            elapsed = time.perf_counter() - start
        best, mem = min(best, elapsed), max(mem, peak.growth)
    return best, mem, out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=10_000)
    parser.add_argument("--dim", type=int, default=384)
    parser.add_argument("--k", type=int, default=3)
    parser.add_argument("--dtype", default="float64", choices=["float64", "float32"])
    parser.add_argument("--backend", default="numpy", choices=["numpy", "torch"])
    parser.add_argument("--device", default=None)
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--smoke", action="store_true",
                        help="smallest run: 200 points per set in 16 dimensions, 1 repeat")
    args = parser.parse_args()
    if args.smoke:
        args.n, args.dim, args.repeats = 200, 16, 1

    import torch

    s, t = data(args.n, args.dim)
    device = args.device or "cpu"
    flops = 2 * (2.0 * args.n * args.n * args.dim)  # two n × n distance matrices
    print(f"n={args.n} per set, dim={args.dim}, k={args.k}, torch threads={torch.get_num_threads()}")
    print(f"input: 2 × {s.nbytes / 2**20:.1f} MiB float32; one full n×n float32 matrix = "
          f"{args.n * args.n * 4 / 2**20:.0f} MiB")

    run_cdist(s[:100], t[:100], args.k, device)  # warm-up: thread pools, allocator
    run_markeval(s[:100], t[:100], args.k, args.backend, args.device, args.dtype)

    t_me, mem_me, (any_me, per_ball_me) = timed(
        lambda: run_markeval(s, t, args.k, args.backend, args.device, args.dtype), args.repeats)
    t_cd, mem_cd, (any_cd, per_ball_cd) = timed(lambda: run_cdist(s, t, args.k, device),
                                                 args.repeats)

    label = f"markeval.geometry ({args.backend}, {args.dtype}, exact)"
    print(f"{label:44s} {t_me:8.2f} s  peak +{mem_me:7.0f} MiB  {flops / t_me / 1e9:7.1f} GFLOP/s")
    print(f"{'torch.cdist full matrices (float32)':44s} {t_cd:8.2f} s  peak +{mem_cd:7.0f} MiB  "
          f"{flops / t_cd / 1e9:7.1f} GFLOP/s")
    print(f"time ratio markeval / cdist = {t_me / t_cd:.2f}; memory ratio = "
          f"{mem_me / max(mem_cd, 1e-9):.2f}")
    print(f"fraction inside some ball: markeval {any_me.mean():.4f}, cdist {any_cd.mean():.4f}; "
          f"decisions that differ: {int((any_me != any_cd).sum())} of {len(any_me)} points, "
          f"per-ball counts differing: {int((per_ball_me != per_ball_cd).sum())} of {args.n} balls")


if __name__ == "__main__":
    main()
