"""Levenshtein distances of many pairs of sequences at once, in NumPy.

A Python loop over 485,000 InChI strings with a textbook dynamic programme costs minutes; here every pair
is handled by the same few array operations:

1. Sequences are stored end to end as integer symbols (:class:`Sequences`): a text column becomes its
   Unicode code points (bytes when it is ASCII), read in bulk from pandas' Arrow buffers.
2. The common prefix and suffix of each pair are skipped, compared 16 to 64 symbols at a time; that alone
   settles identical pairs and leaves only the differing middle of near-misses.
3. What is left goes through Myers' bit-parallel algorithm (Hyyrö's formulation, several 64-bit words per
   pattern): one column of the edit-distance table per step, for thousands of pairs at a time, the pairs
   sorted by length so a batch stops as soon as its texts are used up.

Distances are over symbols, so for text they count Unicode code points, as python-Levenshtein does.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:  # imported where it is used: only text read from Arrow buffers needs it
    import pyarrow as pa

_BATCH = 4096  # pairs per bit-parallel pass: large enough to amortise NumPy calls, small enough for cache
_SCAN_ROWS = 1 << 15  # pairs per block when comparing prefixes and suffixes
_DECODE_ROWS = 1 << 16  # rows of non-ASCII text decoded at a time
_WIDEST_WORDS = 8  # 8-byte words compared per pair and pass, at most, when skipping common prefixes
_PAD = 8 * _WIDEST_WORDS  # zero symbols around the items compared word-wise, for words read past either end
_WORDWISE = (np.dtype(np.uint8), np.dtype(np.uint16))  # symbol types compared 8 bytes at a time
_ONE = np.uint64(1)
_TOP = np.uint64(63)
_ALL = np.uint64((1 << 64) - 1)
_BITS = np.left_shift(_ONE, np.arange(64, dtype=np.uint64))


@dataclass(frozen=True)
class Sequences:
    """n sequences of non-negative integer symbols stored end to end: item i is
    ``codes[starts[i] : starts[i] + lens[i]]``."""

    codes: np.ndarray
    starts: np.ndarray  # int64
    lens: np.ndarray  # int64

    def __len__(self) -> int:
        return len(self.lens)

    @staticmethod
    def from_lists(items: list[list[int]]) -> Sequences:
        lens = np.fromiter((len(item) for item in items), dtype=np.int64, count=len(items))
        codes = np.fromiter((s for item in items for s in item), dtype=np.int64, count=int(lens.sum()))
        return Sequences(codes, _starts(lens), lens)

    @staticmethod
    def from_strings(values: Iterable[str]) -> Sequences:
        """Code points of a sequence of Python str."""
        values = list(values)
        lens = np.fromiter(map(len, values), dtype=np.int64, count=len(values))
        return Sequences(_code_points("".join(values)), _starts(lens), lens)

    @staticmethod
    def from_arrow(array: pa.Array | pa.ChunkedArray) -> Sequences:
        """Code points of a pyarrow string array without nulls, read from its buffers."""
        import pyarrow as pa
        import pyarrow.compute as pc

        if isinstance(array, pa.ChunkedArray):
            array = array.combine_chunks()
        offset_type = np.int32 if array.type == pa.string() else np.int64
        buffers = array.buffers()
        size = np.dtype(offset_type).itemsize
        offsets = np.frombuffer(buffers[1], dtype=offset_type, count=len(array) + 1, offset=array.offset * size)
        first, last = (int(offsets[0]), int(offsets[-1])) if len(offsets) else (0, 0)
        data = np.frombuffer(buffers[2], dtype=np.uint8, count=last)[first:] if last else np.zeros(0, np.uint8)
        if not len(data) or int(data.max()) < 0x80:  # ASCII: one byte per code point
            starts = offsets[:-1].astype(np.int64) - first
            return Sequences(data, starts, np.diff(offsets).astype(np.int64))
        lens = pc.utf8_length(array).to_numpy(zero_copy_only=False).astype(np.int64)
        bounds = offsets[::_DECODE_ROWS].astype(np.int64).tolist() + [last]
        pieces = [  # decoded a block of rows at a time: a whole column at once would need ~10 bytes a character
            _code_points(data[lo - first : hi - first].tobytes().decode("utf-8"))
            for lo, hi in itertools.pairwise(bounds)
        ]
        return Sequences(np.concatenate(pieces), _starts(lens), lens)  # the widest piece's dtype


def _starts(lens: np.ndarray) -> np.ndarray:
    starts = np.zeros(len(lens), dtype=np.int64)
    np.cumsum(lens[:-1], out=starts[1:])
    return starts


def _code_points(text: str) -> np.ndarray:
    if text.isascii():
        return np.frombuffer(text.encode("ascii"), dtype=np.uint8)
    units = text.encode("utf-16-le", "surrogatepass")
    if len(units) == 2 * len(text):  # no astral character: UTF-16 units are the code points (a third of the time)
        return np.frombuffer(units, dtype=np.uint16)
    return _narrow(np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype=np.uint32))


def _narrow(codes: np.ndarray) -> np.ndarray:
    """uint16 when every code point fits (text outside the astral planes): half the memory."""
    if codes.dtype == np.uint32 and (not len(codes) or int(codes.max()) < 1 << 16):
        return codes.astype(np.uint16)
    return codes


def _dense_symbols(parts: list[np.ndarray], padding: int) -> tuple[np.ndarray, int]:
    """The parts end to end (then ``padding`` zeros), symbols renumbered 0..A-1 over the ones that occur:
    uint8 when there are at most 256 of them."""
    used = [part for part in parts if len(part)]
    if all(part.dtype == np.uint8 for part in used):
        present = np.zeros(256, dtype=bool)
    elif used and min(int(p.min()) for p in used) >= 0 and max(int(p.max()) for p in used) < 0x110000:
        present = np.zeros(max(int(p.max()) for p in used) + 1, dtype=bool)
    else:
        present = None
    if present is not None:
        for part in used:
            present[part] = True
        size = int(present.sum())
    else:
        uniques = np.unique(np.concatenate([np.unique(part) for part in used]))
        size = len(uniques)
    dtype = np.uint8 if size <= 256 else np.int32
    if present is not None:
        table = (np.cumsum(present) - 1).astype(dtype)
    out = np.zeros(sum(len(part) for part in parts) + padding, dtype=dtype)
    at = 0
    for part in parts:
        if present is not None:
            out[at : at + len(part)] = table[part]
        else:
            out[at : at + len(part)] = np.searchsorted(uniques, part)
        at += len(part)
    return out, max(size, 1)


def distances(
    a: Sequences, b: Sequences, a_rows: np.ndarray | None = None, b_rows: np.ndarray | None = None
) -> np.ndarray:
    """Levenshtein distance of ``a[a_rows[k]]`` and ``b[b_rows[k]]`` for each k (None: every row in order)."""
    sa, la = (a.starts, a.lens) if a_rows is None else (a.starts[a_rows], a.lens[a_rows])
    sb, lb = (b.starts, b.lens) if b_rows is None else (b.starts[b_rows], b.lens[b_rows])
    if len(sa) != len(sb):
        raise ValueError("distances needs as many pairs on both sides")
    if a.codes.dtype in _WORDWISE and b.codes.dtype in _WORDWISE:
        return _wordwise_distances(a.codes, sa, la, b.codes, sb, lb)
    codes_a, codes_b = a.codes, b.codes
    shortest = np.minimum(la, lb)
    prefix = _common_run(codes_a, sa, codes_b, sb, shortest, from_end=False, lens=(la, lb))
    suffix = _common_run(codes_a, sa, codes_b, sb, shortest - prefix, from_end=True, lens=(la, lb))
    ma, mb = la - prefix - suffix, lb - prefix - suffix
    out = np.maximum(ma, mb)  # right when one side is empty
    hard = np.flatnonzero((ma > 0) & (mb > 0))
    if len(hard):
        # Both sides in one array (b's items after a's, then padding for reads past the last item), with
        # the shorter item of each pair as the bit pattern.
        codes, alphabet = _dense_symbols([codes_a, codes_b], int(max(ma[hard].max(), mb[hard].max())))
        out[hard] = _middles(
            codes, sa[hard] + prefix[hard], ma[hard], sb[hard] + prefix[hard] + len(codes_a), mb[hard], alphabet
        )
    return out


def _wordwise_distances(
    codes_a: np.ndarray, sa: np.ndarray, la: np.ndarray, codes_b: np.ndarray, sb: np.ndarray, lb: np.ndarray
) -> np.ndarray:
    """:func:`distances` of bytes (ASCII text) or 16-bit code points (other text outside the astral planes).
    Both sides go end to end into one array of the wider type, with ``_PAD`` zero symbols before and
    ``_PAD`` plus the longest item after, made once: common prefixes and suffixes are compared 8 bytes (8 or
    4 symbols) at a time through unaligned uint64 words over it, and the bit-parallel pass reads its symbols
    as they are (each batch renumbers the few symbols it sees), instead of renumbering whole columns."""
    dtype = np.dtype(np.uint16 if np.uint16 in (codes_a.dtype, codes_b.dtype) else np.uint8).newbyteorder("<")
    longest = int(max(la.max(initial=0), lb.max(initial=0)))
    codes = np.zeros(_PAD + len(codes_a) + len(codes_b) + _PAD + longest, dtype=dtype)
    codes[_PAD : _PAD + len(codes_a)] = codes_a
    codes[_PAD + len(codes_a) : _PAD + len(codes_a) + len(codes_b)] = codes_b
    sa, sb = sa + _PAD, sb + _PAD + len(codes_a)
    size = dtype.itemsize
    per_word = 8 // size
    words = np.ndarray(shape=(len(codes) - per_word + 1,), dtype="<u8", buffer=codes, strides=(size,))
    shortest = np.minimum(la, lb)
    prefix = _common_run_words(words, sa, sb, shortest, from_end=False, size=size)
    suffix = _common_run_words(
        words, sa + la - per_word, sb + lb - per_word, shortest - prefix, from_end=True, size=size
    )
    ma, mb = la - prefix - suffix, lb - prefix - suffix
    out = np.maximum(ma, mb)  # right when one side is empty
    hard = np.flatnonzero((ma > 0) & (mb > 0))
    if len(hard):
        alphabet = 1 << (8 * size)  # at least 256: each batch renumbers its symbols
        out[hard] = _middles(codes, sa[hard] + prefix[hard], ma[hard], sb[hard] + prefix[hard], mb[hard], alphabet)
    return out


def _middles(
    codes: np.ndarray, sa: np.ndarray, ma: np.ndarray, sb: np.ndarray, mb: np.ndarray, alphabet: int
) -> np.ndarray:
    """Distances of the differing middles, with the shorter item of each pair as the bit pattern."""
    a_is_pattern = ma <= mb
    return _bit_parallel(
        codes,
        np.where(a_is_pattern, sa, sb),
        np.where(a_is_pattern, ma, mb),
        np.where(a_is_pattern, sb, sa),
        np.where(a_is_pattern, mb, ma),
        alphabet,
    )


def _common_run_words(
    words: np.ndarray, at_a: np.ndarray, at_b: np.ndarray, limit: np.ndarray, *, from_end: bool, size: int
) -> np.ndarray:
    """Length of the common prefix (or, with ``from_end``, suffix) of each pair of sequences of ``size``-byte
    symbols, at most ``limit``. ``words[i]`` holds symbols i..i+8/size-1 (little-endian); a prefix is read
    from the words at ``at_*`` on, a suffix from the words at ``at_*`` (the one that ends with the item's last
    symbol) back."""
    run = np.zeros(len(at_a), dtype=np.int64)
    for first in range(0, len(at_a), _SCAN_ROWS):  # in blocks, to keep the index matrices small
        rows = slice(first, first + _SCAN_ROWS)
        run[rows] = _common_run_words_block(words, at_a[rows], at_b[rows], limit[rows], from_end, size)
    return run


def _common_run_words_block(
    words: np.ndarray, at_a: np.ndarray, at_b: np.ndarray, limit: np.ndarray, from_end: bool, size: int
) -> np.ndarray:
    run = np.zeros(len(at_a), dtype=np.int64)
    per_word = 8 // size
    active = np.flatnonzero(limit > 0)
    done, width = 0, 2
    while len(active):
        steps = done + per_word * np.arange(width)
        offsets = -steps if from_end else steps
        differ = words[at_a[active, None] + offsets] ^ words[at_b[active, None] + offsets]
        same = differ == 0
        whole = same.all(axis=1)
        first = np.argmin(same, axis=1)
        first_differ = differ[np.arange(len(active)), first]
        equal_bytes = _leading_zero_bytes(first_differ) if from_end else _trailing_zero_bytes(first_differ)
        run[active] += np.where(whole, per_word * width, per_word * first + equal_bytes // size)
        done += per_word * width
        active = active[whole & (done < limit[active])]
        width = min(width * 2, _WIDEST_WORDS)
    np.minimum(run, limit, out=run)
    return run


def _trailing_zero_bytes(words: np.ndarray) -> np.ndarray:
    """Whole zero bytes below the lowest set bit (little-endian: equal bytes before the first that differs)."""
    lowest = words & (~words + _ONE)
    return np.bitwise_count(lowest - _ONE).astype(np.int64) // 8


def _leading_zero_bytes(words: np.ndarray) -> np.ndarray:
    """Whole zero bytes above the highest set bit (equal bytes after the last that differs)."""
    smeared = words.copy()
    for shift in (1, 2, 4, 8, 16, 32):
        smeared |= smeared >> np.uint64(shift)
    return (64 - np.bitwise_count(smeared).astype(np.int64)) // 8


def _common_run(
    codes_a: np.ndarray,
    sa: np.ndarray,
    codes_b: np.ndarray,
    sb: np.ndarray,
    limit: np.ndarray,
    *,
    from_end: bool,
    lens: tuple[np.ndarray, np.ndarray],
) -> np.ndarray:
    """Length of the common prefix (or suffix) of each pair, at most ``limit``."""
    run = np.zeros(len(sa), dtype=np.int64)
    for first in range(0, len(sa), _SCAN_ROWS):  # in blocks, to keep the index matrices small
        rows = slice(first, first + _SCAN_ROWS)
        run[rows] = _common_run_block(
            codes_a, sa[rows], codes_b, sb[rows], limit[rows], from_end, lens[0][rows], lens[1][rows]
        )
    return run


def _common_run_block(
    codes_a: np.ndarray,
    sa: np.ndarray,
    codes_b: np.ndarray,
    sb: np.ndarray,
    limit: np.ndarray,
    from_end: bool,
    la: np.ndarray,
    lb: np.ndarray,
) -> np.ndarray:
    run = np.zeros(len(sa), dtype=np.int64)
    if from_end:
        sa, sb = sa + la - 1, sb + lb - 1
    active = np.flatnonzero(limit > 0)
    done, width = 0, 16
    last_a, last_b = max(len(codes_a) - 1, 0), max(len(codes_b) - 1, 0)
    while len(active):
        steps = done + np.arange(width)
        offsets = -steps if from_end else steps
        ia = sa[active, None] + offsets
        ib = sb[active, None] + offsets
        np.clip(ia, 0, last_a, out=ia)
        np.clip(ib, 0, last_b, out=ib)
        same = codes_a[ia] == codes_b[ib]
        same &= steps < limit[active, None]
        whole = same.all(axis=1)
        run[active] += np.where(whole, width, np.argmin(same, axis=1))
        active = active[whole]
        done += width
        width = min(width * 2, 64)
    np.minimum(run, limit, out=run)
    return run


def _bit_parallel(
    codes: np.ndarray, sp: np.ndarray, lp: np.ndarray, st: np.ndarray, lt: np.ndarray, alphabet: int
) -> np.ndarray:
    """Myers/Hyyrö bit-parallel edit distance of patterns (lp >= 1) and texts (lt >= 1) stored in codes."""
    words = (lp + 63) // 64
    order = np.lexsort((lt, words))
    out = np.empty(len(lp), dtype=np.int64)
    for first in range(0, len(order), _BATCH):
        batch = order[first : first + _BATCH]
        batch = batch[np.argsort(-lt[batch], kind="stable")]  # longest texts first: active pairs are a prefix
        out[batch] = _batch_distances(codes, sp[batch], lp[batch], st[batch], lt[batch], alphabet)
    return out


def _batch_distances(
    codes: np.ndarray, sp: np.ndarray, lp: np.ndarray, st: np.ndarray, lt: np.ndarray, alphabet: int
) -> np.ndarray:
    """One batch, texts sorted longest first. Each pattern sits in the top bits of its ``width`` words:
    the unused low bits are rows that match nothing and start with vertical deltas 0, which makes the
    row just above the pattern equal row 0 of its table (0, 1, 2, ...), so its distance is unchanged and
    its last row is always bit 63 of the top word."""
    k = len(lp)
    width = int((lp.max() + 63) // 64)
    steps = int(lt.max())
    longest = int(lp.max())
    # Symbols as (position, pair) matrices; cells past an item's end are padding or the next item.
    p_symbols = codes[sp[None, :] + np.arange(longest)[:, None]]
    t_symbols = codes[st[None, :] + np.arange(steps)[:, None]]
    if alphabet >= 256:  # renumber this batch's symbols densely so the match table stays small
        present = np.zeros(alphabet, dtype=bool)
        present[p_symbols] = True
        present[t_symbols] = True
        local = np.cumsum(present, dtype=np.intp) - 1
        p_symbols, t_symbols, size = local[p_symbols], local[t_symbols], int(local[-1]) + 1
    else:
        size = alphabet
    # Match table: bit b of word w, entry (symbol * k + pair), is set when the pattern symbol placed at
    # bit 64w + b equals the symbol. Positions past a pattern's end go to an extra symbol no text uses.
    entries = (size + 1) * k
    p_rows = p_symbols.astype(np.intp)
    p_rows[np.arange(longest)[:, None] >= lp[None, :]] = size
    p_rows *= k
    p_rows += np.arange(k)
    bits = np.minimum((64 * width - lp)[None, :] + np.arange(longest)[:, None], 64 * width - 1)
    p_rows += (bits >> 6) * entries
    bits = _BITS[bits & 63]
    table: np.ndarray = np.zeros(width * entries, dtype=np.uint64)  # reshaped to (width, entries) below
    for i in range(longest):  # a pair once per line: no repeated index within one update
        table[p_rows[i]] |= bits[i]
    table = table.reshape(width, entries)
    t_rows = t_symbols.astype(np.intp)
    t_rows *= k
    t_rows += np.arange(k)
    active = np.searchsorted(-lt, -np.arange(steps), side="left")  # pairs with lt > j (lt descending)
    # Initial vertical deltas: +1 on the pattern's rows, 0 on the unused rows below them.
    unused = 64 * width - lp
    vp = np.zeros((width, k), dtype=np.uint64)
    for w in range(width):
        below = np.clip(unused - 64 * w, 0, 64).astype(np.uint64)
        vp[w] = np.where(below >= 64, np.uint64(0), _ALL << np.minimum(below, _TOP))
    vn = np.zeros((width, k), dtype=np.uint64)
    score = lp.astype(np.int64)
    x, t, d0, hp, hn = (np.empty(k, dtype=np.uint64) for _ in range(5))
    eq = np.empty(k, dtype=np.uint64)
    flag = np.empty(k, dtype=bool)
    add_carry, hp_carry, hn_carry = (np.empty(k, dtype=np.uint64) for _ in range(3))
    for j in range(steps):
        c = int(active[j])
        rows = t_rows[j, :c]
        add_carry[:c] = 0
        hp_carry[:c] = 1  # row 0 of the table grows by one per column
        hn_carry[:c] = 0
        for w in range(width):
            p, n = vp[w, :c], vn[w, :c]
            e, xw, tw, dw, hpw, hnw = eq[:c], x[:c], t[:c], d0[:c], hp[:c], hn[:c]
            np.take(table[w], rows, out=e)
            np.bitwise_or(e, n, out=xw)
            np.bitwise_and(xw, p, out=tw)
            np.add(tw, p, out=tw)  # (x & vp) + vp, carried across words
            if width > 1:
                fl = flag[:c]
                np.less(tw, p, out=fl)
                np.add(tw, add_carry[:c], out=tw)
                fl |= tw < add_carry[:c]
                add_carry[:c] = fl
            np.bitwise_xor(tw, p, out=dw)
            dw |= xw  # d0
            np.bitwise_or(dw, p, out=hpw)
            np.invert(hpw, out=hpw)
            hpw |= n  # hp = vn | ~(d0 | vp)
            np.bitwise_and(p, dw, out=hnw)  # hn = vp & d0
            np.left_shift(hpw, _ONE, out=xw)
            xw |= hp_carry[:c]
            np.left_shift(hnw, _ONE, out=tw)
            tw |= hn_carry[:c]
            if width > 1:
                np.right_shift(hpw, _TOP, out=hp_carry[:c])
                np.right_shift(hnw, _TOP, out=hn_carry[:c])
            np.bitwise_and(xw, dw, out=n)  # vn = (hp << 1) & d0
            np.bitwise_or(dw, xw, out=dw)
            np.invert(dw, out=dw)
            np.bitwise_or(tw, dw, out=p)  # vp = (hn << 1) | ~(d0 | (hp << 1))
        np.right_shift(hp[:c], _TOP, out=hp[:c])
        np.right_shift(hn[:c], _TOP, out=hn[:c])
        score[:c] += hp[:c].view(np.int64)
        score[:c] -= hn[:c].view(np.int64)
    return score
