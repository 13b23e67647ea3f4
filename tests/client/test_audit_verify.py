"""`mleportal verify` recomputes a random audit's choice from the published head and the submission's id, the
same way the portal made it (grading/audit_choice.py), and finds that head in the board's public history."""

from grading.audit_choice import audit_choice, audit_seed

HEAD = "3f" * 32
CANDIDATES = [f"competition-{n}" for n in range(12)]


class History:
    """The history API as the client reads it: one event per page."""

    def __init__(self, events: dict[int, str]):
        self.events = events

    def get_json(self, path: str) -> dict:
        after = int(path.split("after=")[1].split("&")[0])
        seq = after + 1
        return {"events": [{"seq": seq, "hash": self.events[seq]}] if seq in self.events else []}


def _served(submission_id=41, **audit):
    seed = audit_seed(head_hash=HEAD, submission_id=submission_id)
    body = {
        "head": {"seq": 5, "hash": HEAD},
        "seed": seed,
        "candidates": CANDIDATES,
        "competitions": audit_choice(seed=seed, candidates=CANDIDATES, k=2),
        **audit,
    }
    return {"submission_id": submission_id, "audit": body}


def test_the_client_chooses_as_the_portal_does(mleportal):
    for submission_id in range(1, 40):
        seed = audit_seed(head_hash=HEAD, submission_id=submission_id)
        assert mleportal.audit_choice(HEAD, submission_id, CANDIDATES, 2) == (
            seed,
            audit_choice(seed=seed, candidates=CANDIDATES, k=2),
        )


def test_a_matching_choice_and_head_verify(mleportal):
    rows = mleportal.audit_rows(History({5: HEAD}), _served())
    assert [(what, result) for what, result, _ in rows] == [
        ("audit choice", mleportal.VERIFIED),
        ("audit head", mleportal.VERIFIED),
    ]


def test_a_choice_other_than_the_seed_gives_differs(mleportal):
    served = _served()
    served["audit"]["competitions"] = ["competition-0", "competition-1"]
    if served["audit"]["competitions"] == _served()["audit"]["competitions"]:
        served["audit"]["competitions"] = ["competition-2", "competition-3"]
    ((what, result, detail),) = mleportal.audit_rows(History({5: HEAD}), served)
    assert (what, result) == ("audit choice", mleportal.DIFFERS)
    assert "the portal shows" in detail


def test_a_head_that_is_not_in_the_history_gives_differs(mleportal):
    rows = mleportal.audit_rows(History({5: "ab" * 32}), _served())
    assert rows[1][0] == "audit head" and rows[1][1] == mleportal.DIFFERS


def test_an_entry_without_an_audit_adds_no_row(mleportal):
    assert mleportal.audit_rows(History({}), {"submission_id": 1, "audit": None}) == []


def test_a_competition_left_out_of_the_draw_gives_differs(mleportal):
    # The portal drops one of the bundle's competitions from the candidates and redraws: the choice recomputes
    # from what it shows, so only the evidence's own runs can tell.
    shown = [slug for slug in CANDIDATES if slug != "competition-7"]
    seed = audit_seed(head_hash=HEAD, submission_id=41)
    served = _served(candidates=shown, competitions=audit_choice(seed=seed, candidates=shown, k=2))
    assert [r[1] for r in mleportal.audit_rows(History({5: HEAD}), served)] == [mleportal.VERIFIED] * 2
    ((what, result, detail),) = mleportal.audit_rows(History({5: HEAD}), served, evidence_competitions=set(CANDIDATES))
    assert (what, result) == ("audit candidates", mleportal.DIFFERS)
    assert "competition-7" in detail
    rows = mleportal.audit_rows(History({5: HEAD}), _served(), evidence_competitions=set(CANDIDATES))
    assert [r[1] for r in rows] == [mleportal.VERIFIED] * 2
