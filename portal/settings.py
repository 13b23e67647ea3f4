"""Settings for the portal, read from the environment.

Every default runs on one machine with nothing else installed (SQLite, a filesystem
Celery broker, files on local disk under PORTAL_DATA_DIR). Each production part is one
variable away: DATABASE_URL, REDIS_URL, STORAGE_BACKEND, SECRET_KEY, ALLOWED_HOSTS.
A wrong value stops the start with a message that names the variable.
"""

import secrets
from collections.abc import Callable
from pathlib import Path
from typing import Any

from django.core.exceptions import ImproperlyConfigured
from django.utils.csp import CSP

from portal.env import (
    database_from_url,
    env_bool,
    env_choice,
    env_int,
    env_list,
    env_rate,
    env_str,
    redis_url,
)
from portal.private_files import private_file, private_folder

BASE_DIR = Path(__file__).resolve().parent.parent

DATA_DIR = Path(env_str("PORTAL_DATA_DIR", str(BASE_DIR / "var"))).resolve()
try:
    DATA_DIR.mkdir(parents=True, exist_ok=True)
except OSError as exc:
    raise ImproperlyConfigured(f"PORTAL_DATA_DIR={str(DATA_DIR)!r} cannot be created: {exc.strerror}") from None

DEBUG = env_bool("DEBUG", True)
# The commit of the code that runs, recorded in every entry's evidence (portal/release.py); empty: asked of git.
PORTAL_COMMIT = env_str("PORTAL_COMMIT", "")


def _private(variable: str, make: Callable[[Path], Path], path: Path) -> Path:
    """make(path), private_file or private_folder; a failure stops the start naming the variable."""
    try:
        return make(path)
    except OSError as exc:
        raise ImproperlyConfigured(
            f"{variable}: {str(path)!r} cannot be made readable by this user only: {exc.strerror}"
        ) from None


def _secret_key() -> str:
    key = env_str("SECRET_KEY")
    if key:
        if not DEBUG and len(key) < 32:
            raise ImproperlyConfigured("SECRET_KEY is too short for production; use at least 32 random characters")
        return key
    if not DEBUG:
        raise ImproperlyConfigured("SECRET_KEY must be set when DEBUG is off (or SECRET_KEY_FILE)")
    # A single-machine install keeps a generated key beside its data, so sessions survive restarts.
    key_file = DATA_DIR / "secret_key"
    if not key_file.exists() or not key_file.read_text().strip():
        _private("PORTAL_DATA_DIR", private_file, key_file).write_text(secrets.token_urlsafe(50))
    _private("PORTAL_DATA_DIR", private_file, key_file)  # an older install's key may be readable by others
    return key_file.read_text().strip()


SECRET_KEY = _secret_key()
ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", ["127.0.0.1", "localhost", "[::1]"] if DEBUG else [])
if not DEBUG and not ALLOWED_HOSTS:
    raise ImproperlyConfigured("ALLOWED_HOSTS must be set when DEBUG is off, e.g. ALLOWED_HOSTS=portal.example.org")
CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS", [])
# How many proxies of ours append to X-Forwarded-For (the README's TLS proxy: 1), or the header one of them
# sets to the client's address; without either, the connection's address is the client's
# (portal/client_ip.py).
TRUSTED_PROXY_COUNT = env_int("TRUSTED_PROXY_COUNT", 0, minimum=0)
TRUSTED_CLIENT_IP_HEADER = env_str("TRUSTED_CLIENT_IP_HEADER")

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "whitenoise.runserver_nostatic",
    "django.contrib.staticfiles",
    "rest_framework",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "allauth",
    "allauth.account",
    "portal",
    "portal.accounts",
    "competitions",
    "grading",
    "leaderboard",
    "runners",
]

MIDDLEWARE = [
    # Outermost, so that the error pages the next one puts in place carry the same headers.
    "django.middleware.csp.ContentSecurityPolicyMiddleware",
    "portal.middleware.PermissionsPolicyMiddleware",
    "portal.middleware.PublicErrorPagesMiddleware",
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "allauth.account.middleware.AccountMiddleware",
    "portal.accounts.login_throttle.DeviceCookieMiddleware",
    "leaderboard.middleware.BoardHistoryHeadMiddleware",
]

ROOT_URLCONF = "portal.urls"
WSGI_APPLICATION = "portal.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "portal.context_processors.navigation",
            ],
        },
    },
]

# Database: SQLite in PORTAL_DATA_DIR unless DATABASE_URL names PostgreSQL.
_database_url = env_str("DATABASE_URL")
if _database_url:
    DATABASES = {
        "default": database_from_url(
            "DATABASE_URL", _database_url, conn_max_age=env_int("DATABASE_CONN_MAX_AGE", 60, minimum=0)
        )
    }
else:
    # Created (or tightened) before SQLite opens it: its -wal and -shm files take the database's mode.
    _private("PORTAL_DATA_DIR", private_file, DATA_DIR / "db.sqlite3")
    DATABASES = {
        "default": {
            "ENGINE": "django.db.backends.sqlite3",
            "NAME": DATA_DIR / "db.sqlite3",
            # The web server and the worker write at the same time: WAL and a busy timeout.
            "OPTIONS": {
                "timeout": 30,
                "transaction_mode": "IMMEDIATE",
                "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
            },
        }
    }
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# Redis serves as Celery broker, result backend and cache when REDIS_URL is set.
REDIS_URL = redis_url("REDIS_URL")
if REDIS_URL:
    CACHES: dict[str, dict[str, Any]] = {
        "default": {"BACKEND": "portal.cache.ReusedClientRedisCache", "LOCATION": REDIS_URL}
    }
else:
    CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.filebased.FileBasedCache",
            "LOCATION": DATA_DIR / "cache",
        }
    }

BROKER_DIR = DATA_DIR / "broker"
# Another broker than REDIS_URL's or the filesystem's (the GPU worker reads the same variable).
_broker_url = env_str("CELERY_BROKER_URL")
if REDIS_URL:
    # A unix socket is unix:// to redis-py (the cache) and redis+socket:// to Celery.
    _celery_redis = REDIS_URL.replace("unix://", "redis+socket://", 1)
    CELERY_BROKER_URL = _broker_url or _celery_redis
    CELERY_RESULT_BACKEND = _celery_redis
    CELERY_BROKER_TRANSPORT_OPTIONS: dict[str, Any] = {"visibility_timeout": env_int("CELERY_VISIBILITY_TIMEOUT", 3600)}
elif _broker_url:
    (BROKER_DIR / "results").mkdir(parents=True, exist_ok=True)
    CELERY_BROKER_URL = _broker_url
    CELERY_RESULT_BACKEND = f"file://{BROKER_DIR / 'results'}"
    CELERY_WORKER_ENABLE_REMOTE_CONTROL = False
else:
    for _folder in ("queue", "processed", "results", "control"):
        (BROKER_DIR / _folder).mkdir(parents=True, exist_ok=True)
    CELERY_BROKER_URL = "filesystem://"
    # kombu's transport with atomic writes and claims (runners/worker/filesystem_broker.py); remote control
    # off: its broadcasts are files every worker reads and writes, and nothing here uses them.
    CELERY_BROKER_TRANSPORT = "runners.worker.filesystem_broker:Transport"
    CELERY_WORKER_ENABLE_REMOTE_CONTROL = False
    CELERY_BROKER_TRANSPORT_OPTIONS = {
        "data_folder_in": str(BROKER_DIR / "queue"),
        "data_folder_out": str(BROKER_DIR / "queue"),
        "processed_folder": str(BROKER_DIR / "processed"),
        "control_folder": str(BROKER_DIR / "control"),
        "store_processed": False,
    }
    CELERY_RESULT_BACKEND = f"file://{BROKER_DIR / 'results'}"
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_DEFAULT_QUEUE = "default"
# Each run is graded on the "grading" queue; the short steps around it and the watchdog stay on "default"
# so that a long grading backlog never delays them.
CELERY_TASK_ROUTES = {"grading.tasks.grade_run": {"queue": "grading"}}
CELERY_RESULT_EXPIRES = 24 * 3600
CELERY_WORKER_HIJACK_ROOT_LOGGER = False
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True

# Files. Public media may be served; private files (answers, bundles) never are, and only the portal's own
# user may read them: PRIVATE_ROOT and PORTAL_DATA_DIR/cache (local copies, parsed answers) are 0700 folders.
MEDIA_ROOT = DATA_DIR / "media"
MEDIA_URL = "/media/"
PRIVATE_ROOT = Path(env_str("PORTAL_PRIVATE_ROOT", str(DATA_DIR / "private")))
_private("PORTAL_PRIVATE_ROOT", private_folder, PRIVATE_ROOT)
_private("PORTAL_DATA_DIR", private_folder, DATA_DIR / "cache")
STATIC_URL = "/static/"
STATIC_ROOT = DATA_DIR / "staticfiles"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATICFILES_FINDERS = [
    "django.contrib.staticfiles.finders.FileSystemFinder",
    "django.contrib.staticfiles.finders.AppDirectoriesFinder",
    "portal.vendor_static.VendorFinder",  # plotly.js from the plotly package (no CDN)
]
# Without collectstatic (single machine, tests) WhiteNoise serves straight from the apps' folders.
WHITENOISE_USE_FINDERS = DEBUG
WHITENOISE_AUTOREFRESH = DEBUG

STORAGE_BACKEND = env_choice("STORAGE_BACKEND", "local", ("local", "s3"))
if STORAGE_BACKEND == "s3":
    try:
        import boto3  # noqa: F401
    except ImportError:
        raise ImproperlyConfigured(
            "STORAGE_BACKEND=s3 needs boto3, which the lock file installs; reinstall with scripts/run"
        ) from None
    _bucket = env_str("AWS_STORAGE_BUCKET_NAME")
    if not _bucket:
        raise ImproperlyConfigured("STORAGE_BACKEND=s3 needs AWS_STORAGE_BUCKET_NAME")
    _s3 = {
        "bucket_name": _bucket,
        "endpoint_url": env_str("AWS_S3_ENDPOINT_URL"),
        "region_name": env_str("AWS_S3_REGION_NAME"),
        "access_key": env_str("AWS_ACCESS_KEY_ID"),
        "secret_key": env_str("AWS_SECRET_ACCESS_KEY"),
        "default_acl": "private",
        "querystring_auth": True,
    }
    _default_storage = {"BACKEND": "storages.backends.s3.S3Storage", "OPTIONS": {**_s3, "location": "media"}}
    _private_storage = {"BACKEND": "storages.backends.s3.S3Storage", "OPTIONS": {**_s3, "location": "private"}}
else:
    _default_storage = {
        "BACKEND": "django.core.files.storage.FileSystemStorage",
        "OPTIONS": {"location": MEDIA_ROOT, "base_url": MEDIA_URL},
    }
    _private_storage = {
        "BACKEND": "django.core.files.storage.FileSystemStorage",
        "OPTIONS": {
            "location": PRIVATE_ROOT,
            "base_url": None,
            "file_permissions_mode": 0o600,
            "directory_permissions_mode": 0o700,
        },
    }
STORAGES = {
    "default": _default_storage,
    "private": _private_storage,
    "staticfiles": {
        "BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"
        if DEBUG
        else "whitenoise.storage.CompressedManifestStaticFilesStorage"
    },
}

# Accounts: email + password through django-allauth; mail goes to the console by default.
AUTHENTICATION_BACKENDS = [
    "django.contrib.auth.backends.ModelBackend",
    "allauth.account.auth_backends.AuthenticationBackend",
]
ACCOUNT_LOGIN_METHODS = {"email"}
ACCOUNT_SIGNUP_FIELDS = ["email*", "password1*", "password2*"]
ACCOUNT_EMAIL_VERIFICATION = env_choice("ACCOUNT_EMAIL_VERIFICATION", "optional", ("none", "optional", "mandatory"))
ACCOUNT_UNIQUE_EMAIL = True
ACCOUNT_ADAPTER = "portal.accounts.adapter.AccountAdapter"
# Password logins wait, never lock (portal/accounts/login_throttle.py, README "Login throttling"): per client
# address, and per account for addresses and browsers it has not been used from, the first attempts are free,
# then each makes the next wait, doubling from the first delay up to the maximum; failures are forgotten a while
# after the last. Behind a proxy the client address needs TRUSTED_PROXY_COUNT, else every visitor shares the
# proxy's address. The counters live in the cache (Redis with REDIS_URL).
LOGIN_THROTTLE_FREE_PER_ADDRESS = env_int("LOGIN_THROTTLE_FREE_PER_ADDRESS", 10, minimum=1)
LOGIN_THROTTLE_FREE_PER_ACCOUNT = env_int("LOGIN_THROTTLE_FREE_PER_ACCOUNT", 5, minimum=1)
LOGIN_THROTTLE_FIRST_DELAY_SECONDS = env_int("LOGIN_THROTTLE_FIRST_DELAY_SECONDS", 2, minimum=1)
LOGIN_THROTTLE_MAX_DELAY_SECONDS = env_int("LOGIN_THROTTLE_MAX_DELAY_SECONDS", 900, minimum=1)
LOGIN_THROTTLE_FORGET_SECONDS = env_int("LOGIN_THROTTLE_FORGET_SECONDS", 24 * 3600, minimum=60)
# How long an address or browser that logged in to an account stays known to it (and skips strangers' waits).
LOGIN_THROTTLE_TRUST_DAYS = env_int("LOGIN_THROTTLE_TRUST_DAYS", 90, minimum=1)
if LOGIN_THROTTLE_MAX_DELAY_SECONDS < LOGIN_THROTTLE_FIRST_DELAY_SECONDS:
    raise ImproperlyConfigured(
        f"LOGIN_THROTTLE_MAX_DELAY_SECONDS={LOGIN_THROTTLE_MAX_DELAY_SECONDS} must be at least "
        f"LOGIN_THROTTLE_FIRST_DELAY_SECONDS={LOGIN_THROTTLE_FIRST_DELAY_SECONDS}"
    )
for _old in ("LOGIN_FAILURES_PER_ACCOUNT", "LOGIN_FAILURES_PER_IP"):
    if env_str(_old):
        raise ImproperlyConfigured(
            f"{_old} is no longer read: logins are throttled with growing delays, not locked; "
            "see LOGIN_THROTTLE_* in the README"
        )
# allauth's own limits: its "login_failed" lockout is replaced by the throttle above (never consumed); the rest
# (login posts per address, signups, password resets) stay.
ACCOUNT_RATE_LIMITS = {"login_failed": False}
LOGIN_REDIRECT_URL = "team"
ACCOUNT_LOGOUT_REDIRECT_URL = "home"
AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]

EMAIL_HOST = env_str("EMAIL_HOST")
if EMAIL_HOST:
    MAILERS = {
        "default": {
            "BACKEND": "django.core.mail.backends.smtp.EmailBackend",
            "OPTIONS": {
                "host": EMAIL_HOST,
                "port": env_int("EMAIL_PORT", 587),
                "username": env_str("EMAIL_HOST_USER", ""),
                "password": env_str("EMAIL_HOST_PASSWORD", ""),
                "use_tls": env_bool("EMAIL_USE_TLS", True),
            },
        }
    }
elif env_str("EMAIL_FILE_PATH"):
    # One file per message in a folder: lets separate processes (a worker under test) show what they sent.
    MAILERS = {
        "default": {
            "BACKEND": "django.core.mail.backends.filebased.EmailBackend",
            "OPTIONS": {"file_path": env_str("EMAIL_FILE_PATH")},
        }
    }
else:
    MAILERS = {"default": {"BACKEND": "django.core.mail.backends.console.EmailBackend"}}
del EMAIL_HOST  # read into MAILERS; the old-style setting is deprecated
DEFAULT_FROM_EMAIL = env_str("DEFAULT_FROM_EMAIL", "portal@localhost")

# API
REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "portal.accounts.authentication.HashedTokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "EXCEPTION_HANDLER": "portal.api.exception_handler.api_exception_handler",
    "DEFAULT_PAGINATION_CLASS": "rest_framework.pagination.LimitOffsetPagination",
    "PAGE_SIZE": 50,
    "UNAUTHENTICATED_USER": "django.contrib.auth.models.AnonymousUser",
    "DEFAULT_THROTTLE_CLASSES": [
        "portal.api.throttles.AnonymousRateThrottle",
        "portal.api.throttles.AccountRateThrottle",
        "portal.api.throttles.UploadRateThrottle",
    ],
    # Our throttles find the client by portal/client_ip.py; this holds any other DRF throttle to the same rule.
    "NUM_PROXIES": TRUSTED_PROXY_COUNT,
}
API_RATE_ANONYMOUS = env_rate("API_RATE_ANONYMOUS", "120/m")
API_RATE_AUTHENTICATED = env_rate("API_RATE_AUTHENTICATED", "300/m")
API_RATE_UPLOADS = env_rate("API_RATE_UPLOADS", "30/h")
SPECTACULAR_SETTINGS = {
    "TITLE": "MLE portal API",
    "DESCRIPTION": "Run bundles in, re-graded results and a trustworthy leaderboard out.",
    "VERSION": "1",
    "SERVE_INCLUDE_SCHEMA": False,
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    "SERVE_PERMISSIONS": ["rest_framework.permissions.AllowAny"],
}

# Bundles and grading
BUNDLE_MAX_BYTES = env_int("BUNDLE_MAX_BYTES", 4 * 1024**3, minimum=1024)
BUNDLE_MAX_FILES = env_int("BUNDLE_MAX_FILES", 20000, minimum=1)
BUNDLE_MAX_UNPACKED_BYTES = env_int("BUNDLE_MAX_UNPACKED_BYTES", 16 * 1024**3, minimum=1024)
BUNDLE_MAX_SUBMISSION_BYTES = env_int("BUNDLE_MAX_SUBMISSION_BYTES", 512 * 1024**2, minimum=1024)
# Runs a bundle may hold: this many per competition, and the split's size times this in all.
BUNDLE_MAX_SEEDS = env_int("BUNDLE_MAX_SEEDS", 20, minimum=1)
# Days a registered run group stays private and open for its bundle (SPEC section 9).
REGISTRATION_DEADLINE_DAYS = env_int("REGISTRATION_DEADLINE_DAYS", 14, minimum=1)
# Uploads a day per team, and per user across all their teams (None: the team's number, read when checked).
SUBMISSION_DAILY_QUOTA = env_int("SUBMISSION_DAILY_QUOTA", 10, minimum=0)
SUBMISSION_DAILY_QUOTA_PER_USER: int | None = (
    env_int("SUBMISSION_DAILY_QUOTA_PER_USER", 0, minimum=0) if env_str("SUBMISSION_DAILY_QUOTA_PER_USER") else None
)
GRADING_SOFT_TIME_LIMIT = env_int("GRADING_SOFT_TIME_LIMIT", 600, minimum=1)
GRADING_HARD_TIME_LIMIT = env_int("GRADING_HARD_TIME_LIMIT", 660, minimum=2)
GRADING_THREADS = env_int("GRADING_THREADS", 1, minimum=1)
# A run whose grading raises an error of ours is tried this many more times, this many seconds apart (times the
# try's number), then recorded as a grading error that holds the entry for a maintainer's re-grade.
GRADING_ERROR_RETRIES = env_int("GRADING_ERROR_RETRIES", 2, minimum=0)
GRADING_ERROR_RETRY_SECONDS = env_int("GRADING_ERROR_RETRY_SECONDS", 5, minimum=0)
# The scheduler keeps at most this many runs waiting in the broker, picked fairly across teams and submissions.
GRADING_MAX_QUEUED = env_int("GRADING_MAX_QUEUED", 8, minimum=1)
# A run still queued this long after being sent is sent again (sooner when a run queued after it was claimed).
GRADING_RESEND_SECONDS = env_int("GRADING_RESEND_SECONDS", 300, minimum=10)
# Each worker process beats this often; one silent for WORKER_LOST_SECONDS is dead and its runs are re-queued.
WORKER_HEARTBEAT_SECONDS = env_int("WORKER_HEARTBEAT_SECONDS", 10, minimum=1)
WORKER_LOST_SECONDS = env_int("WORKER_LOST_SECONDS", 30, minimum=2)
if WORKER_LOST_SECONDS <= WORKER_HEARTBEAT_SECONDS:
    raise ImproperlyConfigured(
        f"WORKER_LOST_SECONDS={WORKER_LOST_SECONDS} must be longer than "
        f"WORKER_HEARTBEAT_SECONDS={WORKER_HEARTBEAT_SECONDS}"
    )
SUBMISSION_DEADLINE_MINUTES = env_int("SUBMISSION_DEADLINE_MINUTES", 360, minimum=1)
# Fairness checks (grading/checks/): how much of the logs and code is read, shown and how strict the checks are.
# Every file of any bundle the intake accepts is read (twice its size leaves room for compressed logs): a scan
# cut short holds the entry (unscanned_evidence), so a budget below the bundle's size would hold honest big ones.
CHECK_SCAN_MAX_BYTES = env_int("CHECK_SCAN_MAX_BYTES", 2 * BUNDLE_MAX_UNPACKED_BYTES, minimum=1024)
CHECK_SCAN_MAX_HITS = env_int("CHECK_SCAN_MAX_HITS", 5, minimum=1)
CHECK_SCAN_CONTEXT_LINES = env_int("CHECK_SCAN_CONTEXT_LINES", 2, minimum=0)
CHECK_SCAN_MAX_LINE_BYTES = env_int("CHECK_SCAN_MAX_LINE_BYTES", 65536, minimum=256)
CHECK_IMPLAUSIBLE_MARGIN_PERCENT = env_int("CHECK_IMPLAUSIBLE_MARGIN_PERCENT", 100, minimum=0)
CHECK_CODE_SIMILARITY_PERCENT = env_int("CHECK_CODE_SIMILARITY_PERCENT", 90, minimum=1)
CHECK_RUNTIME_TOLERANCE_PERCENT = env_int("CHECK_RUNTIME_TOLERANCE_PERCENT", 10, minimum=0)
CHECK_ANSWER_COPY_AGREEMENT_PERCENT = env_int("CHECK_ANSWER_COPY_AGREEMENT_PERCENT", 92, minimum=1)
# answer_copy's statistics (README "Answer copies"): exact cells, errors against the file's own forecast, confidence.
CHECK_ANSWER_COPY_EXACT_PERCENT = env_int("CHECK_ANSWER_COPY_EXACT_PERCENT", 2, minimum=0)
CHECK_ANSWER_COPY_ERROR_RATIO_PERCENT = env_int("CHECK_ANSWER_COPY_ERROR_RATIO_PERCENT", 50, minimum=1)
CHECK_ANSWER_COPY_CONFIDENCE_PERMILLE = env_int("CHECK_ANSWER_COPY_CONFIDENCE_PERMILLE", 999, minimum=500)
if CHECK_ANSWER_COPY_CONFIDENCE_PERMILLE >= 1000:
    raise ImproperlyConfigured("CHECK_ANSWER_COPY_CONFIDENCE_PERMILLE must be below 1000: nothing is certain")
# Uploads stream to disk beside the private files (so keeping one is a rename, not a copy).
FILE_UPLOAD_TEMP_DIR = _private("PORTAL_DATA_DIR", private_folder, DATA_DIR / "uploads-in-progress")
FILE_UPLOAD_MAX_MEMORY_SIZE = 2 * 1024**2
FILE_UPLOAD_HANDLERS = [
    "grading.uploads.BundleSizeLimit",
    "django.core.files.uploadhandler.MemoryFileUploadHandler",
    "django.core.files.uploadhandler.TemporaryFileUploadHandler",
]
FILE_UPLOAD_PERMISSIONS = 0o600
FILE_UPLOAD_DIRECTORY_PERMISSIONS = 0o700
WATCHDOG_SECONDS = env_int("WATCHDOG_SECONDS", 15, minimum=5)
CELERY_BEAT_SCHEDULE: dict[str, dict[str, Any]] = {
    "grading-watchdog": {"task": "grading.tasks.watchdog", "schedule": WATCHDOG_SECONDS},
    "hosted-runs-watchdog": {"task": "runners.tasks.hosted_watchdog", "schedule": WATCHDOG_SECONDS},
}

# Hosted runs (runners/): the limits of one request, and how the watchdog tells a lost worker.
# The key that encrypts teams' variables; by default derived from SECRET_KEY (rotate both together).
HOSTED_SECRETS_KEY = env_str("HOSTED_SECRETS_KEY", "")
HOSTED_MAX_HOURS = env_int("HOSTED_MAX_HOURS", 24, minimum=1)
HOSTED_MAX_GPUS = env_int("HOSTED_MAX_GPUS", 8, minimum=0)
# Hosted runs a day per team, and per user across all their teams (None: the team's number, read when checked).
HOSTED_RUNS_DAILY_QUOTA = env_int("HOSTED_RUNS_DAILY_QUOTA", 2, minimum=0)
HOSTED_RUNS_DAILY_QUOTA_PER_USER: int | None = (
    env_int("HOSTED_RUNS_DAILY_QUOTA_PER_USER", 0, minimum=0) if env_str("HOSTED_RUNS_DAILY_QUOTA_PER_USER") else None
)
HOSTED_CPUS_PER_RUN = env_int("HOSTED_CPUS_PER_RUN", 4, minimum=1)
HOSTED_MEMORY_GB_PER_RUN = env_int("HOSTED_MEMORY_GB_PER_RUN", 16, minimum=1)
HOSTED_SHM_GB = env_int("HOSTED_SHM_GB", 4, minimum=1)
# The most processes and threads one task may have at once (the process backend's RLIMIT_NPROC, Docker's pids limit;
# a worker's RUNNER_MAX_PROCESSES caps it again).
HOSTED_PROCESSES_PER_RUN = env_int("HOSTED_PROCESSES_PER_RUN", 4096, minimum=16)
HOSTED_ALLOW_NETWORK = env_bool("HOSTED_ALLOW_NETWORK", False)  # the operator's choice; agents get none by default
# Variable names (or NAME_* prefixes, comma-separated) teams may give beyond runners/envnames.py's allow-list.
# runners/envnames.py reads it from the environment (each worker reads its own); a bad entry stops the portal here.
try:
    from runners.envnames import operator_allowed

    HOSTED_ENV_ALLOW = operator_allowed()
except ValueError as _exc:
    raise ImproperlyConfigured(str(_exc)) from None
HOSTED_MAX_OUTPUT_BYTES = env_int("HOSTED_MAX_OUTPUT_BYTES", 2 * 1024**3, minimum=1024)
HOSTED_HEARTBEAT_SECONDS = env_int("HOSTED_HEARTBEAT_SECONDS", 10, minimum=1)
HOSTED_WORKER_LOST_SECONDS = env_int("HOSTED_WORKER_LOST_SECONDS", 60, minimum=2)
HOSTED_MAX_ATTEMPTS = env_int("HOSTED_MAX_ATTEMPTS", 3, minimum=1)
HOSTED_QUEUE_TIMEOUT_SECONDS = env_int("HOSTED_QUEUE_TIMEOUT_SECONDS", 24 * 3600, minimum=10)
# How long past its time limit a task may still run (setup and collection included) before the watchdog ends
# it; also the margin of the times a worker reports.
HOSTED_OVERTIME_GRACE_SECONDS = env_int("HOSTED_OVERTIME_GRACE_SECONDS", 3600, minimum=60)
HOSTED_FORMAT_CHECKS_PER_MINUTE = env_int("HOSTED_FORMAT_CHECKS_PER_MINUTE", 10, minimum=1)
HOSTED_FORMAT_CHECKS_PER_TASK = env_int("HOSTED_FORMAT_CHECKS_PER_TASK", 300, minimum=1)
HOSTED_FORMAT_CHECK_TIMEOUT_SECONDS = env_int("HOSTED_FORMAT_CHECK_TIMEOUT_SECONDS", 300, minimum=5)
HOSTED_FORMAT_CHECK_MEMORY_GB = env_int("HOSTED_FORMAT_CHECK_MEMORY_GB", 8, minimum=1)

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"plain": {"format": "%(asctime)s %(levelname)s %(name)s: %(message)s"}},
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": "plain"}},
    "root": {"handlers": ["console"], "level": env_str("LOG_LEVEL", "INFO")},
    "loggers": {"django.db.backends": {"level": "WARNING"}},
}

if not DEBUG:
    SESSION_COOKIE_SECURE = env_bool("SECURE_COOKIES", True)
    CSRF_COOKIE_SECURE = env_bool("SECURE_COOKIES", True)
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
CSRF_FAILURE_VIEW = "portal.views.csrf_failure"

# Security headers (README "Security headers"). Scripts only from the portal's own origin and never inline
# (templates load static/js files; data for them travels in <script type="application/json">); styles may be
# inline (plotly.js and the API docs set them); nothing may frame the portal.
SECURE_CSP = {
    "default-src": [CSP.SELF],
    "script-src": [CSP.SELF],
    "style-src": [CSP.SELF, CSP.UNSAFE_INLINE],
    "img-src": [CSP.SELF, "data:"],
    "font-src": [CSP.SELF, "data:"],
    "connect-src": [CSP.SELF],
    "object-src": [CSP.NONE],
    "base-uri": [CSP.SELF],
    "form-action": [CSP.SELF],
    "frame-ancestors": [CSP.NONE],
}
X_FRAME_OPTIONS = "DENY"
SECURE_REFERRER_POLICY = "same-origin"
SECURE_CROSS_ORIGIN_OPENER_POLICY = "same-origin"
SECURE_CONTENT_TYPE_NOSNIFF = True
PERMISSIONS_POLICY = env_str(
    "PERMISSIONS_POLICY",
    "accelerometer=(), camera=(), geolocation=(), gyroscope=(), magnetometer=(), microphone=(), payment=(), usb=()",
)
# HSTS goes only on requests that came over TLS (SECURE_PROXY_SSL_HEADER above, set by the proxy): a year by
# default with DEBUG off; 0 turns it off.
SECURE_HSTS_SECONDS = env_int("SECURE_HSTS_SECONDS", 0 if DEBUG else 365 * 24 * 3600, minimum=0)
SECURE_HSTS_INCLUDE_SUBDOMAINS = env_bool("SECURE_HSTS_INCLUDE_SUBDOMAINS", False)
SECURE_HSTS_PRELOAD = env_bool("SECURE_HSTS_PRELOAD", False)
