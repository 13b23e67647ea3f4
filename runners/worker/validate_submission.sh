#!/usr/bin/env bash
# Check a submission's format with the portal, as MLE-bench's validate_submission.sh does; never a score.
#
#   validate_submission.sh [path]     (default: $SUBMISSION_DIR/submission.csv)
#
# Prints the portal's answer, {"valid": true|false, "reason": ...}, and exits 0 when the file is valid,
# 1 when it is not, 2 when the check could not be made. It talks to the worker's oracle on the Unix socket
# $ORACLE_SOCKET (default /home/.oracle/oracle.sock) with curl, or with python3 where curl is missing.
set -u

file="${1:-${SUBMISSION_DIR:-/home/submission}/submission.csv}"
socket="${ORACLE_SOCKET:-/home/.oracle/oracle.sock}"

if [ ! -f "$file" ]; then
  echo "validate_submission.sh: no file at $file" >&2
  exit 2
fi
if [ ! -S "$socket" ]; then
  echo "validate_submission.sh: no format-check socket at $socket (ORACLE_SOCKET)" >&2
  exit 2
fi

if command -v curl >/dev/null 2>&1; then
  answer="$(curl --silent --show-error --unix-socket "$socket" --max-time 600 \
    -H "Content-Type: text/csv" --data-binary "@$file" -w '\n%{http_code}' http://oracle/validate)" || {
    echo "validate_submission.sh: the format check could not be made (curl failed)" >&2
    exit 2
  }
  status="${answer##*$'\n'}"
  body="${answer%$'\n'*}"
  echo "$body"
  [ "$status" = 200 ] || exit 2
  case "$body" in
    *'"valid": true'*) exit 0 ;;
    *'"valid": false'*) exit 1 ;;
    *) exit 2 ;;
  esac
fi

if command -v python3 >/dev/null 2>&1; then
  exec python3 - "$socket" "$file" <<'PYTHON'
import http.client
import json
import socket
import sys


class UnixConnection(http.client.HTTPConnection):
    def __init__(self, path):
        super().__init__("oracle", timeout=600)
        self.path = path

    def connect(self):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(self.timeout)
        self.sock.connect(self.path)


socket_path, file_path = sys.argv[1], sys.argv[2]
try:
    with open(file_path, "rb") as source:
        body = source.read()
    connection = UnixConnection(socket_path)
    connection.request("POST", "/validate", body=body, headers={"Content-Type": "text/csv"})
    response = connection.getresponse()
    text = response.read().decode("utf-8", "replace")
except OSError as exc:
    print(f"validate_submission.sh: the format check could not be made: {exc}", file=sys.stderr)
    sys.exit(2)
print(text)
try:
    valid = json.loads(text).get("valid")
except ValueError:
    valid = None
if response.status != 200 or valid is None:
    sys.exit(2)
sys.exit(0 if valid is True else 1)
PYTHON
fi

echo "validate_submission.sh: neither curl nor python3 is installed, so the format check cannot be made" >&2
exit 2
