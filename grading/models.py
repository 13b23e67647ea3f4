from django.conf import settings
from django.db import models


class Decision(models.TextChoices):
    """What a maintainer decides on a flag or a whole entry (SPEC section 6, review decision)."""

    ACCEPT = "accept"  # the flag stops blocking
    NON_COMPARABLE = "non_comparable"  # listed, but in the non-comparable table, with the reason as footnote
    REJECT = "reject"  # not listed
    REQUEST_CHANGES = "request_changes"  # the team is asked to upload again


class Submission(models.Model):
    """One uploaded run bundle (or hosted run) on its way to the board."""

    class Status(models.TextChoices):
        RECEIVED = "received"
        VALIDATING = "validating"
        GRADING = "grading"
        CHECKING = "checking"
        IN_REVIEW = "in_review"
        PUBLISHED = "published"
        REJECTED = "rejected"
        CHANGES_REQUESTED = "changes_requested"  # a maintainer asked the team to upload again
        FAILED = "failed"

    class Origin(models.TextChoices):
        UPLOAD = "upload"  # a run bundle uploaded by the team: re-graded from its submissions
        HOSTED = "hosted"  # run by the portal's own workers: runtime and hardware measured, not declared
        IMPORT = "import"  # brought in from an existing board's grading reports: self-reported, never re-graded

    # Where the pipeline leaves a submission: nothing more happens to it until a person acts (a review decision,
    # a re-grade, an upload that replaces it). Not final: in_review, published and failed can still move.
    SETTLED_STATUSES = (Status.IN_REVIEW, Status.PUBLISHED, Status.REJECTED, Status.CHANGES_REQUESTED, Status.FAILED)
    # Rejected and failed submissions do not count against the team's daily quota.
    NOT_COUNTED = (Status.REJECTED, Status.FAILED)

    team = models.ForeignKey("accounts.Team", on_delete=models.PROTECT, related_name="submissions")
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, related_name="+")
    benchmark = models.ForeignKey("competitions.Benchmark", on_delete=models.PROTECT, related_name="submissions")
    status = models.CharField(max_length=20, choices=Status.choices, default=Status.RECEIVED)
    status_reason = models.TextField(blank=True)
    status_changed_at = models.DateTimeField(auto_now_add=True)
    created_at = models.DateTimeField(auto_now_add=True)

    manifest = models.JSONField(default=dict, blank=True)
    bundle_name = models.CharField(max_length=300, blank=True, help_text="Path of the archive in private storage")
    bundle_bytes = models.PositiveBigIntegerField(default=0)
    report_only = models.BooleanField(default=False)
    origin = models.CharField(max_length=8, choices=Origin.choices, default=Origin.UPLOAD)
    external_id = models.CharField(
        max_length=200, blank=True, help_text="What an imported entry is in the board it came from (its experiment id)"
    )
    report_claims = models.JSONField(
        default=dict,
        blank=True,
        help_text="Read from the team's own reports at intake: entries per competition and the problems found",
    )
    progress_done = models.PositiveIntegerField(default=0)
    progress_total = models.PositiveIntegerField(default=0)
    aggregation_version = models.CharField(max_length=30, blank=True)
    notified_at = models.DateTimeField(null=True, blank=True)
    # The comparability rule's verdict, stored by the checking step and after each review decision:
    # {"comparable": bool, "reasons": [text], "tiers": {"<tier>": {"comparable": bool, "reasons": [text]}}}.
    comparability = models.JSONField(default=dict, blank=True)
    # A maintainer's decision on the whole entry (blank: none) and its public reason.
    review_decision = models.CharField(max_length=20, choices=Decision.choices, blank=True)
    review_reason = models.TextField(blank=True)
    replaces = models.ForeignKey(
        "self",
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="replaced_by",
        help_text="The earlier submission a maintainer asked the team to upload again",
    )
    registration = models.ForeignKey(
        "Registration",
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="submissions",
        help_text="The team's registration its manifest names: every registered (competition, seed) counts",
    )
    # The lapsed registrations of its team, agent and version that no bundle named, as its last check counted them
    # (grading.selectors.unnamed_registrations): [{"id", "competitions", "seeds"}], each registered run a failure.
    unnamed_registrations = models.JSONField(default=list, blank=True)

    class Meta:
        ordering = ["-created_at"]
        indexes = [models.Index(fields=["team", "created_at"]), models.Index(fields=["status", "status_changed_at"])]
        constraints = [
            models.UniqueConstraint(
                fields=["benchmark", "origin", "external_id"],
                condition=~models.Q(external_id=""),
                name="submission_unique_external_id",
            ),
        ]

    def __str__(self) -> str:
        return f"submission {self.pk} ({self.status})"

    @property
    def comparable(self) -> bool:
        """The comparability rule's verdict; False until the rule has run, and from a re-grade or a decision that
        takes the entry off the comparable board until it runs again."""
        return bool((self.comparability or {}).get("comparable", False))

    @property
    def split(self) -> str:
        return (self.manifest.get("benchmark") or {}).get("split", "")


class Run(models.Model):
    """One (competition, seed) of a submission, graded by its own task."""

    class Status(models.TextChoices):
        PENDING = "pending"  # waiting for the scheduler (grading/services/scheduling.py)
        QUEUED = "queued"  # its message is in the broker; no worker has claimed it yet
        GRADING = "grading"
        DONE = "done"

    submission = models.ForeignKey(Submission, on_delete=models.CASCADE, related_name="runs")
    competition = models.ForeignKey("competitions.Competition", on_delete=models.PROTECT, related_name="+")
    seed = models.PositiveIntegerField()
    run_group = models.CharField(max_length=300)
    run_id = models.CharField(max_length=300)
    submission_file = models.CharField(max_length=500, blank=True, help_text="Path inside the bundle; empty: none")
    status = models.CharField(max_length=8, choices=Status.choices, default=Status.PENDING)
    attempts = models.PositiveSmallIntegerField(default=0)
    queue_rank = models.PositiveIntegerField(null=True, blank=True, help_text="Order of dispatch within its submission")
    queued_at = models.DateTimeField(null=True, blank=True)
    claimed_at = models.DateTimeField(null=True, blank=True)
    worker = models.CharField(max_length=200, blank=True, help_text="The worker process that claimed it last")
    graded_at = models.DateTimeField(null=True, blank=True)
    grader_version = models.CharField(max_length=40, blank=True)
    # Set when grading failed for a reason of ours (a grader's bug, answers we cannot read), after the retries:
    # the run is done without a result, counts for nothing, and holds the entry until a maintainer re-grades it.
    grading_error = models.TextField(blank=True, help_text="Why the server could not grade it; empty: no error")
    outside_registration = models.BooleanField(
        default=False, help_text="Its log lacks the nonce of the registration its bundle names: it does not count"
    )

    claimed = models.JSONField(null=True, blank=True, help_text="The team's own report for this run")
    regraded = models.JSONField(null=True, blank=True, help_text="The server's report (MLE-bench fields + reason)")
    score = models.FloatField(null=True, blank=True)
    valid_submission = models.BooleanField(default=False)
    any_medal = models.BooleanField(default=False)
    answer_agreement = models.JSONField(
        null=True,
        blank=True,
        help_text="How far the file agrees with the private answers (counts only, never answer content); "
        "measured while grading, read by the answer_copy check, never served",
    )
    submission_sha256 = models.CharField(
        max_length=64, blank=True, help_text="Of its submission.csv (set by the checking step): copies count once"
    )
    copy_key = models.CharField(
        max_length=64,
        blank=True,
        help_text="What copies across seeds are counted by (set by the checking step): the SHA-256 of the earliest "
        "seed's file this one copies once normalised, else its own; empty: submission_sha256 counts",
    )

    class Meta:
        ordering = ["competition__slug", "seed"]
        constraints = [
            models.UniqueConstraint(fields=["submission", "competition", "seed"], name="run_unique_seed"),
            models.UniqueConstraint(fields=["submission", "run_group", "run_id"], name="run_unique_id"),
        ]
        indexes = [
            models.Index(fields=["submission", "status", "queue_rank"], name="run_dispatch_order"),
            models.Index(fields=["status", "queued_at"], name="run_status_queued"),
            models.Index(fields=["claimed_at"], name="run_claimed"),
        ]


class WorkerHeartbeat(models.Model):
    """The last sign of life of one worker process; a run claimed by a process that stopped beating is re-queued."""

    name = models.CharField(max_length=200, unique=True, help_text="host:pid:nonce of the process")
    beat_at = models.DateTimeField()

    def __str__(self) -> str:
        return f"{self.name} at {self.beat_at:%H:%M:%S}"


class PeriodicStamp(models.Model):
    """When a periodic task (sent by celery beat) last finished: how /healthz tells that the scheduler runs."""

    task = models.CharField(max_length=100, unique=True)
    finished_at = models.DateTimeField()

    def __str__(self) -> str:
        return f"{self.task} at {self.finished_at:%H:%M:%S}"


class TierAggregate(models.Model):
    class Kind(models.TextChoices):
        COMPLETE = "complete"
        PADDED = "padded"

    submission = models.ForeignKey(Submission, on_delete=models.CASCADE, related_name="aggregates")
    tier = models.CharField(max_length=10)
    kind = models.CharField(max_length=8, choices=Kind.choices)
    data = models.JSONField(null=True, help_text="SPEC's AGG, or null when no seed qualifies")
    version = models.CharField(max_length=30)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["submission", "tier", "kind"], name="aggregate_unique")]


class Flag(models.Model):
    class Severity(models.TextChoices):
        BLOCKING = "blocking"
        WARNING = "warning"
        INFO = "info"

    submission = models.ForeignKey(Submission, on_delete=models.CASCADE, related_name="flags")
    code = models.CharField(max_length=40)
    severity = models.CharField(max_length=8, choices=Severity.choices)
    tiers = models.JSONField(default=list)
    message = models.TextField()
    evidence = models.JSONField(default=dict)
    private_evidence = models.JSONField(
        default=dict,
        blank=True,
        help_text="Maintainer-only (the review pages): what names other teams' unpublished work; never on the entry",
    )
    key = models.CharField(max_length=200, help_text="What the flag is about, unique per code (e.g. competition/seed)")
    resolution = models.TextField(blank=True, help_text="The decision's public reason")
    created_at = models.DateTimeField(auto_now_add=True)
    # SHA-256 of what the flag says (code, key, severity, tiers, message, evidence): a re-check that yields the
    # same fingerprint keeps the decision; a changed one reopens it.
    fingerprint = models.CharField(max_length=64, blank=True)
    decision = models.CharField(max_length=20, choices=Decision.choices, blank=True)
    decided_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    decided_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["severity", "code", "key"]
        constraints = [models.UniqueConstraint(fields=["submission", "code", "key"], name="flag_unique")]

    @property
    def seriousness(self) -> str:
        """How serious the flag is, in words (README's severity policy)."""
        return SEVERITY_WORDS.get(self.severity, self.severity)


# README's severity policy, in the words a maintainer and a team read next to each flag.
SEVERITY_WORDS: dict[str, str] = {
    Flag.Severity.BLOCKING: "Blocking — the entry stays off the board until a maintainer decides",
    Flag.Severity.WARNING: "Warning — does not block publication; the entry is listed with it",
    Flag.Severity.INFO: "Info — context for the reader; needs no decision",
}


class ReviewEvent(models.Model):
    """One line of an entry's public audit trail: a decision, a team's answer, a flag reopened, a publication."""

    class Kind(models.TextChoices):
        DECISION = "decision"
        TEAM_ANSWER = "team_answer"
        REOPENED = "reopened"  # a re-check changed the evidence of a decided flag
        PUBLISHED = "published"

    submission = models.ForeignKey(Submission, on_delete=models.CASCADE, related_name="review_events")
    flag = models.ForeignKey(Flag, on_delete=models.SET_NULL, null=True, blank=True, related_name="events")
    actor = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    kind = models.CharField(max_length=12, choices=Kind.choices)
    decision = models.CharField(max_length=20, choices=Decision.choices, blank=True)
    reason = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["created_at", "pk"]


class IndexedPrint(models.Model):
    """One hash of what a checked entry holds, so later checks of other teams' entries find what they share by
    looking their own hashes up (an index scan per hash, not a pass over every entry): a submission's
    normalised fingerprint, one winnowed fingerprint of a competition's code, a log file's hash. Written by the
    checking step (grading/services/prints.py); in the database, so every machine's checking step sees it."""

    class Kind(models.TextChoices):
        SUBMISSION = "submission"
        CODE = "code"
        LOG = "log"

    submission = models.ForeignKey(Submission, on_delete=models.CASCADE, related_name="+")
    team = models.ForeignKey("accounts.Team", on_delete=models.CASCADE, related_name="+")
    kind = models.CharField(max_length=10, choices=Kind.choices)
    digest = models.BigIntegerField(help_text="The hash's first 64 bits, signed")
    competition = models.CharField(max_length=200)
    run = models.CharField(max_length=200, blank=True, help_text="competition/seed-N (empty for code)")

    class Meta:
        indexes = [
            # The digest alone (64 random bits tell kinds apart), newest entries first: a small index, one range
            # per lookup.
            models.Index(fields=["digest", "-submission"], name="indexedprint_lookup"),
            models.Index(fields=["submission"], name="indexedprint_submission"),
        ]


class Registration(models.Model):
    """A run group a team registers before running it (SPEC section 9): which agent, which competitions, how many
    seeds. A bundle names it in its manifest and every run's log holds its nonce; every registered (competition,
    seed) counts, a missing one as a failure. Public once an entry uses it or its deadline has passed."""

    team = models.ForeignKey("accounts.Team", on_delete=models.PROTECT, related_name="registrations")
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, related_name="+")
    agent_name = models.CharField(max_length=200)
    agent_version = models.CharField(max_length=200)
    split = models.CharField(max_length=20, blank=True, help_text="The split registered; blank: competitions list it")
    competitions = models.JSONField(default=list, help_text="The competition ids registered, in order")
    seeds = models.PositiveIntegerField()
    image = models.CharField(max_length=71, blank=True, help_text="The agent image's digest, sha256:<64 hex>")
    nonce = models.CharField(max_length=64, unique=True, help_text="Written into each run's log before its submission")
    deadline = models.DateTimeField()
    created_at = models.DateTimeField(auto_now_add=True)
    lapse_checked_at = models.DateTimeField(
        null=True,
        blank=True,
        help_text="When the entries of its team, agent and version were re-checked after its deadline passed",
    )

    class Meta:
        ordering = ["-created_at"]
        indexes = [models.Index(fields=["team", "created_at"])]

    def __str__(self) -> str:
        return f"registration {self.pk} ({self.agent_name} {self.agent_version}, {self.seeds} seeds)"


class Withdrawal(models.Model):
    """A team's request to withdraw a registration (SPEC section 9): once a maintainer accepts it, the registration's
    unreported seeds no longer count as failures, and its reason is public on the entries of that agent."""

    class Status(models.TextChoices):
        PENDING = "pending"
        ACCEPTED = "accepted"
        REFUSED = "refused"

    registration = models.ForeignKey(Registration, on_delete=models.CASCADE, related_name="withdrawals")
    reason = models.TextField(help_text="Why the team withdraws it; public once accepted")
    requested_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, related_name="+")
    requested_at = models.DateTimeField(auto_now_add=True)
    status = models.CharField(max_length=8, choices=Status.choices, default=Status.PENDING)
    decided_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    decided_at = models.DateTimeField(null=True, blank=True)
    decision_reason = models.TextField(blank=True, help_text="The maintainer's reason for the decision")

    class Meta:
        ordering = ["-requested_at"]
        constraints = [
            # At most one request waiting or accepted per registration; a refused one may be asked again.
            models.UniqueConstraint(
                fields=["registration"],
                condition=models.Q(status__in=["pending", "accepted"]),
                name="withdrawal_one_open_per_registration",
            ),
        ]

    def __str__(self) -> str:
        return f"withdrawal of registration {self.registration_id} ({self.status})"
