"""Which environment variable names a team may give its hosted agent; no Django, so the server (the request's
validation) and the GPU worker (every backend, again, before it starts an agent) share one rule.

A name is refused unless it fits ALLOWED, and refused again when it belongs to a family that steers an
interpreter, the shell or the dynamic loader before the agent's own code runs (BASH_ENV ran the team's shell
code as the worker's user before start.sh did; LD_PRELOAD, PYTHONPATH, NODE_OPTIONS and the like do the same for
their programs). Such settings belong in the agent's image or its start.sh, where they run inside the sandbox
as the agent's own code.
"""

import logging
import re
from collections.abc import Mapping

log = logging.getLogger(__name__)

ALLOWED = re.compile(r"[A-Z][A-Z0-9_]{0,63}")

# Set by the runner for every agent; a team cannot give them.
RESERVED = frozenset(
    {
        "COMPETITION_ID",
        "TIME_LIMIT_SECS",
        "DATA_DIR",
        "SUBMISSION_DIR",
        "LOGS_DIR",
        "CODE_DIR",
        "AGENT_DIR",
        "ORACLE_SOCKET",
        "VALIDATE_SUBMISSION",
        "PATH",
        "HOME",
    }
)

# (what it steers, the names as a pattern matched from the start of the name, shown as)
_STEERING: tuple[tuple[str, re.Pattern[str], str], ...] = (
    ("the dynamic loader", re.compile(r"LD_"), "LD_*"),
    (
        "the shell that runs start.sh",
        re.compile(
            r"BASH|ENV$|SHELLOPTS$|PS[0-4]$|PROMPT_COMMAND|IFS$|CDPATH$|GLOBIGNORE$|EXECIGNORE$|INPUTRC$|"
            r"ZDOTDIR$|KSH_|FPATH$"
        ),
        "BASH*, ENV, SHELLOPTS, PS0-PS4, PROMPT_COMMAND, IFS, CDPATH, GLOBIGNORE, INPUTRC, ZDOTDIR",
    ),
    (
        "the C library",
        re.compile(
            r"GCONV_PATH$|GLIBC_|MALLOC_|LOCPATH$|NLSPATH$|HOSTALIASES$|RES_OPTIONS$|LOCALDOMAIN$|GETCONF_DIR$|TZDIR$"
        ),
        "GCONV_PATH, GLIBC_*, MALLOC_*, LOCPATH, NLSPATH, HOSTALIASES, RES_OPTIONS, LOCALDOMAIN",
    ),
    (
        "an interpreter",
        re.compile(
            r"PYTHON|PERL5|PERLLIB$|PERL_|RUBY|GEM_|NODE_|NPM_CONFIG_|JAVA_TOOL_OPTIONS$|JDK_JAVA_OPTIONS$|CLASSPATH$|"
            r"LUA_|TCLLIBPATH$|R_PROFILE|R_ENVIRON|JULIA_|PHPRC$|OPENSSL_"
        ),
        "PYTHON*, PERL5*, PERLLIB, PERL_*, RUBY*, GEM_*, NODE_*, NPM_CONFIG_*, JAVA_TOOL_OPTIONS, "
        "JDK_JAVA_OPTIONS, CLASSPATH, LUA_*, TCLLIBPATH, R_PROFILE*, R_ENVIRON*, JULIA_*, OPENSSL_*",
    ),
)


def refusal(name: str) -> str | None:
    """Why a team may not give this variable, or None when it may (its value is judged elsewhere)."""
    if not ALLOWED.fullmatch(name):
        return "a variable's name is an upper-case letter, then upper-case letters, digits and _ (e.g. OPENAI_API_KEY)"
    if name in RESERVED:
        return "is set by the runner for every agent and cannot be given"
    for what, pattern, shown in _STEERING:
        if pattern.match(name):
            return (
                f"steers {what} before the agent's own code runs ({shown}), so a team cannot give it; "
                "set it in the agent's image or its start.sh instead"
            )
    return None


def team_variables(env: Mapping[str, str]) -> dict[str, str]:
    """The team's variables a backend passes on: those refusal() accepts, with text values free of NUL.

    The server refuses the others already; a worker does not rely on it, and drops (and logs, by name only)
    whatever slipped through.
    """
    kept: dict[str, str] = {}
    for name, value in env.items():
        if isinstance(name, str) and isinstance(value, str) and refusal(name) is None and "\x00" not in value:
            kept[name] = value
        else:
            log.warning("team variable %r dropped: a team cannot give it", str(name)[:80])
    return kept
