"""The evidence of an entry (its zip) and the entry's API: what they hold, that they agree with the board and its
API, that only published entries have them, and that no file of them holds the private answers."""

import hashlib
import io
import json
import tarfile
import zipfile

import pytest

from competitions.models import CompetitionPack
from competitions.selectors import pack_local_file
from grading.engine.ranking import tab_ranks
from grading.engine.report import REPORT_FIELDS
from grading.models import Run, Submission
from grading.services.submissions import submission_folder
from leaderboard import services
from leaderboard.models import BoardRow, Entry
from tests.leaderboard.builders import entry, split_members

pytestmark = pytest.mark.django_db


def download(client, url: str) -> zipfile.ZipFile:
    response = client.get(url)
    assert response.status_code == 200, response.content
    assert response.streaming and response["Content-Type"] == "application/zip"
    return zipfile.ZipFile(io.BytesIO(b"".join(response.streaming_content)))


def with_bundle(submission: Submission, data: bytes) -> None:
    folder = submission_folder(submission)
    folder.mkdir(parents=True)
    (folder / "bundle.archive").write_bytes(data)
    Submission.objects.filter(pk=submission.pk).update(bundle_name=f"submissions/{submission.pk}/bundle.archive")


@pytest.fixture
def low_board(team, bobs_team) -> Entry:
    low = split_members("low")
    mine = entry(team, agent="Mine", medals={0: low[:3], 1: low[:2], 2: low[:4]})
    entry(bobs_team, agent="Better", medals={0: low[:5], 1: low[:6], 2: low[:5]})
    entry(bobs_team, agent="Elsewhere", comparable=False, medals={0: low[:9]})
    with_bundle(mine, b"\x1f\x8b" + bytes(range(256)) * 40)
    return Entry.objects.get(submission=mine)


def test_the_evidence_lists_every_file_with_its_sha256_and_what_the_numbers_depend_on(client, low_board):
    archive = download(client, f"/leaderboard/entries/{low_board.pk}/evidence.zip")
    manifest = json.loads(archive.read("evidence.json"))
    bundle = f"bundle/entry-{low_board.pk}-bundle.tar.gz"
    assert set(archive.namelist()) == {
        "evidence.json",
        bundle,
        "reports/seed-0.json",
        "reports/seed-1.json",
        "reports/seed-2.json",
        "competitions.json",
        "aggregates.json",
        "ranking.json",
    }
    for listed in manifest["files"]:
        data = archive.read(listed["path"])
        assert listed["sha256"] == hashlib.sha256(data).hexdigest() and listed["bytes"] == len(data)
    assert {f["path"] for f in manifest["files"]} == set(archive.namelist()) - {"evidence.json"}
    assert archive.read(bundle) == (submission_folder(low_board.submission) / "bundle.archive").read_bytes()
    assert manifest["format"] == "mle-portal-evidence/1" and manifest["bundle"] == bundle
    assert manifest["entry_id"] == low_board.pk and manifest["submission_id"] == low_board.submission_id
    assert manifest["rank"] == {"version": "bootstrap-seeds-1", "replicates": 2000, "level": 0.95, "random_seed": 0}
    assert manifest["aggregation_version"] == low_board.aggregation_version
    assert set(manifest["history_head"]) == {"seq", "hash"}  # the head of the board's history
    assert manifest["reports"] == "regraded" and len(manifest["portal_commit"]) >= 7

    seed = json.loads(archive.read("reports/seed-1.json"))
    assert seed["total_runs"] == 22 and seed["total_gold_medals"] == 2
    reports = seed["competition_reports"]
    assert [r["competition_id"] for r in reports] == sorted(split_members("low"))
    assert list(reports[0]) == [f for f in REPORT_FIELDS if f in reports[0]]  # MLE-bench's key order

    competitions = json.loads(archive.read("competitions.json"))
    assert sorted(competitions) == sorted(split_members("low"))
    first = competitions[split_members("low")[0]]
    assert set(first) >= {"grader", "answers_sha256", "thresholds", "thresholds_source", "tiers"}
    assert set(first["thresholds"]) == {"gold", "silver", "bronze", "median", "is_lower_better"}
    assert first["tiers"] == ["low", "all"] and first["grader"]["name"]

    aggregates = json.loads(archive.read("aggregates.json"))
    assert aggregates["tiers"] == low_board.tiers and aggregates["members"] == {"low": split_members("low")}
    assert len(aggregates["runs"]) == 66 and set(aggregates["runs"][0]) == {
        "competition_id",
        "seed",
        "submission_sha256",
    }


def test_the_ranking_s_inputs_reproduce_the_entry_s_rank_and_interval(client, low_board):
    archive = download(client, f"/api/v1/entries/{low_board.pk}/evidence/")
    tabs = json.loads(archive.read("ranking.json"))["tabs"]
    assert [(t["tier"], t["excluding_leaky"]) for t in tabs] == [("low", False), ("low", True)]
    for tab in tabs:
        rows = BoardRow.objects.filter(tier=tab["tier"], excluding_leaky=tab["excluding_leaky"], board="comparable")
        assert [r["entry_id"] for r in tab["rows"]] == list(rows.order_by("pk").values_list("entry_id", flat=True))
        position = [r["entry_id"] for r in tab["rows"]].index(low_board.pk)
        ranked = tab_ranks([r["per_seed"] for r in tab["rows"]], random_seed=0)[position]
        mine = rows.get(entry=low_board)
        assert (ranked.rank, ranked.low, ranked.high, ranked.tied_ranks) == (
            mine.rank,
            mine.rank_low,
            mine.rank_high,
            mine.tied_with,
        )
        assert tab["entry"] == {
            "rank": mine.rank,
            "low": mine.rank_low,
            "high": mine.rank_high,
            "tied_with": mine.tied_with,
        }


def test_the_page_and_the_api_serve_the_same_bytes_for_the_same_board(client, low_board):
    page = client.get(f"/leaderboard/entries/{low_board.pk}/evidence.zip")
    api = client.get(f"/api/v1/entries/{low_board.pk}/evidence/")
    first, second = b"".join(page.streaming_content), b"".join(api.streaming_content)
    assert first == second
    assert page["Content-Disposition"] == f'attachment; filename="entry-{low_board.pk}-evidence.zip"'
    services.board_refresh(submission_ids=[low_board.submission_id])  # a new board version: new evidence
    third = b"".join(client.get(f"/api/v1/entries/{low_board.pk}/evidence/").streaming_content)
    assert third != first and json.loads(zipfile.ZipFile(io.BytesIO(third)).read("evidence.json"))["board_version"]


def test_the_bundle_is_streamed_in_pieces_not_held_whole(client, team):
    submission = entry(team)
    with_bundle(submission, b"PK" + bytes(12 * 1024 * 1024))
    response = client.get(f"/api/v1/entries/{submission.board_entry.pk}/evidence/")
    sizes = [len(piece) for piece in response.streaming_content]
    assert len(sizes) > 12 and max(sizes) <= 1024 * 1024 + 4096


def test_an_entry_imported_from_grading_reports_has_its_claimed_reports_and_no_bundle(client, team):
    submission = entry(team, report_only=True, origin=Submission.Origin.IMPORT)
    archive = download(client, f"/api/v1/entries/{submission.board_entry.pk}/evidence/")
    manifest = json.loads(archive.read("evidence.json"))
    assert manifest["reports"] == "claimed" and manifest["bundle"] is None
    assert not [name for name in archive.namelist() if name.startswith("bundle/")]
    assert len(json.loads(archive.read("reports/seed-0.json"))["competition_reports"]) == 22


def test_the_entry_api_serves_the_numbers_the_leaderboard_api_serves(client, low_board):
    body = client.get(f"/api/v1/entries/{low_board.pk}/").json()
    assert body["tiers"] == low_board.tiers and body["evidence_url"] == f"/api/v1/entries/{low_board.pk}/evidence/"
    assert [(t["tier"], t["excluding_leaky"]) for t in body["tabs"]] == [("low", False), ("low", True)]
    for tab in body["tabs"]:
        board = client.get(
            "/api/v1/leaderboard/",
            {"board": "all", "tier": tab["tier"], "excluding_leaky": "yes" if tab["excluding_leaky"] else "no"},
        ).json()
        row = next(r for r in board["rows"] if r["entry_id"] == low_board.pk)
        assert {k: row[k] for k in ("rank", "rank_low", "rank_high", "tied_with", "uses", "seeds")} == {
            k: tab[k] for k in ("rank", "rank_low", "rank_high", "tied_with", "uses", "seeds")
        }
        variant = body["tiers"]["low"]["excluding_leaky" if tab["excluding_leaky"] else "all"]
        assert row["tiers"]["low"] == {**variant[tab["uses"]], "padded": tab["uses"] == "padded", "uses": tab["uses"]}
        assert tab["any_medal"] == {k: variant[tab["uses"]]["any_medal"][k] for k in ("mean", "sem")}
        assert board["version"] == body["board_version"]


def test_the_entry_page_links_its_evidence(client, low_board):
    html = client.get(f"/leaderboard/entries/{low_board.pk}/").content.decode()
    assert f'href="/leaderboard/entries/{low_board.pk}/evidence.zip"' in html
    assert "Evidence (verify this entry)" in html and "mleportal verify http://testserver/leaderboard/entries/" in html


@pytest.mark.parametrize("status", ["in_review", "grading", "rejected", "changes_requested", "failed"])
@pytest.mark.parametrize("refreshed", [False, True])
def test_no_evidence_for_an_entry_that_is_not_published(client, low_board, bob, status, refreshed):
    Submission.objects.filter(pk=low_board.submission_id).update(status=status)
    if refreshed:
        services.board_refresh(submission_ids=[low_board.submission_id])
    for user in (None, bob):
        if user:
            client.force_login(user)
        for url in (
            f"/leaderboard/entries/{low_board.pk}/evidence.zip",
            f"/api/v1/entries/{low_board.pk}/evidence/",
            f"/api/v1/entries/{low_board.pk}/",
            f"/leaderboard/entries/{low_board.pk}/bundle/",
        ):
            response = client.get(url)
            assert response.status_code == 404, (url, response.status_code)
            assert not getattr(response, "streaming", False)
    api = client.get(f"/api/v1/entries/{low_board.pk}/evidence/").json()
    assert api["error"]["code"] == "not_found" and f"No published entry {low_board.pk}" in api["error"]["message"]


def test_no_evidence_for_an_entry_that_does_not_exist(client, team):
    for url in (
        "/leaderboard/entries/987654/evidence.zip",
        "/api/v1/entries/987654/evidence/",
        "/api/v1/entries/987654/",
    ):
        assert client.get(url).status_code == 404


def _answer_rows(pack: CompetitionPack) -> set[str]:
    """The data rows of a competition's private answers, those long enough to mean something."""
    text = pack_local_file(pack.answers_path).read_text(errors="replace")
    return {line.strip() for line in text.splitlines()[1:] if len(line.strip()) >= 8}


def _strings(value) -> list[str]:
    """Every key and string value in a JSON document, and every number as JSON writes it."""
    if isinstance(value, dict):
        return [text for key, item in value.items() for text in (str(key), *_strings(item))]
    if isinstance(value, list):
        return [text for item in value for text in _strings(item)]
    return [value if isinstance(value, str) else json.dumps(value)]


def test_no_file_of_the_evidence_holds_answer_rows(client, lite_entry):
    """The per-seed reports, the competitions, aggregates and ranking hold no row of any answers file, not even
    where the server's stored report quotes one (a reason may echo answer-derived details); the bundle is the
    team's own upload, byte for byte, which holds their predictions and nothing of the answers' files."""
    answers: set[str] = set()
    for pack in CompetitionPack.objects.all():
        answers |= _answer_rows(pack)
    assert len(answers) > 1000
    leaked = sorted(answers)[0]
    run = Run.objects.filter(submission=lite_entry.submission).first()
    Run.objects.filter(pk=run.pk).update(
        regraded={**run.regraded, "reason": f"ids differ, e.g. {leaked}"},
        answer_agreement={"rows": [leaked]},
    )
    archive = download(client, f"/api/v1/entries/{lite_entry.pk}/evidence/")
    bundle_name = json.loads(archive.read("evidence.json"))["bundle"]
    uploaded = (submission_folder(lite_entry.submission) / "bundle.archive").read_bytes()
    assert archive.read(bundle_name) == uploaded
    for name in archive.namelist():
        if name == bundle_name:
            continue
        text = archive.read(name).decode()
        decoded = "\n".join(_strings(json.loads(text)))  # a row quoted in JSON has its quotes escaped
        assert not [row for row in answers if row in text or row in decoded], name
    for pack in CompetitionPack.objects.all():
        names_in_bundle = tarfile.open(fileobj=io.BytesIO(uploaded)).getnames()
        assert pack.answers_path not in names_in_bundle
    competitions = json.loads(archive.read("competitions.json"))
    assert all(isinstance(c["thresholds"]["is_lower_better"], bool) for c in competitions.values())
    assert {c["thresholds_source"] for c in competitions.values()} == {"simulated"}  # the demo packs' own
    assert {c["answers_sha256"] for c in competitions.values()} == set(
        CompetitionPack.objects.values_list("answers_sha256", flat=True)
    )


def test_a_competition_without_a_leaderboard_has_null_thresholds_and_the_metric_s_direction(client, low_board):
    from competitions.models import Competition

    slug = split_members("low")[0]
    Competition.objects.filter(slug=slug).update(
        leaderboard_source="",
        gold_threshold=None,
        silver_threshold=None,
        bronze_threshold=None,
        median_threshold=None,
        is_lower_better=None,
    )
    archive = download(client, f"/api/v1/entries/{low_board.pk}/evidence/")
    found = json.loads(archive.read("competitions.json"))[slug]
    higher_is_better = Competition.objects.get(slug=slug).higher_is_better
    assert found["thresholds"] == {
        "gold": None,
        "silver": None,
        "bronze": None,
        "median": None,
        "is_lower_better": not higher_is_better,
    }
    assert found["thresholds_source"] is None
