"""The board's history starts from the board as it is: one `genesis` event per published entry, recording its
state (leaderboard/history.py's event format, frozen here as it was when this migration was written)."""

import hashlib
import json

from django.db import migrations
from django.utils import timezone

FORMAT = "board-history/1"
ZERO_HASH = "0" * 64
VARIANTS = ("all", "excluding_leaky")


def canonical(value):
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=True, allow_nan=False).encode()


def entry_state(*, board, tiers):
    shown = {}
    for variant in VARIANTS:
        shown[variant] = {}
        for tier, variants in tiers.items():
            figures = variants.get(variant) or {}
            uses = figures.get("uses")
            if uses:
                shown[variant][tier] = {**figures[uses], "padded": uses == "padded", "uses": uses}
    return json.loads(canonical({"published": True, "board": board, "tiers": shown}))


def genesis(apps, schema_editor):
    Entry = apps.get_model("leaderboard", "Entry")
    HistoryEvent = apps.get_model("leaderboard", "HistoryEvent")
    BoardState = apps.get_model("leaderboard", "BoardState")
    if HistoryEvent.objects.exists():
        return
    now = timezone.now()
    time = now.strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    seq, prev_hash = 0, ZERO_HASH
    published = Entry.objects.filter(submission__status="published").order_by("pk")
    for entry in published.iterator(chunk_size=200):
        seq += 1
        event = {
            "format": FORMAT,
            "seq": seq,
            "kind": "genesis",
            "time": time,
            "subject": {
                "submission_id": entry.submission_id,
                "entry_id": entry.pk,
                "agent": entry.agent,
                "team": entry.team,
            },
            "cause": {"reason": "the board's state when its history began"},
            "state": entry_state(board=entry.board, tiers=entry.tiers),
            "prev_hash": prev_hash,
        }
        payload = canonical(event)
        digest = hashlib.sha256(payload).hexdigest()
        HistoryEvent.objects.create(
            seq=seq, submission_id=entry.submission_id, payload=payload.decode(), prev_hash=prev_hash, hash=digest
        )
        prev_hash = digest
    if seq:
        state, _ = BoardState.objects.get_or_create(pk=1)
        state.version += 1
        state.refreshed_at = now
        state.history_seq, state.history_hash = seq, prev_hash
        state.save()


class Migration(migrations.Migration):
    dependencies = [
        ("leaderboard", "0003_board_history"),
    ]

    operations = [migrations.RunPython(genesis, migrations.RunPython.noop)]
