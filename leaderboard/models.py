"""The board's stored rows: recomputed from what grading stored when a result or a decision changes
(leaderboard/services.py), read by pages, exports and the API without recomputing anything."""

from django.db import models

from leaderboard.levels import LEVEL_LABELS, REPORTED


class Entry(models.Model):
    """A published submission as every board shows it: identity, the transparency columns, footnotes."""

    class Board(models.TextChoices):
        COMPARABLE = "comparable"
        NON_COMPARABLE = "non_comparable", "non-comparable"

    class Verified(models.TextChoices):
        HOSTED = "hosted", "verified: hosted run"  # the portal ran the agent itself
        REGRADED = "regraded", "verified: re-graded"  # re-graded here from the team's submissions
        SELF_REPORTED = "self_reported", "self-reported"  # only grading reports: nothing was re-graded

    class TestSetInfo(models.TextChoices):
        NONE = "none", "none seen"
        DECLARED = "declared", "declared by the team"
        FLAGGED = "flagged", "flagged by the checks"

    class Resources(models.TextChoices):
        REFERENCE = "reference", "reference setup"
        BEYOND = "beyond", "beyond the reference"
        UNDECLARED = "undeclared", "not declared"

    submission = models.OneToOneField("grading.Submission", on_delete=models.CASCADE, related_name="board_entry")
    board = models.CharField(max_length=16, choices=Board.choices)
    team = models.CharField(max_length=200)
    agent = models.CharField(max_length=200)
    agent_version = models.CharField(max_length=100, blank=True)
    llms = models.JSONField(default=list)
    llms_text = models.CharField(max_length=1000, blank=True, help_text="The LLMs joined by '; ', for filtering")
    date = models.DateField()
    runtime_hours = models.FloatField(null=True, blank=True)
    hardware = models.JSONField(default=dict, help_text="The manifest's hardware as declared (or measured)")
    hardware_text = models.CharField(max_length=500, blank=True)
    gpu_count = models.PositiveIntegerField(null=True, blank=True)
    vcpus = models.PositiveIntegerField(null=True, blank=True)
    ram_gb = models.FloatField(null=True, blank=True)
    internet_access = models.BooleanField(null=True)
    open_source = models.BooleanField(null=True)
    source_url = models.CharField(max_length=1000, blank=True)
    benchmark_version = models.CharField(max_length=100, blank=True)
    test_set_info = models.CharField(max_length=10, choices=TestSetInfo.choices, default=TestSetInfo.NONE)
    resources = models.CharField(max_length=10, choices=Resources.choices, default=Resources.UNDECLARED)
    verified = models.CharField(max_length=14, choices=Verified.choices)
    evidence_level = models.CharField(
        max_length=10,
        choices=list(LEVEL_LABELS.items()),
        default=REPORTED,
        help_text="How strong the evidence behind its numbers is (leaderboard/levels.py)",
    )
    padded = models.BooleanField(default=False, help_text="Some tier's figure uses the padded aggregate")
    footnotes = models.JSONField(default=list)
    # {"<tier>": {"all" | "excluding_leaky": {"complete": AGG, "padded": AGG, "uses": "complete" | "padded"}}}
    tiers = models.JSONField(default=dict)
    aggregation_version = models.CharField(max_length=30)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-date", "pk"]
        indexes = [models.Index(fields=["board", "date"])]

    def __str__(self) -> str:
        return f"{self.agent} ({self.board})"


class BoardRow(models.Model):
    """One entry in one tier, with or without the known-leaky competitions: what a tab sorts and ranks."""

    entry = models.ForeignKey(Entry, on_delete=models.CASCADE, related_name="rows")
    tier = models.CharField(max_length=10)
    excluding_leaky = models.BooleanField(default=False)
    board = models.CharField(max_length=16, choices=Entry.Board.choices)
    uses = models.CharField(max_length=8, help_text="The aggregate shown: complete or padded")
    seeds = models.PositiveIntegerField()
    any_medal_mean = models.FloatField()
    any_medal_sem = models.FloatField()
    per_seed = models.JSONField(default=list, help_text="Any-medal % per counted seed, for the rank interval")
    # Comparable rows only: the rank on the comparable board of this tier, and its 95% interval.
    rank = models.PositiveIntegerField(null=True, blank=True)
    rank_low = models.PositiveIntegerField(null=True, blank=True)
    rank_high = models.PositiveIntegerField(null=True, blank=True)
    tied_with = models.JSONField(default=list, help_text="Ranks of the comparable rows statistically tied with it")
    # What a page's row shows of its entry, made at refresh time so that a page reads neither the entry's whole
    # figures (both variants, both aggregates of every tier) nor its other rows.
    headline = models.BooleanField(
        default=False,
        help_text="The row the landing view lists for its entry: its first tier of All, Low, Medium, High (per "
        "variant, with or without the known-leaky competitions)",
    )
    shown = models.JSONField(
        default=dict, help_text='Per tier of the entry, in this row\'s variant: {"uses", "agg"}, the aggregate shown'
    )

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["entry", "tier", "excluding_leaky"], name="board_row_unique"),
        ]
        indexes = [models.Index(fields=["tier", "excluding_leaky", "board", "any_medal_mean"], name="board_row_tab")]


class BoardState(models.Model):
    """One row: a counter that each refresh bumps, so cached pages and exports know they are stale, and the head
    of the board's history as of that version (written with the version, so a cached answer's head is its own)."""

    version = models.PositiveBigIntegerField(default=0)
    refreshed_at = models.DateTimeField(null=True, blank=True)
    history_seq = models.PositiveBigIntegerField(default=0, help_text="The last event of the board's history")
    history_hash = models.CharField(max_length=64, blank=True, help_text="Its hash; empty: no event yet")


class HistoryEvent(models.Model):
    """One event of the board's history (leaderboard/history.py): append-only, each hashing the one before.

    `payload` is the event without its hash, as the canonical JSON text that `hash` is the SHA-256 of; the
    other columns repeat what lookups need. Nothing updates or deletes a row (on PostgreSQL a trigger refuses
    it), and two events can never share a predecessor."""

    seq = models.PositiveBigIntegerField(primary_key=True)
    submission_id = models.PositiveBigIntegerField(
        null=True, blank=True, help_text="The subject's submission; empty for an event of a competition"
    )
    payload = models.TextField()
    prev_hash = models.CharField(max_length=64, unique=True)
    hash = models.CharField(max_length=64, unique=True)

    class Meta:
        ordering = ["seq"]
        indexes = [models.Index(fields=["submission_id", "seq"], name="history_subject")]

    def __str__(self) -> str:
        return f"board history event {self.seq}"
