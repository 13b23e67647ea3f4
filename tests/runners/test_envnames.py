"""Which variable names a team may give its hosted agent (runners/envnames.py, an allow-list), and that both
backends refuse the others again, naming them, whatever the server let through."""

import pytest

from runners.envnames import EnvRefused, operator_allowed, refusal, team_variables
from runners.worker.backends import process
from runners.worker.backends.base import BackendError, RunSpec

STEERING = [
    "BASH_ENV", "ENV", "SHELLOPTS", "BASHOPTS", "PS4", "PS0", "IFS", "PROMPT_COMMAND", "BASH_FUNC_X", "BASH_XTRACEFD",
    "BASH_LOADABLES_PATH", "CDPATH", "GLOBIGNORE", "LD_PRELOAD", "LD_LIBRARY_PATH", "LD_AUDIT", "PYTHONPATH",
    "PYTHONSTARTUP", "PYTHONHOME", "PYTHONWARNINGS", "PERL5OPT", "PERL5LIB", "PERLLIB", "RUBYOPT", "RUBYLIB",
    "NODE_OPTIONS", "NODE_PATH", "JAVA_TOOL_OPTIONS", "JDK_JAVA_OPTIONS", "CLASSPATH", "GCONV_PATH",
    "GLIBC_TUNABLES", "MALLOC_CHECK_", "LOCPATH", "NLSPATH", "HOSTALIASES", "OPENSSL_CONF", "R_PROFILE_USER",
    # issue 32: accepted by the deny-list, refused now
    "GIT_SSH_COMMAND", "DOTNET_STARTUP_HOOKS", "LESSOPEN", "HTTP_PROXY", "HTTPS_PROXY", "PIP_INDEX_URL",
]  # fmt: skip
GPU = ["NVIDIA_VISIBLE_DEVICES", "CUDA_VISIBLE_DEVICES", "NVIDIA_DRIVER_CAPABILITIES"]
MALFORMED = ["BASH_FUNC_x%%", "lower", "_JAVA_OPTIONS", "_", "1ABC", "A-B", "A B", "É", "A" * 65, ""]
ALLOWED = ["OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY", "MISTRAL_API_KEY", "HF_TOKEN",
           "HUGGING_FACE_HUB_TOKEN", "AGENT_MODE", "AGENT_STEPS", "WANDB_API_KEY"]  # fmt: skip
NOT_LISTED = ["MODE", "CUDA_LAUNCH_BLOCKING", "LANG", "TOKENIZERS_PARALLELISM", "SOMEONE_API_KEY", "AWS_SECRET"]


@pytest.mark.parametrize("name", STEERING)
def test_names_that_steer_a_program_before_the_agent_are_refused_and_say_why(name: str) -> None:
    why = refusal(name)
    assert why is not None and why.startswith("steers ") and "start.sh" in why


@pytest.mark.parametrize("name", GPU)
def test_the_gpu_variables_are_the_workers_alone(name: str) -> None:
    assert "the worker's alone" in (refusal(name) or "")


@pytest.mark.parametrize("name", MALFORMED)
def test_names_outside_the_name_pattern_are_refused(name: str) -> None:
    assert refusal(name) is not None and "upper-case letter" in (refusal(name) or "")


@pytest.mark.parametrize("name", ["PATH", "HOME", "DATA_DIR", "ORACLE_SOCKET", "AGENT_DIR"])
def test_the_runners_own_names_are_refused(name: str) -> None:
    assert "set by the runner" in (refusal(name) or "")


@pytest.mark.parametrize("name", ALLOWED)
def test_provider_keys_and_agent_names_pass(name: str, monkeypatch) -> None:
    monkeypatch.delenv("HOSTED_ENV_ALLOW", raising=False)
    assert refusal(name) is None


@pytest.mark.parametrize("name", NOT_LISTED)
def test_a_name_not_on_the_list_is_refused_saying_what_is(name: str, monkeypatch) -> None:
    monkeypatch.delenv("HOSTED_ENV_ALLOW", raising=False)
    why = refusal(name) or ""
    assert "is not a name a team may give" in why and "AGENT_*" in why and "HOSTED_ENV_ALLOW" in why


def test_the_operator_adds_names_and_prefixes_but_never_a_refused_one(monkeypatch) -> None:
    monkeypatch.setenv("HOSTED_ENV_ALLOW", "MODE, LAB_*,GIT_SSH_COMMAND,HTTP_*,CUDA_VISIBLE_DEVICES")
    assert refusal("MODE") is None and refusal("LAB_SETTING") is None and refusal("LAB") is not None
    assert refusal("GIT_SSH_COMMAND", {}) is not None  # environ given: HOSTED_ENV_ALLOW unset there
    for name in ("GIT_SSH_COMMAND", "HTTP_PROXY", "CUDA_VISIBLE_DEVICES"):
        assert refusal(name) is not None, name


@pytest.mark.parametrize("raw", ["lower", "A,B C", "*", "LAB_*_X", "$(id)"])
def test_a_bad_operator_entry_is_an_error_naming_it(raw: str) -> None:
    with pytest.raises(ValueError, match="HOSTED_ENV_ALLOW"):
        operator_allowed({"HOSTED_ENV_ALLOW": raw})


def test_team_variables_refuse_naming_the_first_bad_one() -> None:
    assert team_variables({"OPENAI_API_KEY": "sk", "AGENT_X": "1"}) == {"OPENAI_API_KEY": "sk", "AGENT_X": "1"}
    for env in ({"OPENAI_API_KEY": "sk", "LESSOPEN": "|id"}, {"AGENT_X": "a\x00b"}, {"HOME": "/"}):
        with pytest.raises(EnvRefused, match=r"^env\."):
            team_variables(env)


def _spec(env: dict[str, str]) -> RunSpec:
    return RunSpec(1, 1, "example-agent:latest", "demo-comp", env, 60, 0, 1, 1, 1, False, 1000)


@pytest.mark.parametrize("name", ["BASH_ENV", "GIT_SSH_COMMAND", "CUDA_VISIBLE_DEVICES", "MODE"])
def test_both_backends_refuse_them_again_naming_the_variable(name: str) -> None:
    from runners.worker.backends.docker import agent_environment

    env = {name: "x", "AGENT_KEPT": "yes"}
    for build in (agent_environment, process.sandbox_env):
        with pytest.raises(BackendError, match=f"refuses the run's variables: env.{name}: "):
            build(_spec(env))
    assert agent_environment(_spec({"AGENT_KEPT": "yes"}))["AGENT_KEPT"] == "yes"
    assert process.sandbox_env(_spec({"AGENT_KEPT": "yes"}))["AGENT_KEPT"] == "yes"
