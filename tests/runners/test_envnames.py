"""Which variable names a team may give its hosted agent (runners/envnames.py), and that both backends strip
the others again whatever the server let through."""

import pytest

from runners.envnames import refusal, team_variables
from runners.worker.backends import process
from runners.worker.backends.base import RunSpec

STEERING = [
    "BASH_ENV", "ENV", "SHELLOPTS", "BASHOPTS", "PS4", "PS0", "IFS", "PROMPT_COMMAND", "BASH_FUNC_X", "BASH_XTRACEFD",
    "BASH_LOADABLES_PATH", "CDPATH", "GLOBIGNORE", "LD_PRELOAD", "LD_LIBRARY_PATH", "LD_AUDIT", "PYTHONPATH",
    "PYTHONSTARTUP", "PYTHONHOME", "PYTHONWARNINGS", "PERL5OPT", "PERL5LIB", "PERLLIB", "RUBYOPT", "RUBYLIB",
    "NODE_OPTIONS", "NODE_PATH", "JAVA_TOOL_OPTIONS", "JDK_JAVA_OPTIONS", "CLASSPATH", "GCONV_PATH",
    "GLIBC_TUNABLES", "MALLOC_CHECK_", "LOCPATH", "NLSPATH", "HOSTALIASES", "OPENSSL_CONF", "R_PROFILE_USER",
]  # fmt: skip
MALFORMED = ["BASH_FUNC_x%%", "lower", "_JAVA_OPTIONS", "_", "1ABC", "A-B", "A B", "É", "A" * 65, ""]
ALLOWED = ["OPENAI_API_KEY", "HF_TOKEN", "MODE", "CUDA_LAUNCH_BLOCKING", "WANDB_MODE", "LANG", "LC_ALL", "ENVIRONMENT",
           "MY_PYTHON_FLAG", "IFS_URL", "NPROC", "TOKENIZERS_PARALLELISM"]  # fmt: skip


@pytest.mark.parametrize("name", STEERING)
def test_names_that_steer_the_shell_loader_or_an_interpreter_are_refused_and_say_why(name: str) -> None:
    why = refusal(name)
    assert why is not None and why.startswith("steers ") and "start.sh" in why


@pytest.mark.parametrize("name", MALFORMED)
def test_names_outside_the_allow_pattern_are_refused(name: str) -> None:
    assert refusal(name) is not None and "upper-case letter" in (refusal(name) or "")


@pytest.mark.parametrize("name", ["PATH", "HOME", "DATA_DIR", "ORACLE_SOCKET"])
def test_the_runners_own_names_are_refused(name: str) -> None:
    assert "set by the runner" in (refusal(name) or "")


@pytest.mark.parametrize("name", ALLOWED)
def test_ordinary_names_pass(name: str) -> None:
    assert refusal(name) is None


def test_team_variables_keep_only_what_a_team_may_give() -> None:
    env = {name: "x" for name in STEERING + MALFORMED} | {"OPENAI_API_KEY": "sk", "NUL": "a\x00b", "HOME": "/"}
    assert team_variables(env) == {"OPENAI_API_KEY": "sk"}


def _spec(env: dict[str, str]) -> RunSpec:
    return RunSpec(1, 1, "example-agent:latest", "demo-comp", env, 60, 0, 1, 1, 1, False, 1000)


def test_both_backends_strip_them_again() -> None:
    from runners.worker.backends.docker import agent_environment

    env = {"BASH_ENV": "$(id)", "LD_PRELOAD": "/x.so", "PYTHONPATH": "/x", "KEPT": "yes"}
    for given in (agent_environment(_spec(env)), process.sandbox_env(_spec(env))):
        assert given["KEPT"] == "yes"
        assert not {"BASH_ENV", "LD_PRELOAD", "PYTHONPATH"} & set(given)
