"""Evidence levels on the board: a badge on each row, a filter by minimum level kept in the URL, the level in
the API and the exports, the Markdown legend."""

import csv
import io
import json
import re

import pytest
from django.utils import timezone

from grading.models import Registration, Submission
from leaderboard import services
from tests.leaderboard.builders import entry, split_members

pytestmark = pytest.mark.django_db


def agents(html: str) -> list[str]:
    body = html.split('id="board"', 1)[1].split("</table>", 1)[0] if 'id="board"' in html else ""
    return re.findall(r'<a href="/leaderboard/entries/\d+/">([^<]+)</a>', body)


@pytest.fixture
def levels(team):
    low = split_members("low")
    entry(team, agent="Hosted", origin=Submission.Origin.HOSTED, medals={s: low[:2] for s in range(3)})
    registered = entry(team, agent="Registered", medals={s: low[:3] for s in range(3)}, refresh=False)
    registration = Registration.objects.create(
        team=team,
        agent_name="Registered",
        agent_version="1",
        split="low",
        seeds=3,
        nonce="a" * 32,
        deadline=timezone.now(),
    )
    Submission.objects.filter(pk=registered.pk).update(registration=registration)
    services.board_refresh(submission_ids=[registered.pk])
    entry(team, agent="Uploaded", medals={s: low[:4] for s in range(3)})
    entry(
        team, agent="Imported", origin=Submission.Origin.IMPORT, report_only=True, medals={s: low[:5] for s in range(3)}
    )


def test_every_level_is_shown_by_default_each_row_with_its_badge(client, levels):
    html = client.get("/leaderboard/?board=all&tier=low").content.decode()
    assert sorted(agents(html)) == ["Hosted", "Imported", "Registered", "Uploaded"]
    badges = re.findall(r'<td class="col-verified"><span class="badge level[^"]*" data-level="(\w+)"', html)
    assert sorted(badges) == ["registered", "reported", "reported", "verified"]


def test_the_minimum_level_filter_is_kept_in_the_url(client, levels):
    html = client.get("/leaderboard/?board=all&tier=low&level=registered").content.decode()
    assert sorted(agents(html)) == ["Hosted", "Registered"]
    assert '<option value="registered" selected>' in html
    assert "level=registered" in html.split('id="export-csv"', 1)[0].rsplit("href=", 1)[1]
    html = client.get("/leaderboard/?board=all&tier=low&level=verified").content.decode()
    assert agents(html) == ["Hosted"]


def test_an_unknown_level_is_named_in_the_error(client, levels):
    response = client.get("/leaderboard/?level=gold")
    assert response.status_code == 400
    assert "level must be one of , reported, registered, audited, verified" in response.content.decode()
    api = client.get("/api/v1/leaderboard/?level=gold")
    assert api.status_code == 400 and api.json()["error"]["details"] == {"field": "level"}


def test_the_api_carries_the_level_and_filters_by_it(client, levels):
    rows = client.get("/api/v1/leaderboard/?board=all&tier=low").json()["rows"]
    assert {row["agent"]: row["level"] for row in rows} == {
        "Hosted": "verified",
        "Registered": "registered",
        "Uploaded": "reported",
        "Imported": "reported",
    }
    rows = client.get("/api/v1/leaderboard/?board=all&tier=low&level=registered").json()["rows"]
    assert sorted(row["agent"] for row in rows) == ["Hosted", "Registered"]


def test_the_exports_carry_the_level_and_the_markdown_gives_the_legend(client, levels):
    rows = list(csv.DictReader(io.StringIO(client.get("/leaderboard/export.csv?board=all&tier=low").content.decode())))
    assert {row["agent"]: row["level"] for row in rows}["Registered"] == "registered"
    body = json.loads(client.get("/leaderboard/export.json?board=all&tier=low&level=verified").content)
    assert [(row["agent"], row["level"]) for row in body["rows"]] == [("Hosted", "verified")]
    markdown = client.get("/leaderboard/export.md?board=all&tier=low").content.decode()
    assert "| Evidence |" in markdown
    assert "| verified |" in markdown and "| registered |" in markdown
    assert "- **audited**: pre-registered, complete logs, and a passed random audit re-run on the portal's workers" in (
        markdown
    )


def test_the_entry_page_says_how_to_reach_the_next_level(client, levels):
    from leaderboard.models import Entry

    def page(agent: str) -> str:
        return client.get(f"/leaderboard/entries/{Entry.objects.get(agent=agent).pk}/").content.decode()

    uploaded = page("Uploaded")
    assert 'id="entry-level" data-level="reported"' in uploaded
    assert "Register the run group before running (mleportal register)" in uploaded
    registered = page("Registered")
    assert 'data-level="registered"' in registered and "agent.image in the manifest" in registered
    assert "This is the strongest level." in page("Hosted")
    assert "imported from MLE-bench" in page("Imported")
