"""Handing a grading process's freed memory back to the system between runs.

A grading process keeps at most one competition's answers and frees everything else after a run, but the
allocators keep what was freed: glibc's heap keeps freed pages mapped, and pyarrow's pool (which holds the
text columns pandas reads into Arrow buffers) keeps its own. The process would enter its next run (say,
13 million icecube rows) with the last run's high-water mark still resident. Only the resident size changes;
no live object is touched.
"""

from __future__ import annotations

import ctypes

import pyarrow


def release_memory() -> None:
    """Give freed heap pages and pyarrow's unused pool memory back to the system."""
    pyarrow.default_memory_pool().release_unused()
    try:
        ctypes.CDLL(None).malloc_trim(0)
    except (OSError, AttributeError):  # not glibc: nothing to trim
        pass
