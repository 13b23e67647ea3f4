# Sourced by scripts/run and scripts/test: make .venv with Python 3.12+ and the locked packages.
# Usage: ensure_venv requirements.lock|requirements-dev.lock
set -euo pipefail

find_python() {
  for candidate in "${PORTAL_PYTHON:-}" python3.13 python3.12 "$HOME/.pyenv/versions/3.12.1/bin/python3" python3; do
    [ -n "$candidate" ] || continue
    if command -v "$candidate" >/dev/null 2>&1 &&
       "$candidate" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 12) else 1)' 2>/dev/null; then
      command -v "$candidate"; return 0
    fi
  done
  for dir in "$HOME"/.pyenv/versions/3.1[2-9]*; do
    [ -x "$dir/bin/python3" ] && { echo "$dir/bin/python3"; return 0; }
  done
  echo "No Python 3.12 or newer found: install one (e.g. 'pyenv install 3.12') or set PORTAL_PYTHON=/path/to/python3.12" >&2
  return 1
}

ensure_venv() {
  local lock="$1"
  if [ ! -x .venv/bin/python ] || ! .venv/bin/python -c 'import sys; sys.exit(0 if sys.version_info >= (3, 12) else 1)'; then
    rm -rf .venv
    "$(find_python)" -m venv .venv
  fi
  # Reinstall only when the lock files or pyproject.toml changed.
  local stamp=".venv/.installed-$(cat requirements.lock "$lock" pyproject.toml | sha256sum | cut -c1-16)"
  if [ ! -f "$stamp" ]; then
    echo "Installing locked packages from $lock into .venv ..."
    .venv/bin/python -m pip install -q --disable-pip-version-check -r "$lock"
    .venv/bin/python -m pip install -q --disable-pip-version-check --no-deps --no-build-isolation -e . 2>/dev/null ||
      .venv/bin/python -m pip install -q --disable-pip-version-check --no-deps -e .
    rm -f .venv/.installed-*
    touch "$stamp"
  fi
  export PATH="$PWD/.venv/bin:$PATH"
}
