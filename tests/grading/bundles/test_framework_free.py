"""grading.bundles is plain Python: importing it must not pull in Django."""

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]


def test_importing_the_package_loads_no_django():
    code = "import sys, grading.bundles; print(sorted(m for m in sys.modules if m.split('.')[0] == 'django'))"
    done = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"
