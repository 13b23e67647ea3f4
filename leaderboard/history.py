"""The board's history: an append-only, hash-chained log of every change to a published number.

An event is a JSON object::

    {"format": "board-history/1", "seq": 7, "kind": "decision", "time": "2026-12-03T10:00:00.123456Z",
     "subject": {"submission_id": 12, "entry_id": 7, "agent": "…", "team": "…"},
     "cause": {"decision": "non_comparable", "reason": "…", "flag": null},
     "state": {"published": true, "board": "non_comparable", "tiers": {"all": {…}, "excluding_leaky": {…}}},
     "prev_hash": "<hash of event 6>", "hash": "<SHA-256 of this event without its hash>"}

``hash`` is the SHA-256 (hex) of ``canonical(event without "hash")``; the first event's ``prev_hash`` is 64
zeros. ``state`` is the entry's published state after the event: its board and, per variant (``all``,
``excluding_leaky``) and tier, the figures the leaderboard API serves in a row's ``tiers``; ``{"published":
false}`` once it left the board. An event of a competition (``kind`` ``competition``) has the competition as
subject and its thresholds in force as state. README "The board's history" documents the format for others.

Appends happen in the transaction of the change they record (leaderboard/services.py ``entry_refresh``, the
one place the board's entries are written, and the competition registry's threshold changes), one writer at a
time: each append first bumps the board's version (leaderboard.models.BoardState, one row), which both takes
the row's write lock (PostgreSQL's row lock; SQLite's database lock) and makes every cached answer stale, and
writes the new head into that row with the version, so an answer cached for a version carries that version's
head. The primary key on ``seq`` and the unique ``prev_hash`` make a fork or a reused number impossible even
if the lock were bypassed.
"""

import hashlib
import json
from dataclasses import dataclass
from datetime import UTC
from typing import Any

from django.db import connection, transaction
from django.utils import timezone

from leaderboard.models import BoardState, Entry, HistoryEvent

FORMAT = "board-history/1"
ZERO_HASH = "0" * 64
HISTORY_HEAD_HEADER = "X-Board-History-Head"  # SEQ:HASH, on every answer of the board
# What an event records: the board's state when the history began; an entry coming onto the board or leaving
# it through the pipeline; a maintainer's decision; a re-grade; an MLE-bench import; a change of a
# competition's thresholds; a rebuild of the board; any other change of an entry's figures.
KINDS = ("genesis", "publication", "withdrawal", "decision", "regrade", "import", "competition", "rebuild", "update")
# Causes a change may pass down (grading.signals.board_cause); the others follow from the states.
GIVEN_CAUSES = ("decision", "regrade", "import", "rebuild")
WITHDRAWN: dict[str, Any] = {"published": False}
VARIANTS = ("all", "excluding_leaky")
MAX_PAGE = 1000


def canonical(value: Any) -> bytes:
    """The one byte string an event hashes as: JSON with keys sorted, no spaces, ASCII only (every other
    character as a \\u escape), numbers as Python writes them (shortest round-trip floats), no NaN."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=True, allow_nan=False).encode()


def event_hash(event: dict[str, Any]) -> str:
    return hashlib.sha256(canonical({key: value for key, value in event.items() if key != "hash"})).hexdigest()


def entry_state(*, board: str, tiers: dict[str, dict]) -> dict[str, Any]:
    """A published entry's state from its board and its stored figures (Entry.tiers): per variant and tier,
    the aggregate it shows with `padded` and `uses`, as the leaderboard API serves a row's `tiers`."""
    shown: dict[str, dict] = {}
    for variant in VARIANTS:
        shown[variant] = {}
        for tier, variants in tiers.items():
            figures = variants.get(variant) or {}
            uses = figures.get("uses")
            if uses:
                shown[variant][tier] = {**figures[uses], "padded": uses == "padded", "uses": uses}
    # As stored JSON reads back: a tuple is a list, a float stays the float it was.
    return json.loads(canonical({"published": True, "board": board, "tiers": shown}))


@dataclass(frozen=True)
class Head:
    seq: int
    hash: str

    def as_dict(self) -> dict[str, Any]:
        return {"seq": self.seq, "hash": self.hash}

    def __str__(self) -> str:
        """As the X-Board-History-Head header and the client's --known-head write it: SEQ:HASH."""
        return f"{self.seq}:{self.hash}"


EMPTY_HEAD = Head(0, ZERO_HASH)


def head_of(seq: int | None, digest: str | None) -> Head:
    return Head(int(seq), digest) if seq and digest else EMPTY_HEAD


def board_head() -> Head:
    """The head as of now (an answer that caches its body takes the head with its board version instead)."""
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT history_seq, history_hash FROM {BoardState._meta.db_table} WHERE id = 1")  # noqa: S608
        found = cursor.fetchone()
    return head_of(*found) if found else EMPTY_HEAD


def _now() -> str:
    return timezone.now().astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _writer_lock() -> Head:
    """Take the board's one write lock for this transaction, bumping its version (every cached answer is stale
    once this transaction commits), and return the head as of the lock."""
    table = BoardState._meta.db_table
    with connection.cursor() as cursor:
        cursor.execute(
            f"UPDATE {table} SET version = version + 1, refreshed_at = %s WHERE id = 1"  # noqa: S608
            " RETURNING history_seq, history_hash",
            [connection.ops.adapt_datetimefield_value(timezone.now())],
        )
        found = cursor.fetchone()
    if found is not None:
        return head_of(*found)
    # No board state yet (a new portal): made from the last event there is, if any, then locked as above.
    last = HistoryEvent.objects.order_by("-seq").values_list("seq", "hash").first()
    BoardState.objects.get_or_create(pk=1, defaults={"history_seq": last[0], "history_hash": last[1]} if last else {})
    return _writer_lock()


class HistoryBroken(RuntimeError):
    """The head kept with the board's version is not an event of the history: someone changed one of them."""


def append(
    *, kind: str, subject: dict[str, Any], cause: dict[str, Any], state: dict[str, Any], submission_id: int | None
) -> HistoryEvent:
    """Append one event, in the caller's transaction, after the last one."""
    if kind not in KINDS:
        raise ValueError(f"no event of kind {kind!r}")
    if not connection.in_atomic_block:
        raise RuntimeError("an event is appended in the transaction of the change it records")
    head = _writer_lock()
    # The head kept with the board's version is the last event: both are written in the transaction of every
    # append. Were it ever behind, the insert would fail on the event's number or its predecessor (no fork);
    # were it ahead of the events, or another hash, this refuses (no gap).
    if head.seq and not HistoryEvent.objects.filter(seq=head.seq, hash=head.hash).exists():
        raise HistoryBroken(f"the board's history head {head} is not its last event; nothing was appended")
    seq, prev_hash = head.seq + 1, head.hash
    event = {
        "format": FORMAT,
        "seq": seq,
        "kind": kind,
        "time": _now(),
        "subject": subject,
        "cause": cause,
        "state": state,
        "prev_hash": prev_hash,
    }
    payload = canonical(event)
    digest = hashlib.sha256(payload).hexdigest()
    recorded = HistoryEvent.objects.create(
        seq=seq, submission_id=submission_id, payload=payload.decode(), prev_hash=prev_hash, hash=digest
    )
    BoardState.objects.filter(pk=1).update(history_seq=seq, history_hash=digest)
    return recorded


def last_entry_event(submission_id: int) -> dict[str, Any] | None:
    found = HistoryEvent.objects.filter(submission_id=submission_id).order_by("-seq").values_list("payload").first()
    return json.loads(found[0]) if found else None


def _kind(*, cause: dict[str, Any] | None, before: dict[str, Any], after: dict[str, Any]) -> tuple[str, dict]:
    """The event's kind and cause: the one the change passed down, else what the states say happened."""
    given = dict(cause or {})
    kind = given.pop("kind", "")
    if kind in GIVEN_CAUSES:
        return kind, given
    if after["published"] and not before["published"]:
        board = "comparable" if after["board"] == Entry.Board.COMPARABLE else "non-comparable"
        return "publication", {"reason": f"published on the {board} board"}
    if not after["published"]:
        return "withdrawal", {"reason": given.get("reason") or "the entry left the board"}
    return "update", {"reason": given.get("reason") or "the entry's figures were recomputed"}


def entry_record(*, submission_id: int, entry: Entry | None, state: dict[str, Any], cause: dict | None) -> bool:
    """Record an entry's published state when it differs from the last one recorded (True when it did).

    Called by leaderboard.services.entry_refresh in its transaction, under the submission's row lock, so the
    last state it compares with cannot move meanwhile; `entry` is the entry as written (or as it was, when
    it is removed)."""
    last = last_entry_event(submission_id)
    before = last["state"] if last else WITHDRAWN
    if before == state:
        return False
    kind, why = _kind(cause=cause, before=before, after=state)
    previous = last["subject"] if last else {}
    subject = {
        "submission_id": submission_id,
        "entry_id": entry.pk if entry is not None else previous.get("entry_id"),
        "agent": entry.agent if entry is not None else previous.get("agent", ""),
        "team": entry.team if entry is not None else previous.get("team", ""),
    }
    append(kind=kind, subject=subject, cause=why, state=state, submission_id=submission_id)
    return True


def thresholds_changed_receiver(*, competition: Any, reason: str, **_: Any) -> None:
    """competitions.signals.thresholds_changed, in the transaction of the change."""
    competition_record(competition=competition, reason=reason)


def competition_record(*, competition: Any, reason: str) -> None:
    """Record a competition's thresholds in force after a change."""
    state = {
        "leaderboard_source": competition.leaderboard_source,
        "thresholds": {
            "gold": competition.gold_threshold,
            "silver": competition.silver_threshold,
            "bronze": competition.bronze_threshold,
            "median": competition.median_threshold,
            "is_lower_better": competition.is_lower_better,
        },
        "thresholds_from_official_report": competition.thresholds_from_official_report,
    }
    benchmark = competition.benchmark
    subject = {"competition": competition.slug, "benchmark": f"{benchmark.name} {benchmark.version}"}
    cause = {"reason": f"the thresholds in force changed: {reason}"}
    with transaction.atomic():
        append(kind="competition", subject=subject, cause=cause, state=state, submission_id=None)


# --- reads ---------------------------------------------------------------------------------------------


def event_as_served(row: HistoryEvent) -> dict[str, Any]:
    return {**json.loads(row.payload), "hash": row.hash}


def history_page(*, after: int, limit: int) -> tuple[list[dict[str, Any]], Head, bool]:
    """Events after `after`, oldest first, up to the head as of now: (events, head, more to come)."""
    head = board_head()
    rows = list(HistoryEvent.objects.filter(seq__gt=after, seq__lte=head.seq).order_by("seq")[: limit + 1])
    return [event_as_served(row) for row in rows[:limit]], head, len(rows) > limit


def history_recent(*, before: int | None, limit: int) -> tuple[list[dict[str, Any]], bool]:
    """Events before `before` (or the newest), newest first, each with the state its subject had before it
    (`previous`, None for the first event of its subject): what the history page shows."""
    rows = HistoryEvent.objects.order_by("-seq")
    if before is not None:
        rows = rows.filter(seq__lt=before)
    found = list(rows[: limit + 1])
    events = []
    for row in found[:limit]:
        event = event_as_served(row)
        earlier = None
        if row.submission_id is not None:
            earlier = (
                HistoryEvent.objects.filter(submission_id=row.submission_id, seq__lt=row.seq)
                .order_by("-seq")
                .values_list("payload", flat=True)
                .first()
            )
        event["previous"] = json.loads(earlier)["state"] if earlier else None
        events.append(event)
    return events, len(found) > limit


KIND_LABELS = {
    "genesis": "history begins",
    "publication": "published",
    "withdrawal": "withdrawn",
    "decision": "maintainer's decision",
    "regrade": "re-grade",
    "import": "MLE-bench import",
    "competition": "thresholds changed",
    "rebuild": "board rebuilt",
    "update": "figures recomputed",
}
BOARD_WORDS = {"comparable": "comparable", "non_comparable": "non-comparable"}


def _figure(shown: dict | None) -> str:
    if not shown:
        return "—"
    any_medal = shown.get("any_medal") or {}
    text = f"{any_medal.get('mean', 0):.1f} ± {any_medal.get('sem', 0):.1f} ({shown.get('seeds')} seeds"
    return text + (", padded)" if shown.get("padded") else ")")


def _where(state: dict | None) -> str:
    if not state or not state.get("published"):
        return "off the board"
    return f"{BOARD_WORDS.get(state.get('board', ''), state.get('board', ''))} board"


def event_view(event: dict[str, Any], *, listed: set[int], tier_labels: dict[str, str]) -> dict[str, Any]:
    """What the history page shows of an event: what changed (board and each tier's any-medal figure, before
    and after), when, why, and a link to the entry while it is listed (`listed`: the entry ids on the board)."""
    subject, cause, state = event.get("subject") or {}, event.get("cause") or {}, event.get("state") or {}
    before = event.get("previous")
    view: dict[str, Any] = {
        "seq": event["seq"],
        "time": event["time"],
        "when": str(event["time"])[:19].replace("T", " "),
        "kind": event["kind"],
        "kind_label": KIND_LABELS.get(event["kind"], event["kind"]),
        "reason": cause.get("reason", ""),
        "decision": cause.get("decision", ""),
        "flag": cause.get("flag") or "",
        "hash": event["hash"],
        "changes": [],
    }
    if "competition" in subject:
        view["subject"] = f"competition {subject['competition']}"
        thresholds = state.get("thresholds") or {}
        view["changes"] = [
            (name, "", "—" if thresholds.get(name) is None else f"{thresholds[name]:g}")
            for name in ("gold", "silver", "bronze", "median")
        ]
        return view
    view["subject"] = " · ".join(text for text in (subject.get("agent"), subject.get("team")) if text)
    entry_id = subject.get("entry_id")
    view["entry_id"] = entry_id
    view["entry_listed"] = entry_id in listed and bool(state.get("published"))
    if _where(before) != _where(state):
        view["changes"].append(("Where", "" if before is None else _where(before), _where(state)))
    old_tiers = ((before or {}).get("tiers") or {}).get("all") or {}
    new_tiers = (state.get("tiers") or {}).get("all") or {}
    for tier, label in tier_labels.items():
        old, new = old_tiers.get(tier), new_tiers.get(tier)
        if old != new:
            view["changes"].append((label, "" if before is None else _figure(old), _figure(new)))
    old_leaky = ((before or {}).get("tiers") or {}).get("excluding_leaky")
    if before is not None and old_leaky != (state.get("tiers") or {}).get("excluding_leaky"):
        view["changes"].append(("Without the known-leaky competitions", "", "changed"))
    return view
