"""Vectorised makers for id columns and feature columns in the formats the real competitions use.

Every maker takes a numpy Generator and a row count and returns a numpy array, so millions of rows cost
seconds, not minutes. Id makers return unique values in a random (unsorted) order, like a random split.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

IdMaker = Callable[[np.random.Generator, int], np.ndarray]

_HEX = np.frombuffer(b"0123456789abcdef", dtype=np.uint8)
_BASE36 = np.frombuffer(b"0123456789abcdefghijklmnopqrstuvwxyz", dtype=np.uint8)


def unique_ints(rng: np.random.Generator, n: int, *, low: int, high: int) -> np.ndarray:
    """n distinct integers from [low, high), in random order."""
    span = high - low
    if n > span:
        raise ValueError(f"cannot draw {n} distinct integers from a range of {span}")
    if span <= 4 * n or span <= 1_000_000:
        return low + rng.permutation(span)[:n].astype(np.int64)
    picked = np.unique(rng.integers(low, high, size=int(n * 1.2) + 16))
    while len(picked) < n:
        picked = np.unique(np.concatenate([picked, rng.integers(low, high, size=n)]))
    return rng.permutation(picked)[:n].astype(np.int64)


def _random_strings(rng: np.random.Generator, n: int, length: int, alphabet: np.ndarray) -> np.ndarray:
    codes = alphabet[rng.integers(0, len(alphabet), size=(n, length))]
    return np.ascontiguousarray(codes).view(f"S{length}").ravel().astype(str)


def random_tokens(rng: np.random.Generator, n: int, *, length: int, alphabet: bytes) -> np.ndarray:
    """n random (not necessarily distinct) strings over an ASCII alphabet."""
    return _random_strings(rng, n, length, np.frombuffer(alphabet, dtype=np.uint8))


def _unique_strings(n: int, make: Callable[[int], np.ndarray]) -> np.ndarray:
    """``make(n)``, with duplicates redrawn until every value is distinct."""
    values = make(n)
    while True:
        _, first = np.unique(values, return_index=True)
        if len(first) == n:
            return values
        duplicate = np.ones(n, dtype=bool)
        duplicate[first] = False
        redrawn = make(int(duplicate.sum()))
        if redrawn.dtype.itemsize > values.dtype.itemsize:  # a longer string must not be truncated
            values = values.astype(redrawn.dtype)
        values[duplicate] = redrawn


def hex_ids(length: int, *, suffix: str = "") -> IdMaker:
    """'0004be2cfeaba1c0361d39e2b000257b' (+ suffix such as '.jpg')."""

    def make(rng: np.random.Generator, n: int) -> np.ndarray:
        values = _unique_strings(n, lambda k: _random_strings(rng, k, length, _HEX))
        return np.char.add(values, suffix) if suffix else values

    return make


def sequential_ids(*, start: int = 1) -> IdMaker:
    """start, start+1, ... (ids renumbered by the prepare script)."""
    return lambda rng, n: np.arange(start, start + n, dtype=np.int64)


def int_ids(*, low: int, high: int) -> IdMaker:
    """Distinct integers drawn from [low, high) in random order."""
    return lambda rng, n: unique_ints(rng, n, low=low, high=high)


def prefixed_ids(prefix: str, *, low: int, high: int, width: int = 0) -> IdMaker:
    """'id27561', 'ISIC_0149568': a prefix and a distinct zero-padded integer."""

    def make(rng: np.random.Generator, n: int) -> np.ndarray:
        numbers = unique_ints(rng, n, low=low, high=high)
        return np.char.add(prefix, np.char.zfill(numbers.astype(str), width))

    return make


def labelled_ids(template: str) -> IdMaker:
    """'Test_0', 'Test_1', ...: a template with {i}, in order."""
    prefix, _, suffix = template.partition("{i}")
    return lambda rng, n: np.char.add(np.char.add(prefix, np.arange(n).astype(str)), suffix)


def reddit_ids(rng: np.random.Generator, n: int) -> np.ndarray:
    """Random Acts of Pizza request ids: 't3_' + 5 or 6 base-36 characters."""

    def make(k: int) -> np.ndarray:
        five, six = _random_strings(rng, k, 5, _BASE36), _random_strings(rng, k, 6, _BASE36)
        return np.where(rng.random(k) < 0.4, five, six)

    return np.char.add("t3_", _unique_strings(n, make))


def dicom_uids(rng: np.random.Generator, n: int) -> np.ndarray:
    """RANZCR StudyInstanceUIDs: '1.2.826.0.1.3680043.8.498.' + 10 to 38 decimal digits."""
    digits = np.frombuffer(b"0123456789", dtype=np.uint8)

    def make(k: int) -> np.ndarray:
        bodies = _random_strings(rng, k, 37, digits).tolist()
        lengths = rng.integers(9, 38, size=k).tolist()
        return np.array(["1.2.826.0.1.3680043.8.498.1" + b[:m] for b, m in zip(bodies, lengths)])

    return _unique_strings(n, make)


def whale_clips(rng: np.random.Generator, n: int) -> np.ndarray:
    """'20090330_000000_015s2ms_Test0.aif': two days of 2-second clips, numbered in time order."""
    offsets = np.sort(unique_ints(rng, n, low=0, high=2 * 86_400 * 10))  # tenths of a second
    day = offsets // (86_400 * 10)
    within = offsets % (86_400 * 10)
    seconds = within // 10
    stamp_seconds = seconds - seconds % 900  # file stamp = start of a 15-minute recording
    hhmmss = (stamp_seconds // 3600) * 10_000 + (stamp_seconds % 3600 // 60) * 100 + stamp_seconds % 60
    rest = seconds - stamp_seconds
    date = np.where(day == 0, "20090330", "20090331")
    return np.array(
        [
            f"{d}_{t:06d}_{r:03d}s{f}ms_Test{i}.aif"
            for i, (d, t, r, f) in enumerate(zip(date.tolist(), hhmmss.tolist(), rest.tolist(), (within % 10).tolist()))
        ]
    )


def taxi_keys(rng: np.random.Generator, n: int) -> np.ndarray:
    """NYC taxi keys: the pickup time and a serial, '2013-05-17 21:11:00.000000123'."""
    start = np.datetime64("2009-01-01T00:00:00")
    seconds = rng.integers(0, 6 * 365 * 86_400, size=n)
    stamps = np.char.replace(np.datetime_as_string(start + seconds.astype("timedelta64[s]"), unit="s"), "T", " ")
    serial = unique_ints(rng, n, low=1, high=max(10 * n, 1000))
    return np.char.add(np.char.add(stamps, "."), np.char.zfill(serial.astype(str), 9))


def pixel_ids(image_shapes: list[tuple[int, int, int]]) -> np.ndarray:
    """Denoising ids '<image>_<row>_<col>' (1-based), image by image, row-major like the prepare script."""
    ids: list[str] = []
    for image, height, width in image_shapes:
        cols = [f"_{c}" for c in range(1, width + 1)]
        for row in range(1, height + 1):
            prefix = f"{image}_{row}"
            ids.extend([prefix + c for c in cols])
    return np.array(ids, dtype=object)


def choice(rng: np.random.Generator, n: int, values: list, probs: list[float]) -> np.ndarray:
    p = np.asarray(probs, dtype=float)
    return np.asarray(values)[rng.choice(len(values), size=n, p=p / p.sum())]
