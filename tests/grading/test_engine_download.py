"""The portal serves the engine's wheel to anyone: GET /api/v1/engine/ names it, /downloads/engine/<file> is it."""

import hashlib

import pytest

from grading.engine import ENGINE_VERSION


@pytest.fixture
def data_dir(settings, tmp_path):
    settings.DATA_DIR = tmp_path  # a data folder with no wheel yet: the first request builds it
    return tmp_path


@pytest.mark.django_db
def test_anyone_gets_the_wheel_the_api_names_and_its_bytes_have_the_sha256_it_states(client, data_dir):
    described = client.get("/api/v1/engine/")

    assert described.status_code == 200, described.content
    body = described.json()
    assert list(body) == ["version", "wheel", "url", "sha256"]
    assert body["version"] == ENGINE_VERSION
    assert body["wheel"] == f"mle_portal_engine-{ENGINE_VERSION}-py3-none-any.whl"
    assert body["url"] == f"http://testserver/downloads/engine/{body['wheel']}"
    download = client.get(f"/downloads/engine/{body['wheel']}")
    assert download.status_code == 200 and download["Content-Type"] == "application/octet-stream"
    data = b"".join(download.streaming_content)
    assert hashlib.sha256(data).hexdigest() == body["sha256"] == download["X-Content-SHA256"]
    assert data[:2] == b"PK" and (data_dir / "engine" / body["wheel"]).read_bytes() == data
    assert client.head(f"/downloads/engine/{body['wheel']}").status_code == 200


@pytest.mark.django_db
@pytest.mark.parametrize(
    "name",
    [
        "mle_portal_engine-1999.1-py3-none-any.whl",  # another version: not this portal's engine
        "mle_portal_engine-{version}-py3-none-any.whl.json",  # the record beside the wheel
        ".lock",
        "..%2Fsecret_key",
        "secret_key",
    ],
)
def test_nothing_else_in_the_data_folder_is_served(client, data_dir, name):
    client.get("/api/v1/engine/")  # the wheel and its record exist
    (data_dir / "secret_key").write_text("do not serve")

    response = client.get(f"/downloads/engine/{name.format(version=ENGINE_VERSION)}")

    assert response.status_code == 404


@pytest.mark.django_db
def test_the_wheel_is_not_built_again_on_every_request(client, data_dir):
    first = client.get("/api/v1/engine/").json()
    wheel = data_dir / "engine" / first["wheel"]
    stamp = wheel.stat().st_mtime_ns

    assert client.get("/api/v1/engine/").json() == first
    assert wheel.stat().st_mtime_ns == stamp
    assert client.post("/api/v1/engine/").status_code == 405
