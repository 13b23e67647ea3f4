#!/usr/bin/env bash
# The example agent's entry point, as in an MLE-bench image (bash /home/agent/start.sh). The process backend
# sets AGENT_DIR; in an image the script finds agent.py beside itself.
set -euo pipefail
here="${AGENT_DIR:-$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)}"
exec python3 "$here/agent.py"
