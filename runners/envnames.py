"""Which environment variable names a team may give its hosted agent: the one place that says so. No Django, so
the server (the form's and the API's validation) and the GPU worker (every backend, again, before it starts an
agent) share one rule.

An allow-list: a name is accepted only when it matches one of

- the model providers' API keys and tokens (PROVIDER_KEYS: OPENAI_API_KEY, ANTHROPIC_API_KEY, HF_TOKEN, ...),
- AGENT_* (the team's own settings for its agent: AGENT_MODEL, AGENT_STEPS, ...),
- what the operator adds with HOSTED_ENV_ALLOW: names or NAME_* prefixes separated by commas, read from the
  environment by the portal and by each worker (set it on both; a worker that lacks a name refuses the task).

and is not one the runner sets (RESERVED), nor one that steers a program before the agent's own code runs
(REFUSED: the loader, the shell, an interpreter, git, pip, proxies, the GPU runtime). REFUSED wins over every
allowance, the operator's included. The GPU variables (NVIDIA_VISIBLE_DEVICES, CUDA_VISIBLE_DEVICES) are the
worker's alone: it picks the devices. Settings the allow-list has no room for belong in the agent's image or its
start.sh, where they run inside the sandbox as the agent's own code.

Other helpers (an audit run's seed variable) add their names here, to RESERVED or to the allow-list.
"""

import logging
import os
import re
from collections.abc import Mapping

log = logging.getLogger(__name__)

NAME = re.compile(r"[A-Z][A-Z0-9_]{0,63}")

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

# The model providers whose <PROVIDER>_API_KEY a team may give.
PROVIDERS = (
    "OPENAI", "ANTHROPIC", "GEMINI", "GOOGLE", "MISTRAL", "COHERE", "GROQ", "TOGETHER", "DEEPSEEK", "XAI",
    "OPENROUTER", "FIREWORKS", "PERPLEXITY", "AZURE_OPENAI", "HUGGINGFACE", "REPLICATE", "VOYAGE", "WANDB",
)  # fmt: skip
PROVIDER_KEYS = frozenset(
    {f"{provider}_API_KEY" for provider in PROVIDERS}
    | {"HF_TOKEN", "HUGGING_FACE_HUB_TOKEN", "OPENAI_ORG_ID", "OPENAI_PROJECT_ID", "ANTHROPIC_AUTH_TOKEN"}
)
TEAM_PREFIXES = ("AGENT_",)
OPERATOR_SETTING = "HOSTED_ENV_ALLOW"
_OPERATOR_ENTRY = re.compile(r"[A-Z][A-Z0-9_]{0,63}\*?")

# (what it steers, the names as a pattern matched from the start of the name, shown as): refused whatever allows
# them, with this reason.
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
            r"LUA_|TCLLIBPATH$|R_PROFILE|R_ENVIRON|JULIA_|PHPRC$|OPENSSL_|DOTNET_|CORECLR_"
        ),
        "PYTHON*, PERL5*, PERLLIB, PERL_*, RUBY*, GEM_*, NODE_*, NPM_CONFIG_*, JAVA_TOOL_OPTIONS, "
        "JDK_JAVA_OPTIONS, CLASSPATH, LUA_*, TCLLIBPATH, R_PROFILE*, R_ENVIRON*, JULIA_*, OPENSSL_*, DOTNET_*",
    ),
    (
        "git, a pager or a package installer",
        re.compile(r"GIT_|LESS|PAGER$|EDITOR$|VISUAL$|PIP_|UV_|CONDA_|MAMBA_|POETRY_|SSH_"),
        "GIT_*, LESS*, PAGER, EDITOR, VISUAL, PIP_*, UV_*, CONDA_*, POETRY_*, SSH_*",
    ),
    (
        "where the agent's traffic goes",
        re.compile(r"(HTTP|HTTPS|FTP|ALL|NO|SOCKS)_PROXY$|CURL_CA_BUNDLE$|SSL_CERT_|REQUESTS_CA_BUNDLE$"),
        "HTTP_PROXY, HTTPS_PROXY, ALL_PROXY, NO_PROXY, CURL_CA_BUNDLE, SSL_CERT_*, REQUESTS_CA_BUNDLE",
    ),
)
# The worker's alone: it gives the agent the GPUs it has for the task.
_GPU = re.compile(r"NVIDIA_|CUDA_VISIBLE_DEVICES$|GPU_DEVICE_ORDINAL$|ROCR_VISIBLE_DEVICES$|HIP_VISIBLE_DEVICES$")


class EnvRefused(ValueError):
    """A team variable a worker will not pass on; the message names it and says why."""


def operator_allowed(environ: Mapping[str, str] | None = None) -> tuple[str, ...]:
    """The names and NAME_* prefixes the operator adds with HOSTED_ENV_ALLOW; ValueError naming a bad entry."""
    raw = (os.environ if environ is None else environ).get(OPERATOR_SETTING, "")
    entries = tuple(entry.strip() for entry in raw.split(",") if entry.strip())
    for entry in entries:
        if not _OPERATOR_ENTRY.fullmatch(entry):
            raise ValueError(
                f"{OPERATOR_SETTING}: {entry!r} is not a variable name or a NAME_* prefix (upper-case letters, "
                "digits and _, e.g. HOSTED_ENV_ALLOW=WANDB_PROJECT,MYLAB_*)"
            )
    return entries


def _operator_allows(name: str, entries: tuple[str, ...]) -> bool:
    return any(name.startswith(entry[:-1]) if entry.endswith("*") else name == entry for entry in entries)


def refusal(name: str, environ: Mapping[str, str] | None = None) -> str | None:
    """Why a team may not give this variable, or None when it may (its value is judged elsewhere). environ holds
    HOSTED_ENV_ALLOW (default: this process's environment)."""
    if not isinstance(name, str) or not NAME.fullmatch(name):
        return "a variable's name is an upper-case letter, then upper-case letters, digits and _ (e.g. OPENAI_API_KEY)"
    if name in RESERVED:
        return "is set by the runner for every agent and cannot be given"
    if _GPU.match(name):
        return "is the worker's alone: it gives the agent the GPUs the run asked for (gpus_per_run)"
    for what, pattern, shown in _STEERING:
        if pattern.match(name):
            return (
                f"steers {what} before the agent's own code runs ({shown}), so a team cannot give it; "
                "set it in the agent's image or its start.sh instead"
            )
    if name in PROVIDER_KEYS or name.startswith(TEAM_PREFIXES):
        return None
    try:
        if _operator_allows(name, operator_allowed(environ)):
            return None
    except ValueError as exc:
        log.error("%s", exc)
    return (
        "is not a name a team may give: model providers' API keys and tokens (OPENAI_API_KEY, ANTHROPIC_API_KEY, "
        "HF_TOKEN, ...) and AGENT_* are, plus what this portal's operator adds (HOSTED_ENV_ALLOW); put other "
        "settings in the agent's image or its start.sh, or name them AGENT_*"
    )


def team_variables(env: Mapping[str, str]) -> dict[str, str]:
    """The team's variables a backend passes on; EnvRefused, naming the first that refusal() refuses or whose value
    is not text free of NUL. The server refused them already: a worker does not rely on it."""
    kept: dict[str, str] = {}
    for name, value in env.items():
        why = refusal(name) if isinstance(name, str) else "a variable's name is text"
        if why is None and not (isinstance(value, str) and "\x00" not in value):
            why = "its value must be text without NUL bytes"
        if why is not None:
            log.warning("team variable %r refused: %s", str(name)[:80], why)
            raise EnvRefused(f"env.{str(name)[:80]}: {why}")
        kept[name] = value
    return kept
