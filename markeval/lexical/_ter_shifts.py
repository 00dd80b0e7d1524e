"""The edit counting behind TER: tercom's greedy shift search, batched with numpy.

This is the engine of :mod:`markeval.lexical.ter`. It reproduces sacrebleu 2.6.0's
``lib_ter.translation_edit_rate`` (its re-implementation of tercom) number for number; what
it does differently is *how* the work is organised.

The search (Snover et al., 2006, as tercom and sacrebleu run it), for one hypothesis ``h``
and one reference ``r`` (lists of word ids):

1. The word-level edit distance of ``h`` to ``r`` (insertions, deletions, substitutions,
   cost 1 each), restricted to a *beam* around the pseudo-diagonal ``j = floor(i * |r|/|h|)``
   (half-width 25, widened for very unequal lengths; the last row is computed in full), and
   its traceback, which breaks ties as sacrebleu does: match/substitution first, then the
   step that consumes a hypothesis word, then the one that consumes a reference word.
2. From the traceback: which hypothesis and reference words are in error, and where each
   reference word is aligned in the hypothesis.
3. Candidate shifts: every block ``h[s:s+n] == r[t:t+n]`` (``1 <= n <= 10``,
   ``|s - t| <= 50``) whose hypothesis words are not all correct, whose reference words are
   not all matched, and whose reference position is not aligned inside the block; each is
   tried at the (distinct) positions just after the alignments of ``r[t-1] .. r[t+n-1]``.
4. The candidate that lowers the edit distance most wins (ties: the longer block, then the
   earlier block, then the earlier target); if it gains nothing, the search stops, and it
   also stops (without shifting) once 1000 candidates have been tried over the whole search.
5. TER's edit count is then the number of shifts plus the final edit distance.

Batching: all sentence pairs advance through the search together. Each step above is one
set of array operations over every pair of a length bucket, and the candidates of all pairs
are scored by one edit-distance dynamic programme that advances a row at a time over all of
them at once (candidates start from the row where they first differ from the current
hypothesis, which is what sacrebleu's row cache achieves). The insertion chain of a row,
``d[j] = min(base[j], d[j-1] + 1)``, is a running minimum: ``d = j + cummin(base - j)``.
"""

from __future__ import annotations

import numpy as np

__all__ = ["BEAM_WIDTH", "MAX_SHIFT_CANDIDATES", "MAX_SHIFT_DIST", "MAX_SHIFT_SIZE",
           "count_edits"]

MAX_SHIFT_SIZE = 10  # longest block shifted (tercom)
MAX_SHIFT_DIST = 50  # largest |hypothesis position - reference position| of a block (tercom)
BEAM_WIDTH = 25  # half-width of the edit-distance beam (tercom)
MAX_SHIFT_CANDIDATES = 1000  # candidates tried per sentence pair before giving up (sacrebleu)

_NOP, _SUB, _DEL, _INS = 0, 1, 2, 3  # DEL consumes a hypothesis word, INS a reference word
_INF = 1 << 28  # "not computed" (outside the beam), as sacrebleu's 1e16

#: Upper bound on the cells of one batch of dynamic programmes (memory, about 4 bytes each).
_CELLS = 1_000_000


def count_edits(hyps: list[np.ndarray], refs: list[np.ndarray]) -> np.ndarray:
    """Tercom's edit count (shifts + edit distance) of every pair ``(hyps[k], refs[k])``.

    Parameters
    ----------
    hyps, refs : list of 1-D int arrays
        Word ids (a word is the same id in both). Ids must be non-negative.

    Returns
    -------
    ndarray of int64
        One count per pair.

    Examples
    --------
    >>> h = np.array([4, 1, 2, 3]); r = np.array([1, 2, 3, 4])
    >>> count_edits([h, h[:0], h], [r, r, r[:0]]).tolist()
    [1, 4, 4]
    """
    n = len(hyps)
    out = np.zeros(n, dtype=np.int64)
    nh = np.fromiter(map(len, hyps), dtype=np.int64, count=n)
    nr = np.fromiter(map(len, refs), dtype=np.int64, count=n)
    todo = []
    for k in range(n):
        if nr[k] == 0 or nh[k] == 0:  # all deletions / all insertions; no shift possible
            out[k] = nh[k] + nr[k]
        elif nh[k] != nr[k] or not np.array_equal(hyps[k], refs[k]):
            todo.append(k)
    if not todo:
        return out
    todo = np.array(todo, dtype=np.int64)
    # Batches of similar sizes (fewer padded cells), each at most _CELLS cells of the
    # edit-distance matrix; inside a batch, longest hypotheses first (so that the pairs
    # still computing row i are a prefix).
    todo = todo[np.argsort(np.maximum(nh[todo], nr[todo]), kind="stable")]
    start = 0
    while start < len(todo):
        stop = start + 1
        hmax, rmax = nh[todo[start]], nr[todo[start]]
        while stop < len(todo):
            h2 = max(hmax, nh[todo[stop]])
            r2 = max(rmax, nr[todo[stop]])
            if (stop + 1 - start) * (h2 + 1) * (r2 + 1) > _CELLS:
                break
            hmax, rmax, stop = h2, r2, stop + 1
        block = todo[start:stop]
        block = block[np.argsort(-nh[block], kind="stable")]
        out[block] = _solve([hyps[k] for k in block], [refs[k] for k in block])
        start = stop
    return out


def _pad(seqs: list[np.ndarray], fill: int) -> np.ndarray:
    width = max(len(s) for s in seqs)
    out = np.full((len(seqs), width), fill, dtype=np.int64)
    for k, s in enumerate(seqs):
        out[k, : len(s)] = s
    return out


class _Pairs:
    """The fixed data of a batch of pairs: references, lengths, beam geometry."""

    def __init__(self, ref: np.ndarray, nh: np.ndarray, nr: np.ndarray):
        self.ref = ref
        self.nh = nh
        self.nr = nr
        self.ratio = nr / nh  # float64, as sacrebleu's len(ref) / len(hyp)
        half = self.ratio / 2
        self.bw = np.where(BEAM_WIDTH < half, np.ceil(half + BEAM_WIDTH), BEAM_WIDTH).astype(
            np.int64)
        # Pairs whose beam never cuts a row: every row spans 0..|r| (cheaper rows).
        top = np.floor(nh * self.ratio).astype(np.int64)
        low = np.floor(self.ratio).astype(np.int64)
        self.free = (top - self.bw <= 0) & (low + self.bw >= nr + 1)


def _beam(i: np.ndarray, ratio, bw, nh, nr, cols: np.ndarray) -> np.ndarray:
    """Mask of the cells of row ``i`` inside sacrebleu's beam (one row per pair)."""
    diag = np.floor(i * ratio).astype(np.int64)
    lo = np.maximum(0, diag - bw)
    hi = np.where(i == nh, nr + 1, np.minimum(nr + 1, diag + bw))
    return (cols >= lo[:, None]) & (cols < hi[:, None])


def _row(prev: np.ndarray, neq: np.ndarray, cols: np.ndarray, mask) -> tuple:
    """One row of the edit-distance matrix: returns (row, sub, dele).

    ``prev`` is the row above (shape (k, C)), ``neq`` whether hypothesis word ``i`` differs
    from reference word ``j`` (shape (k, C - 1)); ``mask`` the beam (None: no cut).
    """
    sub = prev[:, :-1] + neq
    dele = prev + 1
    base = dele.copy()
    np.minimum(sub, dele[:, 1:], out=base[:, 1:])
    if mask is not None:
        base[~mask] = _INF
    base -= cols
    row = np.minimum.accumulate(base, axis=1)
    row += cols
    if mask is not None:
        np.minimum(row, _INF, out=row)
        row[~mask] = _INF
    return row, sub, dele


def _trace(cur: np.ndarray, neq: np.ndarray, pairs: _Pairs, idx: np.ndarray):
    """Edit distance, alignment and error flags of the current hypotheses ``cur``.

    ``idx`` selects the pairs (sorted by decreasing hypothesis length). Returns
    ``(values, dist, align, hyp_err, ref_err)``: all rows of the matrix, the distances,
    the hypothesis position aligned to each reference word (-1: before the first), and
    error flags of hypothesis and reference words.
    """
    nh, nr = pairs.nh[idx], pairs.nr[idx]
    ratio, bw = pairs.ratio[idx], pairs.bw[idx]
    k_all = len(idx)
    H, R = int(nh.max()), int(nr.max())
    cols = np.arange(R + 1, dtype=np.int32)
    values = np.empty((k_all, H + 1, R + 1), dtype=np.int32)
    ops = np.empty((k_all, H + 1, R + 1), dtype=np.int8)
    values[:, 0] = cols
    ops[:, 0] = _INS
    free = bool(pairs.free[idx].all())
    # number of pairs whose hypothesis has at least i words (a prefix: idx is sorted)
    alive = np.searchsorted(-nh, -np.arange(H + 1), side="right")
    for i in range(1, H + 1):
        k = int(alive[i])
        prev = values[:k, i - 1]
        nq = neq[:k, i - 1, :R]
        mask = None if free else _beam(np.full(k, i), ratio[:k], bw[:k], nh[:k], nr[:k], cols)
        row, sub, dele = _row(prev, nq, cols, mask)
        values[:k, i] = row
        op = np.where(dele == row, _DEL, _INS).astype(np.int8)
        is_sub = sub == row[:, 1:]
        op[:, 1:] = np.where(is_sub, nq.astype(np.int8), op[:, 1:])  # NOP=0 / SUB=1
        ops[:k, i] = op
    rows = np.arange(k_all)
    dist = values[rows, nh, nr]
    # Traceback, all pairs in lock-step.
    align = np.full((k_all, R), -1, dtype=np.int64)
    hyp_err = np.zeros((k_all, H), dtype=bool)
    ref_err = np.zeros((k_all, R), dtype=bool)
    i, j = nh.copy(), nr.copy()
    live = rows
    while live.size:
        ii, jj = i[live], j[live]
        op = ops[live, ii, jj]
        uses_j = op != _DEL
        uses_i = op != _INS
        align[live[uses_j], jj[uses_j] - 1] = ii[uses_j] - 1
        err_h = (op == _SUB) | (op == _DEL)
        hyp_err[live[err_h], ii[err_h] - 1] = True
        err_r = (op == _SUB) | (op == _INS)
        ref_err[live[err_r], jj[err_r] - 1] = True
        i[live] = ii - uses_i
        j[live] = jj - uses_j
        live = live[(i[live] > 0) | (j[live] > 0)]
    return values, dist, align, hyp_err, ref_err


def _run_lengths(match: np.ndarray) -> np.ndarray:
    """Length (capped at MAX_SHIFT_SIZE) of the run of matches starting at each cell and
    going down the diagonal; 0 where blocks are too far apart (MAX_SHIFT_DIST)."""
    _, H, R = match.shape
    run = match.copy()
    length = match.astype(np.int64)
    for k in range(1, MAX_SHIFT_SIZE):
        if k >= H or k >= R:
            break
        run[:, H - k:, :] = False
        run[:, :, R - k:] = False
        run[:, : H - k, : R - k] &= match[:, k:, k:]
        if not run.any():
            break
        length += run
    if H > MAX_SHIFT_DIST or R > MAX_SHIFT_DIST:
        far = np.abs(np.arange(H)[:, None] - np.arange(R)[None, :]) > MAX_SHIFT_DIST
        length[:, far] = 0
    return length


def _source(q, sh, ln, idx, m, left):
    """Position in the current hypothesis of word ``q`` of the shifted one."""
    src = q.copy()
    # left move: block to idx; words idx..sh-1 move right by ln
    in_block = left & (q >= idx) & (q < idx + ln)
    src = np.where(in_block, sh + q - idx, src)
    after = left & (q >= idx + ln) & (q < sh + ln)
    src = np.where(after, q - ln, src)
    # right move past m words: those m words come first, then the block
    first = ~left & (q >= sh) & (q < sh + m)
    src = np.where(first, q + ln, src)
    block = ~left & (q >= sh + m) & (q < sh + m + ln)
    src = np.where(block, q - m, src)
    return src


def _score_candidates(cp, lo, sh, ln, idx, m, left, values, neq, pairs, idx_pairs):
    """Edit distance of every candidate (``cp``: its row in the active pairs)."""
    n = len(cp)
    out = np.empty(n, dtype=np.int64)
    nh = pairs.nh[idx_pairs][cp]
    nr = pairs.nr[idx_pairs][cp]
    ratio = pairs.ratio[idx_pairs][cp]
    bw = pairs.bw[idx_pairs][cp]
    free = pairs.free[idx_pairs][cp]
    remaining = nh - lo
    order = np.lexsort((-remaining, ~free))  # free pairs first, then longest first
    C = values.shape[2]
    per = max(1, _CELLS // C)
    cols = np.arange(C, dtype=np.int32)
    start = 0
    while start < n:
        sel = order[start: start + per]
        # keep a batch homogeneous in "free"
        if free[sel[0]] and not free[sel].all():
            sel = sel[free[sel]]
        start += len(sel)
        sel = sel[np.argsort(-remaining[sel], kind="stable")]
        rem = remaining[sel]
        b_free = bool(free[sel[0]])
        c_p, c_lo = cp[sel], lo[sel]
        c_sh, c_ln, c_idx, c_m, c_left = sh[sel], ln[sel], idx[sel], m[sel], left[sel]
        c_nh, c_nr, c_ratio, c_bw = nh[sel], nr[sel], ratio[sel], bw[sel]
        cw = int(c_nr.max()) + 1
        ccols = cols[:cw]
        row = values[c_p, c_lo, :cw].copy()
        # candidates still computing at step t (their row lo + 1 + t exists): a prefix
        alive = np.searchsorted(-rem, -np.arange(int(rem.max()) + 1), side="right")
        res = np.empty(len(sel), dtype=np.int64)
        for t in range(int(rem.max())):
            k = int(alive[t + 1])
            i = c_lo[:k] + 1 + t
            q = i - 1
            src = _source(q, c_sh[:k], c_ln[:k], c_idx[:k], c_m[:k], c_left[:k])
            nq = neq[c_p[:k], src, : cw - 1]
            mask = None if b_free else _beam(i, c_ratio[:k], c_bw[:k], c_nh[:k], c_nr[:k], ccols)
            new, _, _ = _row(row[:k], nq, ccols, mask)
            row[:k] = new
            done = rem[:k] == t + 1
            if done.any():
                d = np.nonzero(done)[0]
                res[d] = new[d, c_nr[d]]
        out[sel] = res
    return out


def _solve(hyps: list[np.ndarray], refs: list[np.ndarray]) -> np.ndarray:
    """Edit counts of a batch of non-trivial pairs (hypotheses sorted longest first)."""
    P = len(hyps)
    cur = _pad(hyps, -1)
    ref = _pad(refs, -2)
    nh = np.fromiter(map(len, hyps), dtype=np.int64, count=P)
    nr = np.fromiter(map(len, refs), dtype=np.int64, count=P)
    pairs = _Pairs(ref, nh, nr)
    edits = np.zeros(P, dtype=np.int64)
    shifts = np.zeros(P, dtype=np.int64)
    checked = np.zeros(P, dtype=np.int64)
    active = np.arange(P)
    while active.size:
        H, R = int(nh[active].max()), int(nr[active].max())
        a_cur = cur[active, :H]
        a_ref = ref[active, :R]
        match = a_cur[:, :, None] == a_ref[:, None, :]
        neq = ~match
        values, dist, align, hyp_err, ref_err = _trace(a_cur, neq, pairs, active)
        # --- candidate blocks, in sacrebleu's order (hyp start, ref start, length)
        runs = _run_lengths(match)
        p, s, t = np.nonzero(runs)
        counts = runs[p, s, t]
        rep = np.repeat(np.arange(len(p)), counts)
        first = np.cumsum(counts) - counts
        ln = np.arange(len(rep)) - first[rep] + 1
        p, s, t = p[rep], s[rep], t[rep]
        k_act = len(active)
        hc = np.zeros((k_act, H + 1), dtype=np.int64)
        np.cumsum(hyp_err, axis=1, out=hc[:, 1:])
        rc = np.zeros((k_act, R + 1), dtype=np.int64)
        np.cumsum(ref_err, axis=1, out=rc[:, 1:])
        al = align[p, t]
        keep = ((hc[p, s + ln] - hc[p, s]) > 0) & ((rc[p, t + ln] - rc[p, t]) > 0)
        keep &= ~((s <= al) & (al < s + ln))
        p, s, t, ln = p[keep], s[keep], t[keep], ln[keep]
        target = align + 1  # insertion point after the aligned word
        before = np.zeros((k_act, R), dtype=np.int64)
        before[:, 1:] = target[:, :-1]
        inc = target > before
        ic = np.zeros((k_act, R + 1), dtype=np.int64)
        np.cumsum(inc, axis=1, out=ic[:, 1:])
        n_targets = 1 + ic[p, t + ln] - ic[p, t]
        total = np.bincount(p, weights=n_targets, minlength=k_act).astype(np.int64)
        g_checked = checked[active] + total
        checked[active] = g_checked
        go = (total > 0) & (g_checked < MAX_SHIFT_CANDIDATES)
        stop = ~go
        edits[active[stop]] = shifts[active[stop]] + dist[stop]
        if not go.any():
            break
        sel = go[p]
        p, s, t, ln, n_targets = p[sel], s[sel], t[sel], ln[sel], n_targets[sel]
        # --- candidate targets: distinct insertion points of ref words t-1 .. t+ln-1
        rep = np.repeat(np.arange(len(p)), ln + 1)
        first = np.cumsum(ln + 1) - (ln + 1)
        off = np.arange(len(rep)) - first[rep]  # 0 .. ln  (reference word t - 1 + off)
        cp, csh, cln, ct = p[rep], s[rep], ln[rep], t[rep]
        word = ct - 1 + off
        safe = np.maximum(word, 0)
        cidx = np.where(word < 0, 0, target[cp, safe])
        keep = (off == 0) | inc[cp, safe]
        cp, csh, cln, cidx = cp[keep], csh[keep], cln[keep], cidx[keep]
        c_nh = nh[active][cp]
        left = cidx < csh
        m = np.where(cidx <= csh + cln, cidx - csh, cidx - csh - cln)
        m = np.minimum(m, c_nh - csh - cln)
        m = np.where(left, 0, m)
        lo = np.where(left, cidx, csh)
        cdist = dist[cp].copy()
        moving = left | (m > 0)
        w = np.nonzero(moving)[0]
        if w.size:
            cdist[w] = _score_candidates(cp[w], lo[w], csh[w], cln[w], cidx[w], m[w], left[w],
                                         values, neq, pairs, active)
        gain = dist[cp] - cdist
        best = np.lexsort((cidx, csh, -cln, -gain, cp))
        firsts = best[np.r_[True, cp[best][1:] != cp[best][:-1]]]
        b_p = cp[firsts]
        b_gain = gain[firsts]
        # pairs that went on but whose best shift gains nothing stop here
        improve = b_gain > 0
        fin = b_p[~improve]
        edits[active[fin]] = shifts[active[fin]] + dist[fin]
        f = firsts[improve]
        b_p = b_p[improve]
        if b_p.size:
            q = np.broadcast_to(np.arange(H), (len(b_p), H))
            src = _source(q, csh[f][:, None], cln[f][:, None], cidx[f][:, None], m[f][:, None],
                          left[f][:, None])
            g = active[b_p]
            cur[g, :H] = np.take_along_axis(cur[g, :H], src, axis=1)
            shifts[g] += 1
        active = active[b_p]
    return edits
