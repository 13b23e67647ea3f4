# Sourced by scripts/run and scripts/test: make .venv with a Python whose tarfile is safe, and the locked packages.
# Usage: ensure_venv requirements.lock|requirements-dev.lock
set -euo pipefail

# Python 3.12.0-3.12.5 parse a tar pax header in time that grows with the square of its length
# (CVE-2024-6232): a 400-byte bundle could hold a web process for minutes. 3.12.6+ and 3.13+ are fixed.
# The bundle reader also refuses large tar headers itself; this keeps the interpreter safe as well.
PYTHON_OK='import sys; v = sys.version_info; sys.exit(0 if v >= (3, 13) or (3, 12, 6) <= v < (3, 13) else 1)'

find_python() {
  local candidate dir
  for candidate in "${PORTAL_PYTHON:-}" python3.14 python3.13 python3.12 python3; do
    [ -n "$candidate" ] || continue
    if command -v "$candidate" >/dev/null 2>&1 && "$candidate" -c "$PYTHON_OK" 2>/dev/null; then
      command -v "$candidate"; return 0
    fi
  done
  # pyenv's interpreters, newest first.
  for dir in $(ls -d "$HOME"/.pyenv/versions/3.1[2-9]* 2>/dev/null | sort -rV); do
    if [ -x "$dir/bin/python3" ] && "$dir/bin/python3" -c "$PYTHON_OK" 2>/dev/null; then
      echo "$dir/bin/python3"; return 0
    fi
  done
  echo "No Python 3.12.6+ or 3.13+ found (3.12.0-3.12.5 have a tarfile flaw that lets one upload stall the" \
       "server): install one (e.g. 'pyenv install 3.13') or set PORTAL_PYTHON=/path/to/python3" >&2
  return 1
}

ensure_venv() {
  local lock="$1"
  if [ ! -x .venv/bin/python ] || ! .venv/bin/python -c "$PYTHON_OK" 2>/dev/null; then
    rm -rf .venv
    "$(find_python)" -m venv .venv
  fi
  # Reinstall only when the lock files or pyproject.toml changed.
  # One stamp per lock file, so that scripts/run and scripts/test do not undo each other's.
  local stamp=".venv/.installed-${lock%.lock}-$(cat requirements.lock "$lock" pyproject.toml | sha256sum | cut -c1-16)"
  if [ ! -f "$stamp" ]; then
    echo "Installing locked packages from $lock into .venv ..."
    .venv/bin/python -m pip install -q --disable-pip-version-check -r "$lock"
    .venv/bin/python -m pip install -q --disable-pip-version-check --no-deps --no-build-isolation -e . 2>/dev/null ||
      .venv/bin/python -m pip install -q --disable-pip-version-check --no-deps -e .
    rm -f .venv/.installed-"${lock%.lock}"-*
    touch "$stamp"
  fi
  export PATH="$PWD/.venv/bin:$PATH"
}
