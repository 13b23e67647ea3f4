"""verify_history against a scripted portal (tests/client/conftest.py's FakePortal): the client alone, with no
Django, building the chain by README's recipe, and a portal answering what no portal should."""

import hashlib
import json

FIGURES = {"seeds": 3, "any_medal": {"mean": 12.5, "sem": 1.25}, "padded": False, "uses": "complete"}


def chain(*states: tuple[int, dict]) -> list[dict]:
    """Events for (submission id, state) pairs, hashed as README says."""
    events, previous = [], "0" * 64
    for seq, (submission_id, state) in enumerate(states, start=1):
        event = {
            "format": "board-history/1",
            "seq": seq,
            "kind": "publication" if state["published"] else "withdrawal",
            "time": "2026-12-03T10:00:00.000000Z",
            "subject": {"submission_id": submission_id, "entry_id": submission_id + 100, "agent": "Ünï", "team": "T"},
            "cause": {"reason": "because"},
            "state": state,
            "prev_hash": previous,
        }
        text = json.dumps(event, sort_keys=True, separators=(",", ":"), ensure_ascii=True, allow_nan=False)
        event["hash"] = previous = hashlib.sha256(text.encode()).hexdigest()
        events.append(event)
    return events


def serve(portal, events: list[dict], rows: list[dict], *, head: dict | None = None) -> dict:
    head = head or {"seq": events[-1]["seq"], "hash": events[-1]["hash"]}
    portal.answer("GET", "/api/v1/history/?after=0&limit=1000", (200, {"head": head, "events": events, "next": None}))
    for flag in ("no", "yes"):
        query = f"board=all&excluding_leaky={flag}&page_size=1000&page=1"
        answer = {"history_head": head, "pages": 1, "rows": rows}
        header = {"X-Board-History-Head": f"{head['seq']}:{head['hash']}"}
        portal.answer("GET", f"/api/v1/leaderboard/?{query}", (200, answer, header))
    return head


PUBLISHED = {
    "published": True,
    "board": "comparable",
    "tiers": {"all": {"low": FIGURES}, "excluding_leaky": {"low": FIGURES}},
}
ROW = {"entry_id": 101, "submission_id": 1, "agent": "Ünï", "board": "comparable", "tiers": {"low": FIGURES}}


def test_a_log_and_a_board_that_agree_verify(mleportal, portal):
    events = chain((1, PUBLISHED), (2, PUBLISHED), (2, {"published": False}))
    serve(portal, events, [ROW])
    rows = mleportal.verify_history(portal.url, None)
    assert ("history chain", "ok", "3 events, every hash and link recomputed") in rows
    assert rows[-1] == ("history head", "ok", f"3:{events[-1]['hash']}")
    assert all(result == "ok" for _, result, _ in rows), rows
    assert all("Authorization" not in request["headers"] for request in portal.requests)  # public reads, no token


def test_a_forged_event_a_missing_one_and_a_head_the_log_does_not_hold(mleportal, portal):
    events = chain((1, PUBLISHED), (2, PUBLISHED), (3, PUBLISHED))
    events[1]["cause"]["reason"] = "rewritten"
    del events[2]
    serve(portal, events, [ROW], head={"seq": 3, "hash": "e" * 64})
    rows = mleportal.verify_history(portal.url, "3:" + "e" * 64)
    found = {what: (result, detail) for what, result, detail in rows}
    assert found["history event 2"][0] == "differs" and "hash mismatch" in found["history event 2"][1]
    assert found["known head"][0] == "differs" and "no event 3" in found["known head"][1]
    assert found["board"][0] == "differs" and "is not an event of the history" in found["board"][1]
    assert found["history head"][0] == "differs"


def test_answers_of_the_wrong_shape_could_not_be_checked(mleportal, portal):
    serve(portal, [{"seq": 1, "hash": "x"}], [{"no": "submission id"}], head={"seq": 1, "hash": "x"})
    [(what, result, detail)] = mleportal.verify_history(portal.url, None)
    assert result == "could not check" and "expected shape" in detail
    portal.answer("GET", "/api/v1/history/?after=0&limit=1000", (200, {"events": ["not an event"], "head": {}}))
    portal.answer(
        "GET",
        "/api/v1/leaderboard/?board=all&excluding_leaky=no&page_size=1000&page=1",
        (200, {"history_head": {"seq": 0, "hash": "0" * 64}, "pages": 1, "rows": []}),
    )
    portal.answer(
        "GET",
        "/api/v1/leaderboard/?board=all&excluding_leaky=yes&page_size=1000&page=1",
        (200, {"history_head": {"seq": 0, "hash": "0" * 64}, "pages": 1, "rows": []}),
    )
    [(what, result, detail)] = mleportal.verify_history(portal.url, None)
    assert result == "could not check" and "not a page of the board's history" in detail
    portal.answer("GET", "/api/v1/history/?after=0&limit=1000", (503, {"error": {"message": "down for a moment"}}))
    [(what, result, detail)] = mleportal.verify_history(portal.url, None)
    assert result == "could not check" and "down for a moment" in detail
