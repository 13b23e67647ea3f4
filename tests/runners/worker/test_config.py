"""The worker's configuration from the environment: defaults, and loud failures that name the variable."""

from pathlib import Path

import pytest

from runners.worker.config import FILESYSTEM_TRANSPORT, REPO_DIR, ConfigError, WorkerConfig, broker_settings

BASE = {"PORTAL_URL": "https://portal.example.org/", "PORTAL_WORKER_TOKEN": "t0ken"}


def test_it_has_a_default_for_everything_but_the_portal_and_its_token() -> None:
    config = WorkerConfig.from_env({**BASE, "PORTAL_DATA_DIR": "/tmp/portal-data"})

    assert config.portal_url == "https://portal.example.org"
    assert config.backend == "process"
    assert config.work_dir == Path("/tmp/portal-data/gpu-worker")
    assert (config.gpus, config.gpu_model, config.slots, config.poll_seconds) == (0, "", 1, 0.25)
    assert config.cpus >= 1
    assert config.memory_gb > 0
    assert config.agents_dir == REPO_DIR / "runners" / "agents"
    assert (config.process_sandbox, config.agent_uid) == ("bwrap", 60100)  # sandboxed unless the operator opts out
    assert config.portal_wait_seconds == 120


def test_its_capacity_is_the_register_body() -> None:
    env = {**BASE, "RUNNER_WORK_DIR": "/tmp/" + "w" * 200, "RUNNER_GPUS": "2", "RUNNER_GPU_MODEL": "H100",
           "RUNNER_GPU_MEMORY_GB": "80", "RUNNER_CPUS": "16", "RUNNER_MEMORY_GB": "128", "RUNNER_SLOTS": "2",
           "RUNNER_BACKEND": "docker"}  # fmt: skip

    capacity = WorkerConfig.from_env(env).capacity()

    assert {key: value for key, value in capacity.items() if key != "version"} == {
        "gpus": 2, "gpu_model": "H100", "gpu_memory_gb": 80.0, "cpus": 16.0, "memory_gb": 128.0, "slots": 2,
        "backend": "docker", "sandbox": "",
    }  # fmt: skip
    assert isinstance(capacity["version"], str)
    process = WorkerConfig.from_env({**env, "RUNNER_BACKEND": "process", "RUNNER_PROCESS_SANDBOX": "off"})
    assert process.capacity()["sandbox"] == "off"  # the form tells teams what a run gets there


def test_it_reads_the_token_from_a_file(tmp_path: Path) -> None:
    (tmp_path / "token").write_text("from-a-file\n")
    env = {"PORTAL_URL": "http://p", "PORTAL_WORKER_TOKEN_FILE": str(tmp_path / "token"), "RUNNER_WORK_DIR": "/tmp/w"}

    assert WorkerConfig.from_env(env).token == "from-a-file"


@pytest.mark.parametrize(
    ("variable", "value", "message"),
    [
        ("RUNNER_GPUS", "two", "RUNNER_GPUS='two' is not an integer"),
        ("RUNNER_GPUS", "-1", "RUNNER_GPUS='-1' must be at least 0"),
        ("RUNNER_SLOTS", "0", "RUNNER_SLOTS='0' must be at least 1"),
        ("RUNNER_POLL_SECONDS", "fast", "RUNNER_POLL_SECONDS='fast' is not a number"),
        ("RUNNER_PORTAL_WAIT_SECONDS", "-5", "RUNNER_PORTAL_WAIT_SECONDS='-5' must be at least 0.0"),
        ("RUNNER_BACKEND", "podman", "RUNNER_BACKEND='podman' must be one of process, docker"),
        ("RUNNER_PROCESS_SANDBOX", "none", "RUNNER_PROCESS_SANDBOX='none' must be one of bwrap, off"),
        ("RUNNER_PROCESS_AGENT_UID", "0", "RUNNER_PROCESS_AGENT_UID='0' must be at least 1"),
        ("PORTAL_URL", "portal.example.org", "PORTAL_URL='portal.example.org'"),
        ("PORTAL_WORKER_TOKEN", "", "PORTAL_WORKER_TOKEN is not set"),
        ("PORTAL_WORKER_TOKEN_FILE", "/no/such/file", "PORTAL_WORKER_TOKEN_FILE='/no/such/file' cannot be read"),
    ],
)
def test_a_bad_value_fails_loudly_naming_the_variable(variable: str, value: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message.replace("(", r"\(").replace("?", r"\?")):
        WorkerConfig.from_env({**BASE, "RUNNER_WORK_DIR": "/tmp/w", variable: value})


@pytest.mark.parametrize("backend", ["docker", "process"])
def test_a_long_work_dir_is_fine_whatever_the_backend(backend: str) -> None:
    env = {**BASE, "RUNNER_WORK_DIR": "/tmp/" + "x" * 200, "RUNNER_BACKEND": backend}

    assert WorkerConfig.from_env(env).work_dir == Path("/tmp/" + "x" * 200)


def test_the_broker_is_celery_broker_url_then_redis_url() -> None:
    assert broker_settings({"CELERY_BROKER_URL": "redis://a/1", "REDIS_URL": "redis://b/2"}) == {
        "broker_url": "redis://a/1"
    }
    assert broker_settings({"REDIS_URL": "redis://b/2"}) == {"broker_url": "redis://b/2"}


def test_without_a_broker_url_it_uses_the_portals_filesystem_broker_folders(tmp_path: Path) -> None:
    settings = broker_settings({"PORTAL_DATA_DIR": str(tmp_path)})

    broker = tmp_path.resolve() / "broker"
    assert settings["broker_url"] == "filesystem://"
    assert settings["broker_transport"] == FILESYSTEM_TRANSPORT  # atomic writes and claims
    assert settings["worker_enable_remote_control"] is False  # its broadcasts are files every worker touches
    assert settings["broker_transport_options"] == {
        "data_folder_in": str(broker / "queue"),
        "data_folder_out": str(broker / "queue"),
        "processed_folder": str(broker / "processed"),
        "control_folder": str(broker / "control"),
        "store_processed": False,
    }
    assert (broker / "queue").is_dir() and (broker / "control").is_dir()
    elsewhere = broker_settings({"PORTAL_DATA_DIR": str(tmp_path), "RUNNER_BROKER_DIR": str(tmp_path / "b")})
    assert elsewhere["broker_transport_options"]["data_folder_in"] == str(tmp_path.resolve() / "b" / "queue")


def test_a_redis_unix_socket_is_named_as_celery_names_it() -> None:
    assert broker_settings({"REDIS_URL": "unix:///data/redis.sock"}) == {
        "broker_url": "redis+socket:///data/redis.sock"
    }
