"""A real Docker engine for the runner tests: the client, the example agent's image, misbehaving variants of it.

scripts/test starts the engine (scripts/dockerd) and builds the image (scripts/build_agent_image) and exports
DOCKER_HOST. Without DOCKER_HOST the Docker tests skip, saying how to run them; with a DOCKER_HOST that does
not answer they fail, because then the engine the run was promised is broken, which a skip would hide.
"""

import hashlib
import io
import os
import secrets
import tarfile
import time
from collections.abc import Callable, Iterator

import docker
import pytest
from docker.models.containers import Container

from runners.worker.backends.docker import AGENT_DIR

AGENT_IMAGE = "example-agent:latest"
VARIANT_REPOSITORY = "portal-test-agent"

MakeAgentImage = Callable[[str], str]


@pytest.fixture(scope="session")
def docker_client() -> Iterator[docker.DockerClient]:
    if not os.environ.get("DOCKER_HOST"):
        pytest.skip("run through scripts/test, which starts dockerd")
    try:
        client = docker.from_env()
        client.ping()
    except Exception as error:
        pytest.fail(f"DOCKER_HOST={os.environ['DOCKER_HOST']} does not answer: {error}", pytrace=False)
    yield client
    client.close()


@pytest.fixture(scope="session")
def agent_image(docker_client: docker.DockerClient) -> str:
    """The example agent's image, which scripts/build_agent_image made."""
    try:
        docker_client.images.get(AGENT_IMAGE)
    except docker.errors.ImageNotFound:
        pytest.fail(f"{AGENT_IMAGE} is missing: scripts/build_agent_image makes it", pytrace=False)
    return AGENT_IMAGE


def put_file(container: Container, path: str, content: bytes, *, mode: int = 0o755) -> None:
    """Write one file into a container (started or not) through the engine's archive API."""
    folder, name = path.rsplit("/", 1)
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as archive:
        info = tarfile.TarInfo(name)
        info.size = len(content)
        info.mode = mode
        info.mtime = int(time.time())
        archive.addfile(info, io.BytesIO(content))
    container.put_archive(folder or "/", buffer.getvalue())


@pytest.fixture(scope="session")
def make_agent_image(docker_client: docker.DockerClient, agent_image: str) -> Iterator[MakeAgentImage]:
    """make_agent_image(script) -> an image of the example agent's file system whose command is that bash script.

    Made by committing a container that was never started (no build, no RUN step, no network), tagged with the
    script's hash so that the same agent is made once per session; the images go at the end of the session.
    """
    made: set[str] = set()
    # Test runs sharing the engine each remove their own images at the end, so the tag names the session too.
    session = secrets.token_hex(3)

    def make(script: str) -> str:
        tag = f"{hashlib.sha256(script.encode()).hexdigest()[:12]}-{session}"
        image = f"{VARIANT_REPOSITORY}:{tag}"
        if image in made:
            return image
        container = docker_client.containers.create(agent_image, network_mode="none")
        try:
            put_file(container, f"{AGENT_DIR}/misbehave.sh", script.encode())
            container.commit(
                repository=VARIANT_REPOSITORY,
                tag=tag,
                changes=[f'CMD ["bash","{AGENT_DIR}/misbehave.sh"]'],
            )
        finally:
            container.remove(force=True)
        made.add(image)
        return image

    yield make
    for image in made:
        try:
            docker_client.images.remove(image, force=True)
        except docker.errors.APIError:
            pass
