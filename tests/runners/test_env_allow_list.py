"""The env allow-list at request time: the API and the form refuse issue 32's variables naming them."""

import pytest

from portal.accounts.selectors import teams_for_user
from runners.models import HostedRun, HostedTask
from tests.runners.builders import COMPETITION, SECRET
from tests.runners.test_hosted_run_api import _create, registry  # noqa: F401

pytestmark = pytest.mark.django_db

REFUSED = ["GIT_SSH_COMMAND", "DOTNET_STARTUP_HOOKS", "LESSOPEN", "HTTP_PROXY", "HTTPS_PROXY", "PIP_INDEX_URL",
           "NVIDIA_VISIBLE_DEVICES", "CUDA_VISIBLE_DEVICES", "MODE"]  # fmt: skip


@pytest.mark.parametrize("name", REFUSED)
def test_the_api_refuses_a_variable_off_the_list_naming_it_and_leaves_nothing(registry, alice_api, name):  # noqa: F811
    response = _create(alice_api, env={"OPENAI_API_KEY": SECRET, name: "x"})
    assert response.status_code == 400, response.content
    error = response.json()["error"]
    assert error["details"]["field"] == f"env.{name}" and error["message"].startswith(f"env.{name}: ")
    assert SECRET not in response.content.decode()
    assert not HostedRun.objects.exists() and not HostedTask.objects.exists()


def test_the_api_takes_an_operators_name(registry, alice_api, monkeypatch):  # noqa: F811
    monkeypatch.setenv("HOSTED_ENV_ALLOW", "MODE,LAB_*")
    response = _create(alice_api, env={"MODE": "fast", "LAB_SEED": "1", "AGENT_X": "y"})
    assert response.status_code == 202, response.content


def test_the_form_refuses_it_naming_the_line_and_the_variable(registry, client, alice):  # noqa: F811
    client.force_login(alice)
    response = client.post(
        "/hosted-runs/",
        {
            "team": teams_for_user(user=alice).first().pk,
            "image": "example-agent:latest",
            "split": "low",
            "seeds": 1,
            "time_limit_hours": 1,
            "gpus_per_run": 0,
            "env": f"OPENAI_API_KEY={SECRET}\nGIT_SSH_COMMAND=sh -c id",
            "competitions": COMPETITION,
        },
    )
    page = response.content.decode()
    assert response.status_code == 400 and "line 2: GIT_SSH_COMMAND steers git" in page
    assert SECRET not in page and not HostedRun.objects.exists()
