"""`mleportal verify --history` against a live portal on PostgreSQL, the client run as a subprocess (Python 3.9
where installed): the chain verifies, and each way of changing the past or the present is caught.

What a tampering operator does here they do in the database itself, with the rights an operator has: change a
figure of the board, edit a past event (switching off the table's append-only trigger first), or rewrite the
whole chain with every hash recomputed, so that only a head kept from before can tell."""

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from django.core.management import call_command
from django.db import connection

from competitions.models import CompetitionPack
from competitions.services import competition_leaderboard_apply, competitions_load
from grading.models import Submission
from grading.services.regrade import submission_regrade
from grading.services.review import entry_decide
from leaderboard import history, services
from leaderboard.models import BoardRow, BoardState, Entry, HistoryEvent
from tests.grading.test_import_mlebench_runs import checkout  # noqa: F401 (a fixture: an MLE-bench checkout)
from tests.leaderboard.builders import entry, split_members

CLIENT = Path(__file__).resolve().parents[2] / "client" / "mleportal.py"


def oldest_python() -> str:
    """The client promises Python 3.9: PYTHON39 names one, else python3.9 on PATH, else this interpreter."""
    return os.environ.get("PYTHON39") or shutil.which("python3.9") or sys.executable


def verify(live_server, *extra: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [oldest_python(), str(CLIENT), "verify", "--history", "--portal", live_server.url, *extra],
        capture_output=True,
        text=True,
        timeout=120,
    )


def kept_head(result: subprocess.CompletedProcess) -> str:
    found = re.search(r"^history head: (\d+:[0-9a-f]{64}) ", result.stdout, re.MULTILINE)
    assert found, result.stdout + result.stderr
    return found.group(1)


def events() -> list[dict]:
    return [history.event_as_served(row) for row in HistoryEvent.objects.order_by("seq")]


def as_operator(sql: str, params: list) -> None:
    """A statement run past the history's append-only trigger, as an operator with the rights to do so can."""
    with connection.cursor() as cursor:
        cursor.execute("ALTER TABLE leaderboard_historyevent DISABLE TRIGGER leaderboard_history_append_only")
        cursor.execute(sql, params)
        cursor.execute("ALTER TABLE leaderboard_historyevent ENABLE TRIGGER leaderboard_history_append_only")


def rewrite_chain(edit) -> None:
    """What a tamperer who wants no hash to mismatch does: edit events, then recompute every hash and link."""
    previous = "0" * 64
    for row in HistoryEvent.objects.order_by("seq"):
        event = edit(json.loads(row.payload))
        event["prev_hash"] = previous
        payload = history.canonical(event)
        digest = hashlib.sha256(payload).hexdigest()
        as_operator(
            "UPDATE leaderboard_historyevent SET payload = %s, prev_hash = %s, hash = %s WHERE seq = %s",
            [payload.decode(), previous, digest, row.seq],
        )
        previous = digest
    last = HistoryEvent.objects.order_by("-seq").values_list("seq", flat=True).first()
    BoardState.objects.filter(pk=1).update(history_seq=last, history_hash=previous)
    services.board_version_bump()


@pytest.fixture
def board(transactional_db, alice):
    """Two published entries and one that came and went, written by the board's own refresh."""
    if connection.vendor != "postgresql":
        pytest.skip("the tampering is PostgreSQL's (its append-only trigger); scripts/test sets DATABASE_URL")
    competitions_load()
    team = alice.teams.get()
    low = split_members("low")
    listed = entry(team, agent="Listed", medals={s: low[: 2 + s] for s in range(3)})
    entry(team, agent="Other", medals={s: low[:1] for s in range(3)}, comparable=False)
    gone = entry(team, agent="Gone")
    Submission.objects.filter(pk=gone.pk).update(status=Submission.Status.REJECTED)
    services.board_refresh(submission_ids=[gone.pk])
    return listed


def test_the_chain_verifies_and_prints_the_head_to_keep(live_server, board):
    result = verify(live_server)
    assert result.returncode == 0, result.stdout + result.stderr
    assert re.search(r"history chain\s+ok\s+4 events", result.stdout)
    assert re.search(r"board\s+ok\s+2 listed entries follow from the history up to event 4", result.stdout)
    assert kept_head(result) == str(history.board_head())
    again = verify(live_server, "--known-head", kept_head(result))
    assert again.returncode == 0 and re.search(r"known head\s+ok\s+event 4 ", again.stdout), again.stdout


def test_a_figure_changed_in_the_database_is_caught_naming_the_entry(live_server, board):
    listed = Entry.objects.get(submission=board)
    for row in BoardRow.objects.filter(entry=listed, excluding_leaky=False):
        row.shown["low"]["agg"]["any_medal"]["mean"] += 10
        row.save(update_fields=["shown"])
    services.board_version_bump()  # as a tamperer who wants the board to show it does
    result = verify(live_server)
    assert result.returncode == 1, result.stdout
    line = next(line for line in result.stdout.splitlines() if "differs" in line)
    assert f"entry {listed.pk} (submission {board.pk}, Listed)" in line
    assert "low (all): any_medal.mean 23.6" in line and "on the board, 13.6" in line and "in the history" in line

    services.board_refresh(submission_ids=[board.pk])  # the refresh writes the true figures back, no event
    assert verify(live_server).returncode == 0


def test_an_entry_listed_without_its_event_is_caught(live_server, board, alice, monkeypatch):
    monkeypatch.setattr(history, "entry_record", lambda **_: False)  # an operator's writes, past the history
    gone = Submission.objects.get(status=Submission.Status.REJECTED)
    Submission.objects.filter(pk=gone.pk).update(status=Submission.Status.PUBLISHED)
    services.board_refresh(submission_ids=[gone.pk])
    sneaked = entry(alice.teams.get(), agent="Sneaked in")
    result = verify(live_server)
    assert result.returncode == 1
    assert re.search(
        rf"\(submission {gone.pk}, Gone\)\s+differs\s+listed on the board, but the history says it left", result.stdout
    ), result.stdout
    assert re.search(
        rf"\(submission {sneaked.pk}, Sneaked in\)\s+differs\s+on the board \(all\) with no event", result.stdout
    ), result.stdout


def test_a_past_event_edited_in_the_database_is_caught_at_its_number(live_server, board):
    first = HistoryEvent.objects.get(seq=1)
    as_operator(
        "UPDATE leaderboard_historyevent SET payload = %s WHERE seq = 1",
        [first.payload.replace("published on the comparable board", "published after three reviews")],
    )
    result = verify(live_server)
    assert result.returncode == 1
    assert re.search(r"history event 1\s+differs\s+hash mismatch: recorded " + first.hash, result.stdout), result.stdout
    assert "keep it" not in result.stdout  # no head is offered from a log that does not hold


def test_a_rewritten_chain_passes_on_its_own_but_not_against_a_head_kept_before(live_server, board):
    kept = kept_head(verify(live_server))
    rewrite_chain(
        lambda event: {**event, "cause": {"reason": "published after three reviews"}} if event["seq"] == 1 else event
    )
    alone = verify(live_server)
    assert alone.returncode == 0, alone.stdout  # every hash and link holds, and the board follows from it
    result = verify(live_server, "--known-head", kept)
    assert result.returncode == 1
    assert re.search(r"known head\s+differs\s+event 4 now hashes [0-9a-f]{64}, not " + kept[2:], result.stdout), (
        result.stdout
    )
    assert "keep it" not in result.stdout


def test_a_bad_known_head_or_an_unreachable_portal_is_exit_2(live_server, transactional_db):
    bad = verify(live_server, "--known-head", "4:not-a-hash")
    assert bad.returncode == 2 and "SEQ:HASH" in bad.stderr
    unreachable = subprocess.run(
        [oldest_python(), str(CLIENT), "verify", "--history", "--portal", "http://127.0.0.1:9"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert unreachable.returncode == 2 and "could not check" in unreachable.stdout


# --- every kind of change through the real pipeline: upload, worker, decision, thresholds, re-grade, import ---

FINAL = {"in_review", "published", "rejected", "failed"}


def wait_for(predicate, timeout: float = 240.0, what: str = ""):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = predicate()
        if found:
            return found
        time.sleep(0.3)
    raise AssertionError(f"waited {timeout:.0f}s for {what}")


def last_event_of(submission_id: int, **wanted) -> dict | None:
    for event in reversed(events()):
        if event["subject"].get("submission_id") == submission_id:
            return event if all(event.get(k) == v for k, v in wanted.items()) else None
    return None


def unreachable_thresholds(pack: CompetitionPack) -> None:
    """Every score of the pack's simulated leaderboard made far better than any answer: no run earns a medal."""
    shift = -1e6 if pack.competition.is_lower_better else 1e6
    pack.leaderboard_scores = [score + shift for score in pack.leaderboard_scores]
    pack.save(update_fields=["leaderboard_scores"])


def republished_after_regrade(submission_id: int) -> dict | None:
    last = last_event_of(submission_id)
    return last if last and last["kind"] == "regrade" and last["state"]["published"] else None


def decided_non_comparable(submission_id: int) -> dict | None:
    last = last_event_of(submission_id, kind="decision")
    return last if last and last["state"].get("board") == "non_comparable" else None


@pytest.mark.worker
def test_publication_decision_thresholds_regrade_and_import_each_record_their_cause(
    live_server,
    registry_with_packs,
    alice_api,
    maintainer,
    celery_worker,
    lite_bundle,
    checkout,  # noqa: F811
):
    with lite_bundle.open("rb") as handle:
        submission_id = alice_api.post("/api/v1/submissions/", {"bundle": handle}, format="multipart").json()["id"]
    wait_for(lambda: Submission.objects.get(pk=submission_id).status in FINAL, what="the upload's grading")
    status = Submission.objects.get(pk=submission_id).status
    if status == "in_review":  # the checks asked a maintainer: the decision publishes it
        entry_decide(submission_id=submission_id, decision="accept", reason="checked by hand", actor=maintainer)
        first = wait_for(lambda: last_event_of(submission_id, kind="decision"), what="the decision's event")
        assert first["cause"] == {"decision": "accept", "reason": "checked by hand", "flag": None}
    else:
        assert status == "published", celery_worker.output()
        first = wait_for(lambda: last_event_of(submission_id, kind="publication"), what="the publication's event")
        assert first["cause"]["reason"].startswith("published on the")
    assert (
        first["state"]["published"]
        and first["subject"]["entry_id"] == Entry.objects.get(submission_id=submission_id).pk
    )
    before = first["state"]["tiers"]["all"]["low"]
    assert verify(live_server).returncode == 0

    packs = list(CompetitionPack.objects.select_related("competition").exclude(leaderboard_scores=[]))
    for pack in packs:
        unreachable_thresholds(pack)
        competition_leaderboard_apply(competition=pack.competition, pack=pack)
    moved = [e for e in events() if e["kind"] == "competition"][-len(packs) :]
    assert [e["subject"]["competition"] for e in moved] == [p.competition.slug for p in packs]

    count = len(events())
    assert submission_regrade(submission_id=submission_id, actor=maintainer)
    regraded = wait_for(lambda: republished_after_regrade(submission_id), what="the re-grade's event")
    after = regraded["state"]["tiers"]["all"]["low"]
    assert after["any_medal"]["mean"] == 0 < before["any_medal"]["mean"], (before, after)
    assert regraded["cause"] == {"reason": "published again after a re-grade"}
    new = [e for e in events()[count:] if e["subject"].get("submission_id") == submission_id]
    # Off the board while it was re-graded (unless its refresh ran after the re-publication), then back.
    assert [(e["kind"], e["state"]["published"]) for e in new] in (
        [("regrade", True)],
        [("regrade", False), ("regrade", True)],
    )
    assert new[0]["cause"]["reason"] in ("re-grading on a maintainer's request", "published again after a re-grade")

    entry_decide(submission_id=submission_id, decision="non_comparable", reason="extra GPUs", actor=maintainer)
    decided = wait_for(lambda: decided_non_comparable(submission_id), what="the decision's event")
    assert decided["cause"] == {"decision": "non_comparable", "reason": "extra GPUs", "flag": None}

    count = len(events())
    call_command("import_mlebench_runs", str(checkout), "--entries", str(checkout.parent / "entries.csv"))
    imported = wait_for(lambda: len(events()) >= count + 2 and events()[count:], what="the import's events")
    assert [(e["kind"], e["cause"]["experiment_id"]) for e in imported] == [
        ("import", "aide-o1"),
        ("import", "mlab-gpt4o"),
    ]
    assert all(e["state"]["board"] == "non_comparable" for e in imported)

    call_command("import_mlebench_runs", str(checkout), "--entries", str(checkout.parent / "entries.csv"))
    time.sleep(2)
    assert len(events()) == count + 2  # the same import again changes nothing, records nothing

    result = verify(live_server)
    assert result.returncode == 0, result.stdout + celery_worker.output()
    assert re.search(r"board\s+ok\s+3 listed entries", result.stdout), result.stdout
