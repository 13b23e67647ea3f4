"""How fast, and in how much memory, the submission reader parses the largest Lite submissions.

    python benchmarks/csv_read_speed.py [--rows 5851440] [--text-rows 1000000] [--no-pyarrow]

Writes synthetic files under benchmarks/out/ (git-ignored; reused on later runs):
- denoising-dirty-documents shape: ``id,value`` with ids ``<image>_<row>_<col>`` and full-precision
  floats, 5,851,440 rows by default (the size of that competition's answers);
- text-normalization shape: ``id,after`` with ids ``<sentence>_<token>`` and short free text,
  some of it quoted, 1,000,000 rows by default.
Each measurement runs in a fresh interpreter so that its peak RSS is its own.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "benchmarks" / "out"

_MEASURE = r"""
import json, resource, sys, time
sys.path.insert(0, sys.argv[1])
if sys.argv[3] == "no-pyarrow":
    sys.modules["pyarrow"] = None  # pandas then stores str columns as Python objects
import pandas as pd
from pathlib import Path
from grading.engine import csvio, textscan
path = Path(sys.argv[2])
rss = lambda: resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
base = rss()
t0 = time.perf_counter()
textscan.scan_text_file(path, max_bytes=1 << 40, max_line_bytes=csvio.MIN_MAX_LINE_BYTES)
t1 = time.perf_counter()
df = csvio.read_submission(path, max_bytes=1 << 40, max_line_bytes=csvio.MIN_MAX_LINE_BYTES)
t2 = time.perf_counter()
print(json.dumps({
    "file": path.name, "mib": round(path.stat().st_size / 2**20, 1), "rows": len(df),
    "byte_scan_s": round(t1 - t0, 3), "read_submission_s": round(t2 - t1, 3),
    "rss_after_imports_mib": round(base), "peak_rss_mib": round(rss()),
    "frame_mib": round(df.memory_usage(deep=True).sum() / 2**20),
    "dtypes": {c: str(t) for c, t in df.dtypes.items()},
    "string_storage": pd.StringDtype().storage, "pandas": pd.__version__,
}))
"""


def make_denoising(path: Path, rows: int) -> None:
    height, width = 258, 540
    pixel_ids = [f"_{r}_{c}," for r in range(1, height + 1) for c in range(1, width + 1)]
    rng = np.random.default_rng(0)
    written = 0
    with path.open("w") as f:
        f.write("id,value\n")
        image = 1
        while written < rows:
            n = min(len(pixel_ids), rows - written)
            values = rng.random(n).tolist()
            prefix = str(image)
            f.write("".join(f"{prefix}{pid}{v!r}\n" for pid, v in zip(pixel_ids[:n], values)))
            written += n
            image += 1


def make_text(path: Path, rows: int) -> None:
    words = ["the", "of", "twenty three", "Mr.", '"quoted, text"', "sil", "<self>", "1 9 8 5", "é", "один"]
    rng = np.random.default_rng(1)
    picks = rng.integers(0, len(words), rows).tolist()
    with path.open("w", encoding="utf-8") as f:
        f.write("id,after\n")
        f.write("".join(f"{i // 20}_{i % 20},{words[k]}\n" for i, k in enumerate(picks)))


def measure(path: Path, *, pyarrow: bool) -> dict:
    mode = "pyarrow" if pyarrow else "no-pyarrow"
    result = subprocess.run(
        [sys.executable, "-c", _MEASURE, str(ROOT), str(path), mode],
        check=True,
        capture_output=True,
        text=True,
    )
    return json.loads(result.stdout)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=5_851_440)
    parser.add_argument("--text-rows", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--no-pyarrow", action="store_true", help="measure pandas without pyarrow, for comparison")
    args = parser.parse_args()
    OUT.mkdir(parents=True, exist_ok=True)
    files = [
        (OUT / f"denoising_{args.rows}.csv", make_denoising, args.rows),
        (OUT / f"text_{args.text_rows}.csv", make_text, args.text_rows),
    ]
    for path, make, rows in files:
        if not path.exists():
            make(path, rows)
        runs = [measure(path, pyarrow=not args.no_pyarrow) for _ in range(args.repeat)]
        best = min(runs, key=lambda r: r["read_submission_s"])
        best["read_submission_s_all"] = [r["read_submission_s"] for r in runs]
        print(json.dumps(best, indent=2))


if __name__ == "__main__":
    main()
