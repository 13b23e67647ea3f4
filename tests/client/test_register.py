"""mleportal register: the JSON it sends, what it prints, and the portal's refusals shown as they are."""

import json

import pytest

TOKEN = "t0k3n-abc"
ANSWER = {"id": 12, "nonce": "ab" * 16, "deadline": "2026-12-20T03:00:00Z", "seeds": 3}


def run(mleportal, *args: str) -> int:
    return mleportal.main(list(args))


def test_it_posts_the_registration_and_prints_id_nonce_and_deadline(mleportal, portal, capsys):
    portal.answer("POST", "/api/v1/registrations/", (201, ANSWER))
    image = "sha256:" + "0f" * 32
    code = run(
        mleportal, "register", "--agent", "aide", "--version", "1.2", "--split", "low", "--seeds", "3",
        "--image", image, "--url", portal.url, "--token", TOKEN,
    )  # fmt: skip
    assert code == 0
    (request,) = portal.requests
    assert request["path"] == "/api/v1/registrations/"
    assert request["headers"]["Content-Type"] == "application/json"
    assert request["headers"]["Authorization"] == f"Token {TOKEN}"
    assert json.loads(request["body"]) == {
        "agent": {"name": "aide", "version": "1.2"},
        "seeds": 3,
        "split": "low",
        "image": image,
    }
    out = capsys.readouterr()
    assert out.out.splitlines() == ["id: 12", f"nonce: {'ab' * 16}", "deadline: 2026-12-20T03:00:00Z"]
    assert '"registration": 12' in out.err


def test_competitions_are_sent_as_a_list(mleportal, portal):
    portal.answer("POST", "/api/v1/registrations/", (201, ANSWER))
    args = ["--competitions", "a-b, c-d", "--seeds", "2", "--url", portal.url, "--token", TOKEN]
    assert run(mleportal, "register", "--agent", "x", "--version", "1", *args) == 0
    assert json.loads(portal.requests[0]["body"])["competitions"] == ["a-b", "c-d"]


def test_the_portal_s_refusal_is_printed(mleportal, portal, capsys):
    refusal = {"error": {"code": "invalid", "message": "split must be one of low, medium", "details": {}}}
    portal.answer("POST", "/api/v1/registrations/", (400, refusal))
    args = ["--split", "tiny", "--seeds", "3", "--url", portal.url, "--token", TOKEN]
    assert run(mleportal, "register", "--agent", "x", "--version", "1", *args) != 0
    assert "split must be one of low, medium" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("args", "shown"), [(["--split", "low", "--seeds", "0"], "--seeds must be 1"), (["--seeds", "3"], "--split low")]
)
def test_bad_arguments_are_refused_before_any_request(mleportal, portal, capsys, args, shown):
    assert run(mleportal, "register", "--agent", "x", "--version", "1", *args, "--url", portal.url, "--token", TOKEN)
    assert shown in capsys.readouterr().err and portal.requests == []
