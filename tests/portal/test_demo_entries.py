"""The demo's seeded entries: real bundles through intake, the Celery worker and the checks (PostgreSQL, Redis)."""

import difflib
import time
from collections import Counter
from dataclasses import replace

import pytest
from django.core.management import call_command
from rest_framework.test import APIClient

from competitions.demo.catalog import split_ids
from competitions.demo.solutions import STYLES, solution_code
from grading.checks.duplicate_submissions import _COMMENT, _SPACE
from grading.models import Flag, Registration, Submission
from leaderboard.models import Entry
from portal import demo_entries
from portal.demo_entries import ENTRIES, demo_entries_seed, qualities

FINAL = {"in_review", "published", "rejected", "failed"}
CLEAN = [entry for entry in ENTRIES if not entry.flagged]


def wait_until(done, what: str, timeout: float = 600):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if result := done():
            return result
        time.sleep(1)
    raise AssertionError(f"not {what} after {timeout}s")


def final(ids: list[int]) -> dict[int, Submission] | None:
    found = {s.pk: s for s in Submission.objects.filter(pk__in=ids).select_related("team")}
    return found if all(s.status in FINAL for s in found.values()) else None


@pytest.mark.worker
def test_demo_entries_are_graded_clean_ranked_and_one_waits_for_review(registry_with_packs, celery_worker):
    started = time.monotonic()
    ids = demo_entries_seed(log=lambda line: None)
    seeded = time.monotonic() - started
    assert len(ids) == len(ENTRIES) == 5
    done = wait_until(lambda: final(ids), "graded")
    print(f"bundles made and uploaded in {seeded:.1f} s; graded and checked {time.monotonic() - started:.1f} s in")

    flags = Counter((s.team.name, f.severity, f.code) for s in done.values() for f in Flag.objects.filter(submission=s))
    published = [s for s in done.values() if s.status == "published"]
    assert sorted(s.team.name for s in published) == sorted(e.team for e in CLEAN)
    # The demo's own data raises nothing on a clean entry: no near-identical code, no identical seeds, no
    # implausible score, no medal on a leaky competition, not even an info.
    assert not any(team for team, _, _ in flags if not team.endswith("Shortcut Inc")), flags
    (held,) = [s for s in done.values() if s.status == "in_review"]
    assert held.team.name == "Demo - Shortcut Inc"
    assert flags == Counter({("Demo - Shortcut Inc", "blocking", "test_set_feedback"): 1}), flags
    assert Flag.objects.get(submission=held).key == "private_paths"
    assert all("Synthetic demo data" in s.manifest["notes"] for s in done.values())

    # On the board: every clean entry, comparable (three distinct seeds each), ranked on the Lite tier.
    wait_until(lambda: Entry.objects.filter(board="comparable").count() == len(CLEAN), "on the board", 120)
    body = APIClient().get("/api/v1/leaderboard/?board=comparable&tier=low").json()
    assert body["count"] == len(CLEAN)
    assert {row["team"] for row in body["rows"]} == {e.team for e in CLEAN}
    if not all(row["rank"] for row in body["rows"]):  # ranks follow the rows a moment later
        time.sleep(5)
        body = APIClient().get("/api/v1/leaderboard/?board=comparable&tier=low").json()
    assert all(row["rank"] for row in body["rows"])
    # Each entry's level exactly: Blend Studio is a registered run group (its registration made before its runs,
    # the nonce in every run's log, the manifest naming it); the others are uploads with no registration.
    # Every one is re-graded here.
    levels = {(row["team"], row["agent_version"]): row["level"] for row in body["rows"]}
    assert levels == {
        ("Demo - Prior Baseline", "1.0"): "reported",
        ("Demo - Gradient Works", "1.0"): "reported",
        ("Demo - Gradient Works", "2.0"): "reported",
        ("Demo - Blend Studio", "1.0"): "registered",
    }, levels
    assert len(body["rows"]) == len(CLEAN) and {row["verified"] for row in body["rows"]} == {"regraded"}
    blend = done[next(pk for pk, s in done.items() if s.team.name == "Demo - Blend Studio")]
    registration = blend.registration
    assert registration is not None and blend.manifest["registration"] == registration.pk
    assert (registration.agent_name, registration.agent_version, registration.seeds) == ("Demo CV blend", "1.0", 3)
    assert registration.competitions == split_ids("low") and registration.created_by.username == "demo-blend"
    assert Registration.objects.count() == 1
    assert all(s.registration_id is None for s in done.values() if s.team.name != "Demo - Blend Studio")
    means = {(row["agent"], row["agent_version"]): row["tiers"]["low"]["any_medal"]["mean"] for row in body["rows"]}
    print("Lite any-medal % by entry:", means)
    assert means[("Demo CV blend", "1.0")] > means[("Demo prior baseline", "1.0")]  # quality shows in the rank

    # Seeding again adds nothing, no second registration either.
    assert demo_entries_seed(log=lambda line: None) == []
    assert Submission.objects.count() == len(ENTRIES) and Registration.objects.count() == 1


def test_no_clean_entry_medals_on_a_leaky_competition_or_comes_near_the_answers():
    ids = ["random-acts-of-pizza", "spooky-author-identification"]
    for entry in CLEAN:
        shares = qualities(level=entry.quality, key=entry.key, ids=ids, leaky={"random-acts-of-pizza"})
        assert shares["random-acts-of-pizza"] <= 0.2
        assert 0.05 <= shares["spooky-author-identification"] <= 0.78


def _normalised(code: str) -> str:
    """As duplicate_submissions compares code: comments and blank lines dropped, spaces squeezed."""
    lines = [_SPACE.sub(" ", line).strip() for line in _COMMENT.sub("", code).splitlines()]
    return "\n".join(line for line in lines if line)


def test_every_two_code_styles_are_far_from_near_identical_on_every_lite_competition():
    teams = {entry.team: entry.style for entry in ENTRIES}
    assert len(set(teams.values())) == len(teams)  # one style per demo team
    styles = sorted(STYLES)  # make_demo_run's default, "starter", too
    worst = 0.0
    for cid in split_ids("low"):
        codes = {style: _normalised(solution_code(style=style, competition_id=cid, seed=1)) for style in styles}
        for i, a in enumerate(styles):
            for b in styles[i + 1 :]:
                worst = max(worst, difflib.SequenceMatcher(None, codes[a], codes[b], autojunk=False).ratio())
    assert worst < 0.75, worst  # the check warns from 0.9 (CHECK_CODE_SIMILARITY_PERCENT); 0.58 today


@pytest.mark.django_db
def test_a_demo_entry_that_cannot_be_made_leaves_the_start_to_go_on(monkeypatch, capsys):
    monkeypatch.setenv("PORTAL_DEMO_PACK_SIZE", "small")
    monkeypatch.setattr(demo_entries, "ENTRIES", (replace(ENTRIES[0], style="no-such-style"),))
    call_command("demo_setup")
    out = capsys.readouterr()
    assert "Demo entries not seeded (ValueError: unknown code style 'no-such-style'" in out.err
    assert "Demo account" in out.out and not Submission.objects.exists()


@pytest.mark.django_db
def test_demo_setup_seeds_the_entries_once_and_not_at_all_with_portal_demo_entries_0(monkeypatch, capsys):
    monkeypatch.setenv("PORTAL_DEMO_PACK_SIZE", "small")
    monkeypatch.setenv("PORTAL_DEMO_ENTRIES", "0")
    call_command("demo_setup")
    assert not Submission.objects.exists()

    monkeypatch.setenv("PORTAL_DEMO_ENTRIES", "1")
    call_command("demo_setup")
    assert Submission.objects.count() == len(ENTRIES)
    assert set(Submission.objects.values_list("team__name", flat=True)) == {e.team for e in ENTRIES}
    assert "Seeded 5 demo entries" in capsys.readouterr().out
    call_command("demo_setup")
    assert Submission.objects.count() == len(ENTRIES)  # the next start adds nothing


@pytest.mark.django_db
def test_a_registration_an_interrupted_start_left_unnamed_is_used_again_not_doubled(monkeypatch):
    monkeypatch.setenv("PORTAL_DEMO_PACK_SIZE", "small")
    monkeypatch.setenv("PORTAL_DEMO_ENTRIES", "0")
    call_command("demo_setup")  # the packs, no entries
    (blend,) = [entry for entry in ENTRIES if entry.registered]
    assert blend.team == "Demo - Blend Studio"
    team, user = demo_entries._team(blend)
    ids = split_ids("low")
    # A start that stopped after registering and before uploading: the next start uses that registration.
    first = demo_entries._registration(entry=blend, team=team, user=user, ids=ids)
    assert demo_entries._registration(entry=blend, team=team, user=user, ids=ids).pk == first.pk

    (pk,) = demo_entries_seed(entries=(blend,), log=lambda line: None)
    submission = Submission.objects.get(pk=pk)
    assert submission.registration_id == first.pk and submission.manifest["registration"] == first.pk
    assert Registration.objects.count() == 1 and first.seeds == len(blend.seeds) and first.competitions == ids
    assert demo_entries_seed(entries=(blend,), log=lambda line: None) == []
    assert Registration.objects.count() == 1
