"""The board's history: one event per change of an entry's published state, in the transaction of the change,
with its cause; hashes over the canonical JSON README documents; the head on every answer of the board."""

import csv
import hashlib
import importlib
import io
import json
import os
import sqlite3
import subprocess
import sys
import time

import pytest
from django.apps import apps as django_apps
from django.db import IntegrityError, connection, transaction

from competitions.models import Competition
from competitions.services import competition_leaderboard_apply
from grading.engine.aggregation import aggregate
from grading.models import Flag, ReviewEvent, Run, Submission, TierAggregate
from grading.services.finish import run_outcome
from grading.services.publication import submission_publish_if_ready
from grading.services.review import entry_decide, flag_decide
from leaderboard import history, services, tasks
from leaderboard.models import BoardRow, BoardState, Entry, HistoryEvent
from tests.conftest import REPO, _worker_env
from tests.leaderboard.builders import entry, split_members

pytestmark = pytest.mark.django_db


def events() -> list[dict]:
    return [history.event_as_served(row) for row in HistoryEvent.objects.order_by("seq")]


def recomputed(event: dict) -> str:
    """README's recipe, written out here rather than imported: SHA-256 of the event without "hash" as JSON with
    sorted keys, no spaces, ASCII only."""
    rest = {key: value for key, value in event.items() if key != "hash"}
    text = json.dumps(rest, sort_keys=True, separators=(",", ":"), ensure_ascii=True, allow_nan=False)
    return hashlib.sha256(text.encode("ascii")).hexdigest()


def api_row(client, submission: Submission, *, excluding_leaky: bool = False) -> dict:
    answer = client.get(
        f"/api/v1/leaderboard/?board=all&page_size=1000&excluding_leaky={'yes' if excluding_leaky else 'no'}"
    ).json()
    return next(row for row in answer["rows"] if row["submission_id"] == submission.pk)


@pytest.fixture
def refresh_now(monkeypatch, django_capture_on_commit_callbacks):
    """Run the board's refresh task where the worker would, once the change commits: the real worker path is
    tests/client/test_verify_history.py's."""
    monkeypatch.setattr(tasks.refresh_board, "delay", lambda *args: tasks.refresh_board(*args))
    return lambda: django_capture_on_commit_callbacks(execute=True)


def test_a_publication_is_one_event_with_the_state_the_api_serves_and_an_unchanged_refresh_none(client, team):
    low = split_members("low")
    submission = entry(team, agent="Listed", medals={0: low[:2], 1: low[:4], 2: low[:3]})
    [event] = events()
    assert event["kind"] == "publication" and event["seq"] == 1 and event["prev_hash"] == "0" * 64
    assert event["subject"]["submission_id"] == submission.pk and event["subject"]["agent"] == "Listed"
    assert event["subject"]["entry_id"] == Entry.objects.get(submission=submission).pk
    assert event["cause"] == {"reason": "published on the comparable board"}
    state = event["state"]
    assert state["published"] and state["board"] == "comparable"
    assert state["tiers"]["all"] == api_row(client, submission)["tiers"]
    assert state["tiers"]["excluding_leaky"] == api_row(client, submission, excluding_leaky=True)["tiers"]
    assert state["tiers"]["all"]["low"]["any_medal"]["mean"] == pytest.approx(300 / 22)

    services.board_refresh(submission_ids=[submission.pk])
    services.board_rebuild()
    assert len(events()) == 1  # nothing changed, nothing recorded


def test_every_hash_is_the_canonical_json_of_the_rest_and_links_to_the_one_before(team):
    low = split_members("low")
    first = entry(team, agent="Ünïcode ✓", medals={s: low[:2] for s in range(3)})
    entry(team, agent="Second", seeds=1, comparable=False)
    Submission.objects.filter(pk=first.pk).update(status=Submission.Status.IN_REVIEW)
    services.board_refresh(submission_ids=[first.pk])
    found = events()
    assert [e["kind"] for e in found] == ["publication", "publication", "withdrawal"]
    assert found[2]["state"] == {"published": False} and found[2]["subject"]["agent"] == "Ünïcode ✓"
    previous = "0" * 64
    for seq, event in enumerate(found, start=1):
        assert event["seq"] == seq and event["prev_hash"] == previous and event["format"] == "board-history/1"
        assert recomputed(event) == event["hash"]
        previous = event["hash"]
    stored = HistoryEvent.objects.get(seq=1).payload
    assert stored.isascii() and "\\u00dcn\\u00efcode \\u2713" in stored
    assert stored == json.dumps(json.loads(stored), sort_keys=True, separators=(",", ":"))  # stored as hashed
    assert str(history.board_head()) == f"3:{found[2]['hash']}"


def test_a_maintainers_decision_is_an_event_with_its_reason(team, maintainer, refresh_now):
    low = split_members("low")
    submission = entry(team, agent="Decided", medals={s: low[:3] for s in range(3)})
    with refresh_now():
        entry_decide(submission_id=submission.pk, decision="non_comparable", reason="saw test labels", actor=maintainer)
    decision = events()[-1]
    assert decision["kind"] == "decision"
    assert decision["cause"] == {"decision": "non_comparable", "reason": "saw test labels", "flag": None}
    assert decision["state"]["board"] == "non_comparable"

    flag = Flag.objects.create(
        submission=submission, code="answer_copy", key="x/seed-0", severity="warning", message="a copy", tiers=[]
    )
    with refresh_now():
        flag_decide(flag_id=flag.pk, decision="reject", reason="copied the answers", actor=maintainer)
    rejected = events()[-1]
    assert rejected["kind"] == "decision" and rejected["state"] == {"published": False}
    assert rejected["cause"] == {"decision": "reject", "reason": "copied the answers", "flag": "answer_copy (x/seed-0)"}
    assert len(events()) == 3


def test_a_decision_that_changes_no_figure_is_no_event(team, maintainer, refresh_now):
    submission = entry(team, agent="Accepted")
    with refresh_now():
        entry_decide(submission_id=submission.pk, decision="accept", reason="fine", actor=maintainer)
    assert [e["kind"] for e in events()] == ["publication"]


def test_an_entry_published_again_after_a_re_grade_is_a_re_grade_event_with_the_new_figures(team, refresh_now):
    low = split_members("low")
    submission = entry(team, agent="Regraded", medals={s: low[:1] for s in range(3)})
    ReviewEvent.objects.create(submission=submission, kind=ReviewEvent.Kind.PUBLISHED, reason="comparable")
    Submission.objects.filter(pk=submission.pk).update(status=Submission.Status.CHECKING)
    services.board_refresh(submission_ids=[submission.pk], cause={"kind": "regrade", "reason": "re-grading"})
    # The re-grade found two more medals per seed.
    Run.objects.filter(submission=submission, competition__slug__in=low[1:3]).update(
        regraded={**Run.objects.filter(submission=submission).first().regraded, "gold_medal": True}, any_medal=True
    )
    outcomes = [run_outcome(run) for run in Run.objects.filter(submission=submission).select_related("competition")]
    for agg in TierAggregate.objects.filter(submission=submission):
        agg.data = aggregate(outcomes, split=low, padded=agg.kind == "padded")
        agg.save()
    with refresh_now():
        assert submission_publish_if_ready(submission_id=submission.pk)
    kinds = [(e["kind"], e["state"]["published"]) for e in events()]
    assert kinds == [("publication", True), ("regrade", False), ("regrade", True)]
    assert events()[-1]["cause"] == {"reason": "published again after a re-grade"}
    assert events()[-1]["state"]["tiers"]["all"]["low"]["any_medal"]["mean"] == pytest.approx(300 / 22)


def test_a_change_of_a_competitions_thresholds_is_an_event_of_that_competition(team):
    from competitions.models import CompetitionPack

    competition = Competition.objects.filter(benchmark__is_current=True).order_by("slug").first()
    pack = CompetitionPack(competition=competition, answers_sha256="a" * 64, answers_bytes=1, synthetic=True)
    pack.leaderboard_scores = [0.9, 0.8, 0.7, 0.6, 0.5, 0.4, 0.3, 0.2, 0.1, 0.05]
    pack.leaderboard_answers_sha256 = "a" * 64
    pack.save()
    competition_leaderboard_apply(competition=competition, pack=pack)
    [event] = events()
    assert event["kind"] == "competition" and event["subject"]["competition"] == competition.slug
    assert event["state"]["leaderboard_source"] == "simulated" and event["state"]["thresholds"]["gold"] == 0.9
    assert event["cause"]["reason"].startswith("the thresholds in force changed")
    competition.refresh_from_db()
    competition_leaderboard_apply(competition=competition, pack=pack)
    assert len(events()) == 1  # the same thresholds again: no change, no event


def test_an_event_is_appended_in_the_transaction_of_its_change_or_not_at_all(team):
    submission = entry(team, agent="Rolled back", refresh=False)
    with pytest.raises(RuntimeError), transaction.atomic():
        services.entry_refresh(submission_id=submission.pk)
        raise RuntimeError("the change fails after the entry was written")
    assert not Entry.objects.exists() and not HistoryEvent.objects.exists()


def test_the_history_refuses_to_be_rewritten_in_place(team):
    if connection.vendor != "postgresql":
        pytest.skip("the append-only trigger is PostgreSQL's")
    entry(team, agent="Kept")
    for statement in ("UPDATE leaderboard_historyevent SET payload = '{}'", "DELETE FROM leaderboard_historyevent"):
        with pytest.raises(Exception, match="append-only"), transaction.atomic(), connection.cursor() as cursor:
            cursor.execute(statement)
    assert len(events()) == 1
    row = HistoryEvent.objects.get()
    with pytest.raises(IntegrityError), transaction.atomic():  # a second event after the same one: a fork
        HistoryEvent.objects.create(seq=2, payload="{}", prev_hash=row.prev_hash, hash="f" * 64)


def test_a_head_that_is_not_the_last_event_stops_the_append_instead_of_leaving_a_gap(team):
    entry(team, agent="First")
    BoardState.objects.filter(pk=1).update(history_seq=5)
    with pytest.raises(history.HistoryBroken):
        entry(team, agent="Second")
    assert len(events()) == 1


# --- the head on every answer ----------------------------------------------------------------------------


def test_the_head_is_on_the_api_and_every_export_and_a_cached_answer_never_carries_a_stale_one(client, team):
    low = split_members("low")
    entry(team, agent="First", medals={s: low[:2] for s in range(3)})
    before = client.get("/api/v1/leaderboard/")
    head = history.board_head()
    assert str(head).startswith("1:")
    assert before["X-Board-History-Head"] == str(head)
    assert before.json()["history_head"] == {"seq": 1, "hash": head.hash}
    assert client.get("/api/v1/leaderboard/")["X-Board-History-Head"] == str(head)  # from the cache

    entry(team, agent="Second", medals={s: low[:1] for s in range(3)})
    head = history.board_head()
    after = client.get("/api/v1/leaderboard/")
    assert head.seq == 2 and after["X-Board-History-Head"] == str(head)
    assert after.json()["history_head"] == head.as_dict() and b"Second" in after.content

    as_json = client.get("/leaderboard/export.json?board=all")
    assert as_json["X-Board-History-Head"] == str(head) and as_json.json()["history_head"] == head.as_dict()
    as_csv = client.get("/leaderboard/export.csv?board=all")
    rows = list(csv.DictReader(io.StringIO(as_csv.content.decode())))
    assert as_csv["X-Board-History-Head"] == str(head) and {row["board_history_head"] for row in rows} == {str(head)}
    as_md = client.get("/leaderboard/export.md?board=all")
    assert as_md["X-Board-History-Head"] == str(head)
    assert as_md.content.decode().splitlines()[0].endswith(f"; board history head {head} -->")
    assert f"(event {head.seq})" in client.get("/leaderboard/").content.decode()


def test_an_entrys_answers_carry_the_head(client, team):
    submission = entry(team, agent="With a page")
    page = client.get(f"/leaderboard/entries/{Entry.objects.get(submission=submission).pk}/")
    assert page.status_code == 200 and page["X-Board-History-Head"] == str(history.board_head())


def test_every_api_answer_carries_the_head(client, team):
    submission = entry(team, agent="Listed")
    head = str(history.board_head())
    assert head.startswith("1:")
    for path in (
        "/api/v1/competitions/",
        f"/api/v1/competitions/{split_members('low')[0]}/",
        f"/api/v1/submissions/{submission.pk}/",
        f"/api/v1/entries/{Entry.objects.get(submission=submission).pk}/",
        "/api/v1/decisions/",
        f"/leaderboard/competitions/{split_members('low')[0]}/",
    ):
        answer = client.get(path)
        assert answer.status_code == 200, (path, answer.status_code)
        assert answer["X-Board-History-Head"] == head, path


# --- reading it ------------------------------------------------------------------------------------------


def test_the_api_pages_the_history_oldest_first_after_a_sequence_number(client, team):
    for name in ("One", "Two", "Three"):
        entry(team, agent=name)
    first = client.get("/api/v1/history/?limit=2").json()
    assert [e["seq"] for e in first["events"]] == [1, 2] and first["next"] == "/api/v1/history/?after=2&limit=2"
    assert first["head"] == history.board_head().as_dict() and first["format"] == "board-history/1"
    rest = client.get(first["next"]).json()
    assert [e["seq"] for e in rest["events"]] == [3] and rest["next"] is None
    assert [e["subject"]["agent"] for e in first["events"] + rest["events"]] == ["One", "Two", "Three"]
    assert all(recomputed(e) == e["hash"] for e in first["events"] + rest["events"])
    assert client.get("/api/v1/history/?after=3").json()["events"] == []


@pytest.mark.parametrize("query", ["after=-1", "after=x", "limit=0", "limit=1001", "after=" + "9" * 30])
def test_bad_paging_is_a_clear_400_naming_the_parameter(client, query):
    answer = client.get(f"/api/v1/history/?{query}")
    assert answer.status_code == 400
    assert answer.json()["error"]["details"]["field"] == query.split("=")[0]


def test_the_history_page_says_what_changed_when_and_why_linked_to_the_entry(client, team, maintainer, refresh_now):
    low = split_members("low")
    submission = entry(team, agent="Shown <b>agent</b>", medals={s: low[:3] for s in range(3)})
    with refresh_now():
        entry_decide(
            submission_id=submission.pk, decision="non_comparable", reason="used <i>extra</i> data", actor=maintainer
        )
    page = client.get("/leaderboard/history/")
    text = page.content.decode()
    assert page.status_code == 200
    entry_id = Entry.objects.get(submission=submission).pk
    assert f'href="/leaderboard/entries/{entry_id}/"' in text
    assert "maintainer&#x27;s decision" in text and "non_comparable" in text
    assert "used &lt;i&gt;extra&lt;/i&gt; data" in text and "<b>agent</b>" not in text
    assert "comparable board → non-comparable board" in text and "13.6 ± 0.0 (3 seeds)" in text
    assert text.index('id="event-2"') < text.index('id="event-1"')  # newest first
    assert str(history.board_head().hash) in text


# --- genesis ---------------------------------------------------------------------------------------------


def test_the_genesis_migration_records_every_published_entrys_state_as_a_refresh_would(team, monkeypatch, client):
    low = split_members("low")
    with monkeypatch.context() as quiet:  # a board from before the history
        quiet.setattr(history, "entry_record", lambda **_: False)
        listed = [entry(team, agent=f"Old {n}", medals={s: low[:n] for s in range(3)}) for n in (1, 2)]
        entry(team, agent="Unpublished", status=Submission.Status.IN_REVIEW)
    assert not HistoryEvent.objects.exists()
    migration = importlib.import_module("leaderboard.migrations.0004_history_genesis")
    migration.genesis(django_apps, None)
    found = events()
    assert [e["kind"] for e in found] == ["genesis", "genesis"]
    assert [e["subject"]["submission_id"] for e in found] == [s.pk for s in listed]
    for event, submission in zip(found, listed, strict=True):
        assert event["state"]["tiers"]["all"] == api_row(client, submission)["tiers"]
        assert recomputed(event) == event["hash"]
    assert history.board_head().as_dict() == {"seq": 2, "hash": found[1]["hash"]}
    services.board_rebuild()  # the refresh computes the same states: nothing to record
    assert len(events()) == 2


# --- one writer at a time --------------------------------------------------------------------------------

APPENDER = """
import django, os, sys, time
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "portal.settings")
django.setup()
from django.db import transaction
from leaderboard import history
time.sleep(max(0, float(sys.argv[3]) - time.time()))  # both start together
for n in range(int(sys.argv[2])):
    with transaction.atomic():
        history.append(kind="update", subject={"writer": sys.argv[1], "n": n}, cause={"reason": "load"},
                       state={"published": False}, submission_id=None)
    time.sleep(0.002)  # out of the lock a moment, as any real writer is: SQLite's waiting writer gets its turn
"""


def _appenders(env: dict) -> None:
    """Two processes appending 100 events each, starting at the same moment."""
    start = str(time.time() + 4)
    writers = [
        subprocess.Popen(
            [sys.executable, "-c", APPENDER, name, "100", start], cwd=REPO, env=env, stderr=subprocess.PIPE
        )
        for name in ("a", "b")
    ]
    for writer in writers:
        _, errors = writer.communicate(timeout=180)
        assert writer.returncode == 0, errors.decode()


def _one_chain(found: list[dict]) -> str:
    """The events are 1…200 without a gap, each linking to the one before and hashing as it says, and the two
    writers' appends interleaved (else the test proved little); the last hash."""
    assert [e["seq"] for e in found] == list(range(1, 201))
    previous = "0" * 64
    for event in found:
        assert event["prev_hash"] == previous and recomputed(event) == event["hash"]
        previous = event["hash"]
    writers_in_order = [e["subject"]["writer"] for e in found]
    switches = sum(a != b for a, b in zip(writers_in_order, writers_in_order[1:]))
    assert switches >= 5, f"the two writers hardly overlapped ({switches} switches)"
    return previous


@pytest.mark.django_db(transaction=True)
def test_two_processes_appending_at_once_keep_one_chain_on_postgresql():
    if connection.vendor != "postgresql":
        pytest.skip("two processes on one test database need PostgreSQL (scripts/test sets it)")
    _appenders(_worker_env())
    last = _one_chain(events())
    assert history.board_head().as_dict() == {"seq": 200, "hash": last}
    assert BoardRow.objects.count() == 0


@pytest.mark.django_db(transaction=False)
def test_two_processes_appending_at_once_keep_one_chain_on_sqlite(tmp_path):
    """The one-machine portal's database: the web server and the worker write the same SQLite file."""
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "REDIS_URL", "PORTAL_DATA_DIR")}
    env["PORTAL_DATA_DIR"] = str(tmp_path / "data")
    migrated = subprocess.run(
        [sys.executable, "manage.py", "migrate", "--noinput", "-v", "0"], cwd=REPO, env=env, capture_output=True
    )
    assert migrated.returncode == 0, migrated.stderr.decode()
    _appenders(env)
    with sqlite3.connect(tmp_path / "data" / "db.sqlite3") as database:
        rows = database.execute("SELECT payload, hash FROM leaderboard_historyevent ORDER BY seq").fetchall()
        head = database.execute("SELECT history_seq, history_hash FROM leaderboard_boardstate").fetchone()
    last = _one_chain([{**json.loads(payload), "hash": digest} for payload, digest in rows])
    assert head == (200, last)
