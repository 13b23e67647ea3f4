from django.conf import settings
from django.db import models


class HostedRun(models.Model):
    """A team's request to run its agent image on the portal's workers: one task per (competition, seed)."""

    class Status(models.TextChoices):
        QUEUED = "queued"  # no task has started yet
        RUNNING = "running"
        COLLECTING = "collecting"  # every task ended; the bundle is being assembled
        GRADING = "grading"  # a submission exists and goes through grading and the checks
        DONE = "done"  # the submission reached a final status
        FAILED = "failed"
        CANCELLED = "cancelled"

    FINAL_STATUSES = (Status.DONE, Status.FAILED, Status.CANCELLED)

    team = models.ForeignKey("accounts.Team", on_delete=models.PROTECT, related_name="hosted_runs")
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, related_name="+")
    benchmark = models.ForeignKey("competitions.Benchmark", on_delete=models.PROTECT, related_name="hosted_runs")
    image = models.CharField(max_length=300, help_text="The agent image, name:tag")
    split = models.CharField(max_length=10)
    seeds = models.PositiveSmallIntegerField()
    time_limit_hours = models.FloatField()
    gpus_per_run = models.PositiveSmallIntegerField(default=0)
    agent = models.JSONField(default=dict, blank=True, help_text="name, version, source_url, commit, open_source")
    llms = models.JSONField(default=list, blank=True)
    notes = models.TextField(blank=True)
    env_names = models.JSONField(default=list, blank=True, help_text="The variables' names; their values are secret")
    env_encrypted = models.TextField(
        blank=True, help_text="The variables as Fernet-encrypted JSON (runners/secrets.py)"
    )
    status = models.CharField(max_length=12, choices=Status.choices, default=Status.QUEUED)
    status_reason = models.TextField(blank=True)
    submission = models.OneToOneField(
        "grading.Submission", on_delete=models.SET_NULL, null=True, blank=True, related_name="hosted_run"
    )
    registration = models.OneToOneField(
        "grading.Registration",
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="hosted_run",
        help_text="The registration the run made for itself when it was asked for; its nonce heads each run.log",
    )
    created_at = models.DateTimeField(auto_now_add=True)
    # When its first task started on a worker: a run cancelled before that used nothing, and costs no quota.
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]
        indexes = [models.Index(fields=["team", "created_at"])]

    def __str__(self) -> str:
        return f"hosted run {self.pk} ({self.status})"


class GpuWorker(models.Model):
    """A machine that runs hosted tasks. It authenticates with its own token and reports its capacity."""

    name = models.CharField(max_length=100, unique=True)
    token_hash = models.CharField(max_length=64, unique=True)
    token_prefix = models.CharField(max_length=16)
    backend = models.CharField(max_length=20, blank=True)
    sandbox = models.CharField(
        max_length=10, blank=True, help_text="The process backend's: bwrap or off ('' from workers that do not say)"
    )
    gpus = models.PositiveSmallIntegerField(default=0)
    gpu_model = models.CharField(max_length=100, blank=True)
    gpu_memory_gb = models.FloatField(default=0)
    cpus = models.FloatField(default=0)
    memory_gb = models.FloatField(default=0)
    slots = models.PositiveSmallIntegerField(default=1)
    version = models.CharField(max_length=40, blank=True)
    registered_at = models.DateTimeField(null=True, blank=True)
    beat_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)
    # What the worker measured of itself (the driver's GPUs, its CPUs and memory), beside what it declares above.
    measured = models.JSONField(default=dict, blank=True)
    # A maintainer's approval of the declared hardware (runners/services/approval.py): None while pending, and
    # again once the worker declares other hardware. An unapproved worker gets no task and promises no capacity.
    approved_at = models.DateTimeField(null=True, blank=True)
    approved_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    approved_hardware = models.JSONField(
        null=True, blank=True, help_text="The declared hardware the last approval was for"
    )
    auto_approve = models.BooleanField(
        default=False, help_text="The one-machine install's own worker (demo_setup): approved as it registers"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name


class HostedTask(models.Model):
    """One (competition, seed) of a hosted run: a container on one worker."""

    class Status(models.TextChoices):
        QUEUED = "queued"
        RUNNING = "running"
        DONE = "done"  # the agent exited (whatever its code); what it left is collected
        TIMED_OUT = "timed_out"  # stopped at the time limit; what it left is collected
        OVER_CAP = "over_cap"  # stopped for writing more than the output cap; nothing is collected
        FAILED = "failed"  # could not start, or its worker was lost too often
        CANCELLED = "cancelled"

    FINAL_STATUSES = (Status.DONE, Status.TIMED_OUT, Status.OVER_CAP, Status.FAILED, Status.CANCELLED)

    hosted_run = models.ForeignKey(HostedRun, on_delete=models.CASCADE, related_name="tasks")
    competition = models.ForeignKey("competitions.Competition", on_delete=models.PROTECT, related_name="+")
    seed = models.PositiveSmallIntegerField()
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.QUEUED)
    reason = models.TextField(blank=True)
    attempt = models.PositiveSmallIntegerField(
        default=1, help_text="Raised at each re-queue; stale attempts are ignored"
    )
    worker = models.ForeignKey(GpuWorker, on_delete=models.SET_NULL, null=True, blank=True, related_name="tasks")
    cancel_requested = models.BooleanField(default=False)
    queued_at = models.DateTimeField(null=True, blank=True)
    started_at = models.DateTimeField(null=True, blank=True)
    # The last time its worker listed it in a heartbeat (or claimed it): a worker that beats on without
    # listing it has lost it, and the watchdog queues it again.
    seen_at = models.DateTimeField(null=True, blank=True)
    # Its queue message must be sent again (tasks queued before claims carried a capability): the watchdog does.
    resend = models.BooleanField(default=False)
    finished_at = models.DateTimeField(null=True, blank=True)
    elapsed_seconds = models.FloatField(null=True, blank=True)
    exit_code = models.IntegerField(null=True, blank=True)
    # Measured by the worker: claim to agent started (data fetched, folders made), and agent ended to the
    # collected archive sent. The overhead the portal adds to a run (benchmarks/hosted_overhead.py).
    setup_seconds = models.FloatField(null=True, blank=True)
    collect_seconds = models.FloatField(null=True, blank=True)
    output_tail = models.TextField(blank=True)
    archive_path = models.CharField(
        max_length=300, blank=True, help_text="What the worker collected, in private storage"
    )
    archive_bytes = models.PositiveBigIntegerField(default=0)

    class Meta:
        ordering = ["competition__slug", "seed"]
        constraints = [models.UniqueConstraint(fields=["hosted_run", "competition", "seed"], name="hosted_task_unique")]
        indexes = [models.Index(fields=["status", "queued_at"], name="hosted_task_status")]

    def __str__(self) -> str:
        return f"hosted task {self.pk} ({self.status})"


class FormatCheck(models.Model):
    """One call of the format check by an agent: when, and what it was told (valid or the reason)."""

    task = models.ForeignKey(HostedTask, on_delete=models.CASCADE, related_name="format_checks")
    attempt = models.PositiveSmallIntegerField()
    at = models.DateTimeField(auto_now_add=True)
    valid = models.BooleanField()
    reason = models.TextField(blank=True)
    bytes = models.PositiveBigIntegerField(default=0)

    class Meta:
        ordering = ["at", "pk"]
