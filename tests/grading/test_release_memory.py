"""After a graded run the worker hands freed heap pages back, so the next run starts from a small footprint."""

import subprocess
import sys
from pathlib import Path

import pytest

_SCRIPT = """
import os, sys
sys.path.insert(0, sys.argv[1])
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "portal.settings")
import django
django.setup()
from grading.engine.heap import release_memory
rss = lambda: int(next(l for l in open("/proc/self/status") if l.startswith("VmRSS")).split()[1]) // 1024
blocks = [bytes(100_000) for _ in range(3000)]   # about 300 MB of heap (each block under glibc's mmap threshold)
pin = bytes(100_000)                             # allocated last: the heap cannot simply shrink from its top
del blocks
before = rss()
release_memory()
print(before, rss())
"""


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads the resident size from /proc")
def test_release_memory_gives_freed_heap_pages_back():
    root = Path(__file__).resolve().parents[2]
    out = subprocess.run([sys.executable, "-c", _SCRIPT, str(root)], check=True, capture_output=True, text=True)
    before, after = (int(v) for v in out.stdout.split())
    assert before > 250 and after < before - 150, (before, after)  # measured here: 329 MB to 129 MB


_ARROW_SCRIPT = """
import ctypes, sys
sys.path.insert(0, sys.argv[1])
import pyarrow as pa
from grading.engine.heap import release_memory
rss = lambda: int(next(l for l in open("/proc/self/status") if l.startswith("VmRSS")).split()[1]) // 1024
# Text columns as pandas reads them: Arrow buffers in pyarrow's own pool, which glibc's malloc_trim does not reach.
columns = [pa.array(["x" * 50 + str(i) for i in range(20_000)]) for _ in range(200)]  # about 300 MB
pin = pa.array(["pin"] * 1000)
del columns
ctypes.CDLL(None).malloc_trim(0)
before = rss()
release_memory()
print(before, rss())
"""


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads the resident size from /proc")
def test_release_memory_gives_pyarrow_pool_pages_back_too():
    root = Path(__file__).resolve().parents[2]
    out = subprocess.run([sys.executable, "-c", _ARROW_SCRIPT, str(root)], check=True, capture_output=True, text=True)
    before, after = (int(v) for v in out.stdout.split())
    assert after < before - 150, (before, after)  # measured here: 309 MB held after malloc_trim alone, 56 after
