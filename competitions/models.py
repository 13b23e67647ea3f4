from django.db import models


class Benchmark(models.Model):
    """A benchmark at a pinned version (e.g. mle-bench v1 at a commit); later versions live beside it."""

    name = models.CharField(max_length=60)
    version = models.CharField(max_length=30)
    commit = models.CharField(max_length=64, blank=True)
    source_url = models.URLField(blank=True)
    is_current = models.BooleanField(default=False, help_text="The version the board is graded with")

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["name", "version"], name="benchmark_version_unique"),
            models.UniqueConstraint(
                fields=["name"], condition=models.Q(is_current=True), name="benchmark_one_current_version"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.name} {self.version}"


class Competition(models.Model):
    class Tier(models.TextChoices):
        LOW = "low", "Low (Lite)"
        MEDIUM = "medium", "Medium"
        HIGH = "high", "High"
        NONE = "", "Not in a tier"

    class LeaderboardSource(models.TextChoices):
        """Where the medal thresholds in force come from (competitions.services.leaderboard_in_force)."""

        KAGGLE = "kaggle", "kaggle (shipped)"
        PACK = "pack", "pack's own leaderboard.csv"
        SIMULATED = "simulated", "simulated for the synthetic answers"
        NONE = "", "none: medals unknown"

    benchmark = models.ForeignKey(Benchmark, on_delete=models.PROTECT, related_name="competitions")
    slug = models.CharField(max_length=100, help_text="The competition id, e.g. spooky-author-identification")
    name = models.CharField(max_length=200)
    tier = models.CharField(max_length=10, choices=Tier.choices, blank=True)
    splits = models.JSONField(default=list, help_text="Every split listing it: low, medium, high, split75, dev")
    category = models.CharField(max_length=100, blank=True)
    metric = models.TextField(help_text="What the grader computes, with every parameter that changes the number")
    metric_family = models.CharField(max_length=60, blank=True)
    higher_is_better = models.BooleanField(help_text="By the metric's meaning; medals use the leaderboard's order")
    submission_columns = models.JSONField(default=list)
    id_column = models.CharField(max_length=100, blank=True)
    answers_format = models.TextField(blank=True)
    answers_file = models.CharField(
        max_length=200, blank=True, help_text="In an MLE-bench data dir, e.g. prepared/private/test.csv"
    )
    sample_submission_file = models.CharField(max_length=200, blank=True)
    validation_rules = models.JSONField(default=list)
    known_issues = models.JSONField(default=list)
    deviations = models.TextField(blank=True, help_text="Where the benchmark's grader departs from the Kaggle metric")
    answers_rows_estimate = models.PositiveIntegerField(null=True, blank=True)
    grader_name = models.CharField(max_length=60, blank=True, help_text="Registered grader; empty when none yet")
    grader_params = models.JSONField(default=dict, blank=True)

    # The shipped data, kept as shipped so that a pack without a leaderboard of its own can fall back to it.
    kaggle_leaderboard_scores = models.JSONField(
        default=list, blank=True, help_text="The shipped Kaggle leaderboard's scores in file order, best first"
    )
    official_thresholds = models.JSONField(
        null=True,
        blank=True,
        help_text="Shipped thresholds of the official grader's reports ({gold, silver, bronze, median, "
        "is_lower_better}); they win over the thresholds computed from our Kaggle copy",
    )

    # The leaderboard in force, and the thresholds it gives.
    leaderboard_source = models.CharField(max_length=10, choices=LeaderboardSource.choices, blank=True)
    leaderboard_scores = models.JSONField(default=list, blank=True, help_text="Scores in rank order, best first")
    thresholds_from_official_report = models.BooleanField(
        default=False,
        help_text="Thresholds read from the official grader's reports, where our leaderboard copy is incomplete",
    )
    is_lower_better = models.BooleanField(null=True)
    gold_threshold = models.FloatField(null=True)
    silver_threshold = models.FloatField(null=True)
    bronze_threshold = models.FloatField(null=True)
    median_threshold = models.FloatField(null=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["benchmark", "slug"], name="competition_unique_per_benchmark")]
        ordering = ["slug"]

    def __str__(self) -> str:
        return self.slug

    @property
    def has_thresholds(self) -> bool:
        return self.gold_threshold is not None

    @property
    def leaderboard_label(self) -> str:
        """Which leaderboard is in force, in the words the import command and the competition page use."""
        if self.leaderboard_source == self.LeaderboardSource.KAGGLE and self.thresholds_from_official_report:
            return "official thresholds (with the shipped kaggle leaderboard)"
        return self.get_leaderboard_source_display()


class CompetitionPack(models.Model):
    """The files that make a competition gradable. Answers live in private storage, never served."""

    competition = models.OneToOneField(Competition, on_delete=models.CASCADE, related_name="pack")
    answers_path = models.CharField(max_length=500, help_text="Path in the private storage")
    answers_sha256 = models.CharField(max_length=64)
    answers_bytes = models.PositiveBigIntegerField()
    sample_submission_path = models.CharField(max_length=500, blank=True, help_text="Path in the private storage")
    description = models.TextField(blank=True)
    grader_name = models.CharField(max_length=60, blank=True, help_text="Overrides the registry's grader when set")
    grader_params = models.JSONField(default=dict, blank=True)
    synthetic = models.BooleanField(default=False, help_text="Made-up demo data, with a simulated leaderboard")
    leaderboard_scores = models.JSONField(
        default=list, blank=True, help_text="The pack's own leaderboard in file order, best first; empty: none"
    )
    leaderboard_answers_sha256 = models.CharField(
        max_length=64,
        blank=True,
        help_text="For a simulated leaderboard: the SHA-256 of the answers it was simulated for. It applies "
        "only while the pack's answers have this hash",
    )
    max_submission_bytes = models.PositiveBigIntegerField(
        null=True,
        blank=True,
        help_text="The largest size an honest submission can reach: rows x the widest honest row, plus the header",
    )
    public_archive_path = models.CharField(
        max_length=500, blank=True, help_text="The public data as a .tar.gz in private storage; empty: none"
    )
    public_sha256 = models.CharField(max_length=64, blank=True)
    public_bytes = models.PositiveBigIntegerField(default=0)
    source = models.CharField(max_length=300, help_text="Where the pack was imported from")
    source_layout = models.CharField(max_length=20)
    imported_at = models.DateTimeField(auto_now=True)


class KnownIssue(models.Model):
    """A known weakness of a benchmark version (MECHANICS (i)): a test-label leak, a grader loophole, other.

    Shipped in competitions/data/<benchmark>/known_issues.json and loaded by load_competitions, which adds
    what is new and never overwrites a maintainer's edit (edited=True) or brings back one they deleted.
    """

    class Kind(models.TextChoices):
        LEAK = "leak", "test-label leak (known_leaky_competition)"
        LOOPHOLE = "loophole", "grader loophole (grader_loophole)"
        OTHER = "other", "other"

    benchmark = models.ForeignKey(Benchmark, on_delete=models.CASCADE, related_name="known_issues")
    competition_slug = models.CharField(max_length=100)
    kind = models.CharField(max_length=10, choices=Kind.choices)
    description = models.TextField()
    data = models.JSONField(
        default=dict, blank=True, help_text='For a loophole, how to detect it, e.g. {"detector": "empty_cells"}'
    )
    shipped_key = models.CharField(
        max_length=200, blank=True, help_text="The shipped entry it came from; empty: added here"
    )
    edited = models.BooleanField(default=False, help_text="Changed by a maintainer: later loads leave it as it is")

    class Meta:
        ordering = ["benchmark", "competition_slug", "kind"]
        constraints = [
            models.UniqueConstraint(
                fields=["benchmark", "shipped_key"],
                condition=~models.Q(shipped_key=""),
                name="known_issue_unique_shipped",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.competition_slug}: {self.kind}"


class KnownIssueRemoval(models.Model):
    """A shipped known issue a maintainer deleted, so that the next load does not bring it back."""

    benchmark = models.ForeignKey(Benchmark, on_delete=models.CASCADE, related_name="+")
    shipped_key = models.CharField(max_length=200)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["benchmark", "shipped_key"], name="known_issue_removal_unique")]
