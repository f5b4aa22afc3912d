"""One settings module; the profile (embedded or scale-out) is chosen by environment variables."""

import json
import os
import re
from pathlib import Path

import dj_database_url
from django.core.exceptions import ImproperlyConfigured

# litellm would otherwise fetch its price list from the network at import time.
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

BASE_DIR = Path(__file__).resolve().parent.parent


def envbool(name, default=False):
    return os.environ.get(name, str(default)).strip().lower() in {"1", "true", "yes", "on"}


def envint(name, default):
    return int(os.environ.get(name) or default)


def envfloat(name, default):
    return float(os.environ.get(name) or default)


def envprices(name, default, with_format=False):
    """A JSON object of prices in USD per million tokens: {"input": 0.15, "output": 0.6} (or one such per model)."""
    value = json.loads(os.environ.get(name) or "null") or default
    entries = value.items() if with_format else [(name, value)]
    for model, entry in entries:
        keys = (
            {"input", "output", "response_format", "api_base", "max_parallel_requests"}
            if with_format
            else {"input", "output"}
        )
        parallel = entry.get("max_parallel_requests", 1) if isinstance(entry, dict) else 1
        if (
            not isinstance(entry, dict)
            or set(entry) - keys
            or not all(isinstance(entry.get(k), (int, float)) and entry[k] >= 0 for k in ("input", "output"))
            or entry.get("response_format", "auto") not in RESPONSE_FORMATS
            or not isinstance(entry.get("api_base", ""), str)
            or not (isinstance(parallel, int) and not isinstance(parallel, bool) and parallel >= 1)
        ):
            raise ValueError(
                f"{name}: {model!r} needs non-negative numbers 'input' and 'output' (USD per million tokens)"
                + (
                    f", optionally 'response_format' (one of {', '.join(RESPONSE_FORMATS)}), 'api_base' (a URL) and "
                    "'max_parallel_requests' (a whole number, 1 or more)"
                    if with_format
                    else ""
                )
            )
    return value


def envlist(name):
    """A comma-separated list, or None when the variable is unset (the setting's default applies)."""
    value = os.environ.get(name)
    return None if value is None else tuple(item.strip() for item in value.split(",") if item.strip())


# How a model is asked for structured output: OpenAI's json_schema, a json_object with a "schema" (llama-cpp-python's
# server), none, or auto (litellm's model map decides).
RESPONSE_FORMATS = ("auto", "json_schema", "json_object", "none")

RATE = re.compile(r"(\d+)/(\d*)(s|sec|seconds?|m|min|minutes?|h|hours?|d|days?)")


def envrate(name, default):
    """A rate like "30/minute" ("30/min", "100/hour", "5/10s") as (count, seconds); "off" is None: no limit."""
    text = (os.environ.get(name) or default).strip().lower().replace(" ", "")
    if text == "off":
        return None
    match = RATE.fullmatch(text)
    if not match or int(match[1]) < 1 or int(match[2] or 1) < 1:
        raise ValueError(f'{name} is a rate like "30/minute" or "5/10s", or "off": not {text!r}')
    unit = {"s": 1, "m": 60, "h": 3600, "d": 86400}[match[3][0]]
    return int(match[1]), int(match[2] or 1) * unit


def demo_profile():
    """The demo: every model this server may call is offline (no provider key, no real money); `make run` as shipped."""
    named = [os.environ.get("REASONING_MODEL_PRIMARY") or "offline/sim", os.environ.get("REASONING_MODEL_FALLBACK")]
    try:
        named += list(json.loads(os.environ.get("REASONING_MODELS") or "{}") or {})
    except (ValueError, TypeError):  # malformed: REASONING_MODELS's own check below says what is wrong
        pass
    named += (os.environ.get("REASONING_ALLOWED_MODELS") or "").split(",")
    return all(name.strip().startswith("offline/") for name in named if name and name.strip())


# Signs sessions, CSRF tokens and password resets: a public default is fine for the offline demo only.
SECRET_KEY = os.environ.get("SECRET_KEY", "")
if SECRET_KEY and (len(SECRET_KEY.strip()) < 16 or len(set(SECRET_KEY)) < 5):
    # " " or "abc" would sign every session and CSRF token with a key anyone can guess.
    raise ImproperlyConfigured(
        "SECRET_KEY is set but too weak (blank, or under 16 characters, or under 5 distinct ones): export "
        "SECRET_KEY=\"$(python3 -c 'import secrets; print(secrets.token_urlsafe(50))')\", "
        "or unset it for the offline demo"
    )
if not SECRET_KEY:
    if not demo_profile():
        raise ImproperlyConfigured(
            "SECRET_KEY is required once a real model is configured (REASONING_MODEL_PRIMARY, REASONING_MODEL_FALLBACK, "
            'REASONING_MODELS or REASONING_ALLOWED_MODELS): export SECRET_KEY="$(python3 -c '
            "'import secrets; print(secrets.token_urlsafe(50))')\""
        )
    SECRET_KEY = "dev-only-insecure-key-for-the-offline-demo"
DEBUG = envbool("DEBUG", False)
ALLOWED_HOSTS = os.environ.get("ALLOWED_HOSTS", "127.0.0.1,localhost,testserver").split(",")
CSRF_TRUSTED_ORIGINS = [o for o in os.environ.get("CSRF_TRUSTED_ORIGINS", "").split(",") if o]

INSTALLED_APPS = [
    "daphne",
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "channels",
    "ninja",  # its own Swagger UI assets, so /api/docs works with no internet access
    "reasoning",
    "explorer",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "reasoning.middleware.NulGuard",
    "reasoning.middleware.SecurityHeaders",
    "reasoning.middleware.ApiErrorsAsJson",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "reasoning.middleware.ApiBodyGuard",
    "reasoning.outages.DependencyOutage",  # an API request meeting a dependency that is down: 503 JSON
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "reasoning.rls.RequestWall",  # no tenant until authentication names one (PostgreSQL's row-level security)
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    # The whole stack runs as one sync call in the request's thread (config/asgi.py, OnePassASGIHandler).
    "explorer.timezones.TenantTimeZoneMiddleware",  # times in the member's tenant's zone (Tenant.time_zone)
]

# Over HTTPS (as the request says, or a proxy's header: SECURE_PROXY_SSL_HEADER=HTTP_X_FORWARDED_PROTO): HSTS, and
# cookies marked Secure (reasoning.middleware.SecurityHeaders). Plain HTTP (the demo on 127.0.0.1) gets neither.
SECURE_HSTS_SECONDS = envint("SECURE_HSTS_SECONDS", 365 * 24 * 3600)
if os.environ.get("SECURE_PROXY_SSL_HEADER"):
    SECURE_PROXY_SSL_HEADER = (os.environ["SECURE_PROXY_SSL_HEADER"], "https")
SESSION_COOKIE_HTTPONLY = True

ROOT_URLCONF = "config.urls"
ASGI_APPLICATION = "config.asgi.application"

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
                "explorer.views.engine_context",
            ],
        },
    },
]

# Database: SQLite (WAL, busy timeout) unless DATABASE_URL names another.
DATA_DIR = Path(os.environ.get("DATA_DIR", BASE_DIR / "var"))
DATA_DIR.mkdir(parents=True, exist_ok=True)
DATABASES = {
    "default": dj_database_url.parse(
        os.environ.get("DATABASE_URL") or f"sqlite:///{DATA_DIR / 'db.sqlite3'}",
        conn_max_age=envint("DB_CONN_MAX_AGE", 0),
    )
}
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # Each of the server's request threads (REQUEST_THREADS) keeps its connection instead of opening one per request.
    DATABASES["default"]["CONN_MAX_AGE"] = envint("DB_CONN_MAX_AGE", 600)
    DATABASES["default"]["OPTIONS"] = {
        "timeout": 20,
        "transaction_mode": "IMMEDIATE",
        # A WAL checkpoint syncs the database file to disk, inside the commit of whichever write crosses the mark: at
        # SQLite's default of 1,000 pages that was a few milliseconds once in every session's run, on its critical
        # path. At 10,000 pages (a WAL of up to 40 MB) it comes a tenth as often, and a page rewritten many times
        # between checkpoints (a session's row, written with every node) is copied once.
        "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL; PRAGMA busy_timeout=20000; "
        "PRAGMA wal_autocheckpoint=10000;",
    }
    DATABASES["default"]["TEST"] = {"NAME": os.environ.get("TEST_SQLITE_NAME", str(DATA_DIR / "test.sqlite3"))}
# PostgreSQL: each process opens at most DB_POOL_MAX_SIZE connections (psycopg_pool, Django's pool): a request takes
# one for its duration and hands it back, and a request beyond the bound waits up to DB_POOL_TIMEOUT_S for one
# instead of failing with "too many clients". Count it against max_connections: (Daphne processes + Celery pool
# children) x DB_POOL_MAX_SIZE. DB_POOL_MAX_SIZE=0 turns the pool off (then DB_CONN_MAX_AGE applies).
elif DATABASES["default"]["ENGINE"] == "django.db.backends.postgresql" and envint("DB_POOL_MAX_SIZE", 10) > 0:
    pool_max = envint("DB_POOL_MAX_SIZE", 10)
    DATABASES["default"]["CONN_MAX_AGE"] = 0  # a pooled connection goes back to the pool when Django closes it
    DATABASES["default"].setdefault("OPTIONS", {})["pool"] = {
        "min_size": min(envint("DB_POOL_MIN_SIZE", 1), pool_max),
        "max_size": pool_max,
        "timeout": envfloat("DB_POOL_TIMEOUT_S", 30.0),
    }

# A process frozen inside a transaction (SIGSTOP, a stalled VM, a debugger) keeps its row locks until the database
# ends that transaction, and until then no sweep can take its session over: the takeover waits on the session's row.
# PostgreSQL ends a transaction left idle longer than DB_IDLE_IN_TRANSACTION_S (the frozen client's connection is
# closed, its locks freed), by default the staleness bound less one heartbeat, so a frozen run is still taken over
# within REASONING_HEARTBEAT_STALE_S + REASONING_SWEEP_S of its last heartbeat. No transaction here waits on a model
# call; 0 turns it off.
if DATABASES["default"]["ENGINE"] == "django.db.backends.postgresql":
    idle_s = envfloat(
        "DB_IDLE_IN_TRANSACTION_S",
        max(1.0, envfloat("REASONING_HEARTBEAT_STALE_S", 15.0) - envfloat("REASONING_HEARTBEAT_S", 2.0)),
    )
    options = DATABASES["default"].setdefault("OPTIONS", {})
    options["options"] = f"{options.get('options', '')} -c idle_in_transaction_session_timeout={int(idle_s * 1000)}"
    options["options"] = options["options"].strip()

# On PostgreSQL, row-level security is the second wall behind each query's tenant filter: this backend sets each
# connection to its caller's tenant before a query (reasoning/rls.py). REASONING_RLS=off leaves the policies unused
# (every query runs as the connection's own role: a superuser's sees every row); REASONING_RLS=strict runs code that
# names no tenant as the app's role with none, as a connection as the tables' owner would, under a superuser too.
if DATABASES["default"]["ENGINE"] == "django.db.backends.postgresql":
    import reasoning.rls

    DATABASES["default"]["ENGINE"] = "reasoning.backends.postgresql"
    RLS_MODE = (os.environ.get("REASONING_RLS") or "on").strip().lower()
    if RLS_MODE not in {"on", "off", "strict"}:
        raise ImproperlyConfigured(f"REASONING_RLS is on, off or strict, not {RLS_MODE!r}")
    reasoning.rls.ENABLED = RLS_MODE != "off"
    if RLS_MODE == "strict":
        reasoning.rls.PLAIN = (reasoning.rls.ROLE, "")
    # The all-tenants door's own login (the role reasoning_all, BYPASSRLS), when the app logs in as reasoning_app,
    # which cannot become it (`make run-scaled` runs so): the same database, a pool of its own of the same size, used
    # only inside rls.all_tenants(). Unset, the app's login switches to reasoning_all on its own connection, which
    # only a login that owns the tables or is a superuser may (development, the tests).
    if os.environ.get("DATABASE_ALL_TENANTS_URL"):
        door = dj_database_url.parse(os.environ["DATABASE_ALL_TENANTS_URL"])
        place = ("NAME", "HOST", "PORT")
        if [door.get(k) for k in place] != [DATABASES["default"].get(k) for k in place]:
            raise ImproperlyConfigured("DATABASE_ALL_TENANTS_URL names another database than DATABASE_URL's")
        if RLS_MODE == "off":  # the app's login would see no tenant's rows, with none named
            raise ImproperlyConfigured("REASONING_RLS=off needs a login that bypasses the wall, not a door of its own")
        DATABASES[reasoning.rls.DOOR_ALIAS] = {
            **DATABASES["default"],
            "USER": door["USER"],
            "PASSWORD": door["PASSWORD"],
            "OPTIONS": dict(DATABASES["default"].get("OPTIONS", {})),
            "TEST": {"MIRROR": "default"},
        }
elif os.environ.get("DATABASE_ALL_TENANTS_URL"):
    raise ImproperlyConfigured("DATABASE_ALL_TENANTS_URL is PostgreSQL's (with DATABASE_URL on PostgreSQL)")

DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# Under Daphne, HTTP requests run their sync code on this many threads per process (config/asgi.py); more requests
# wait their turn on the event loop. Keep it at or below DB_POOL_MAX_SIZE on PostgreSQL. Four, not eight: the threads
# share one GIL, and 200 readers on two server processes got about 5% more reads a second and a 10% lower p95 from 4
# threads than from 8 (2 and 3 did better still, but leave fewer for a slow page); see docs/BENCHMARKS.md.
REQUEST_THREADS = envint("REQUEST_THREADS", 4)

# Channel layer: in-memory unless REDIS_URL is set.
REDIS_URL = os.environ.get("REDIS_URL", "")
# Messages a watcher's channel holds before the layer drops more; events travel in batches, so this is ample.
CHANNEL_CAPACITY = envint("CHANNEL_CAPACITY", 1000)
if REDIS_URL:
    CHANNEL_LAYERS = {
        "default": {
            "BACKEND": "channels_redis.core.RedisChannelLayer",
            # redis-py 8 times a read out after 5 s by default, exactly as long as channels-redis blocks on an
            # idle channel (BRPOP 5 s): every quiet socket died with 1011. A longer read timeout keeps them open.
            "CONFIG": {"hosts": [{"address": REDIS_URL, "socket_timeout": 15}], "capacity": CHANNEL_CAPACITY},
        }
    }
else:
    CHANNEL_LAYERS = {
        "default": {"BACKEND": "channels.layers.InMemoryChannelLayer", "CONFIG": {"capacity": CHANNEL_CAPACITY}}
    }

# Every limit (sessions created, logins, oversight actions through the API and sockets) is counted in Django's cache.
# CACHE_URL names it: redis:// (or rediss://, unix://) for a Redis, locmem:// for this process's memory. Unset, it is
# the profile's Redis (REDIS_URL) when there is one, so several server processes count each limit once; else memory.
CACHE_URL = (os.environ.get("CACHE_URL") or REDIS_URL or "locmem://").strip()
if CACHE_URL.startswith(("redis://", "rediss://", "unix://")):
    CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": CACHE_URL,
            "KEY_PREFIX": os.environ.get("CACHE_KEY_PREFIX") or "reasoning",
            # A Redis that is down fails a limit's check within seconds (a 503), instead of hanging the request.
            "OPTIONS": {"socket_connect_timeout": 2, "socket_timeout": 2},
        }
    }
elif CACHE_URL == "locmem://":
    CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache", "LOCATION": "reasoning"}}
else:
    raise ImproperlyConfigured(f"CACHE_URL is a redis://, rediss://, unix:// or locmem:// URL: not {CACHE_URL!r}")

# The API's bodies are small JSON documents; a larger one is refused with a JSON 413.
DATA_UPLOAD_MAX_MEMORY_SIZE = envint("DATA_UPLOAD_MAX_MEMORY_SIZE", 1024 * 1024)
# Under Daphne (config/serving.py): a request's headers must arrive within this many seconds of its first byte, and its
# body within this many seconds of its headers; a client trickling bytes is answered 408 and let go.
HTTP_HEADERS_TIMEOUT_S = envfloat("HTTP_HEADERS_TIMEOUT_S", 10.0)
HTTP_BODY_TIMEOUT_S = envfloat("HTTP_BODY_TIMEOUT_S", 30.0)
# The largest page a list endpoint serves (?limit=); a larger one is a 422 naming the field.
NINJA_PAGINATION_MAX_LIMIT = 100

# Tests (and the servers they start) hash passwords fast: a real hasher costs most of a test's time.
if envbool("REASONING_FAST_PASSWORD_HASHER"):
    PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
]
LOGIN_URL = "/accounts/login/"
LOGIN_REDIRECT_URL = "/"
LOGOUT_REDIRECT_URL = "/accounts/login/"

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True
FORMAT_MODULE_PATH = "config.formats"  # every date-time written with its zone's name

STATIC_URL = "/static/"
STATIC_ROOT = DATA_DIR / "static"
STATIC_ROOT.mkdir(exist_ok=True)  # whitenoise looks here first; the finders serve the files in development
STATICFILES_DIRS = [
    BASE_DIR / "static",
    ("vendor/d3", BASE_DIR / "node_modules" / "d3" / "dist"),
]
# Serve from the finders in development and tests, so no collectstatic is needed.
WHITENOISE_USE_FINDERS = True
WHITENOISE_AUTOREFRESH = DEBUG

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": os.environ.get("LOG_LEVEL", "WARNING")},
    "loggers": {"LiteLLM": {"level": "ERROR"}},
}

# The reasoning engine.
REASONING = {
    "MODEL_PRIMARY": os.environ.get("REASONING_MODEL_PRIMARY", "offline/sim"),
    "MODEL_FALLBACK": os.environ.get("REASONING_MODEL_FALLBACK", ""),
    "OFFLINE_LATENCY_MS": envint("REASONING_OFFLINE_LATENCY_MS", 0),
    "OFFLINE_SEED": envint("REASONING_OFFLINE_SEED", 7),
    # offline/noisy errs at this rate (0..1) on each chance: proposals out of order, a number that is not there,
    # a guessed judgement, a wrong answer, a misstated figure. offline/sim is exact.
    "OFFLINE_NOISE": envfloat("REASONING_OFFLINE_NOISE", 0.3),
    "DEFAULT_BUDGET_USD": envfloat("REASONING_DEFAULT_BUDGET_USD", 0.50),
    "MAX_BUDGET_USD": envfloat("REASONING_MAX_BUDGET_USD", 50.0),
    "LLM_TIMEOUT_S": envfloat("REASONING_LLM_TIMEOUT_S", 60.0),
    # A poller's unchanged tree is answered 304 from memory (reasoning/tree_memo.py); a change written by another
    # process, or a key revoked there, is seen at most this late. 0: every request goes to the database.
    "READ_MEMO_S": envfloat("REASONING_READ_MEMO_S", 1.0),
    "LLM_RETRIES": envint("REASONING_LLM_RETRIES", 4),
    # A reply that breaks its contract is asked for again this many times (a small local model may need more).
    "PARSE_RETRIES": envint("REASONING_PARSE_RETRIES", 1),
    "MAX_TOKENS": envint("REASONING_MAX_TOKENS", 1500),
    # Prices (and how to ask for structured output, and where the server is) for models litellm's map does not price:
    # {"openai/smollm2": {"input": 0.1, "output": 0.2, "response_format": "json_object",
    #  "api_base": "http://127.0.0.1:8080/v1"}}, USD per million tokens.
    "MODELS": envprices("REASONING_MODELS", {}, with_format=True),
    # The models tenants may ask for, comma-separated ("*": any priced model). Unset: the primary and fallback above,
    # the models REASONING_MODELS prices, and the offline models. A model litellm prices at 0 counts as unpriced
    # unless it is named here or in REASONING_MODELS.
    "ALLOWED_MODELS": envlist("REASONING_ALLOWED_MODELS"),
    # A model with no price is refused unless the operator allows it; it is then counted at DEFAULT_PRICE.
    "ALLOW_UNPRICED": envbool("REASONING_ALLOW_UNPRICED"),
    # The simulator (offline/*) as the fallback of a real model writes text that is no advice under a real model's
    # name: refused unless the operator allows it (an offline primary may always fall back to an offline model).
    "ALLOW_OFFLINE_FALLBACK": envbool("REASONING_ALLOW_OFFLINE_FALLBACK"),
    # A real model reads the client's facts once at a session's first run (case.facts), grounded in the problem.
    "MODEL_READS_FACTS": envbool("REASONING_MODEL_READS_FACTS", True),
    # A state the task defines whatever the problem (a Game of 24 board), once judged, is not paid for again in the
    # tenant's later sessions on the same models and rubric (reasoning/memory.py). Off: each session judges its own.
    "SHARED_JUDGEMENTS": envbool("REASONING_SHARED_JUDGEMENTS", True),
    "DEFAULT_PRICE": envprices("REASONING_DEFAULT_PRICE", {"input": 1.0, "output": 4.0}),
    # A provider's Retry-After is honoured up to this many seconds; longer waits go to the fallback instead.
    "RETRY_AFTER_MAX_S": envfloat("REASONING_RETRY_AFTER_MAX_S", 20.0),
    # Between retries on one model: BACKOFF_S, doubled each time, at most BACKOFF_MAX_S, each wait jittered by ±50%.
    "RETRY_BACKOFF_S": envfloat("REASONING_RETRY_BACKOFF_S", 1.0),
    "RETRY_BACKOFF_MAX_S": envfloat("REASONING_RETRY_BACKOFF_MAX_S", 8.0),
    # A model that fails this many attempts in a row rests COOLDOWN_S for every session of the process: the fallback
    # serves meanwhile (a model with no fallback is still tried).
    "COOLDOWN_AFTER": envint("REASONING_COOLDOWN_AFTER", 3),
    "COOLDOWN_S": envfloat("REASONING_COOLDOWN_S", 30.0),
    "RUNNER": os.environ.get("TASK_RUNNER", "inprocess"),
    "MAX_CONCURRENT_SESSIONS": envint("REASONING_MAX_CONCURRENT_SESSIONS", 8),
    # A running session's status is read this often, so pause and cancel stop new model calls quickly. A server
    # tells its own runs at once, so the in-process runner polls only for changes made by other processes.
    "CONTROL_POLL_S": envfloat("REASONING_CONTROL_POLL_S", 0.2 if os.environ.get("TASK_RUNNER") == "celery" else 1.0),
    "HEARTBEAT_S": envfloat("REASONING_HEARTBEAT_S", 2.0),
    # A run whose heartbeat is older than this is taken for dead and its session resumed elsewhere.
    "HEARTBEAT_STALE_S": envfloat("REASONING_HEARTBEAT_STALE_S", 15.0),
    # Every runner sweeps this often: dead runs are taken over and resumed (servers and Celery workers alike).
    "SWEEP_S": envfloat("REASONING_SWEEP_S", 5.0),
    # A queued session no run has claimed for this long is dispatched again (its start message may be lost).
    "REDISPATCH_S": envfloat("REASONING_REDISPATCH_S", 30.0),
    # An Idempotency-Key is honoured this long (a day: a client's retries, not a second request days later).
    "IDEMPOTENCY_TTL_S": envfloat("REASONING_IDEMPOTENCY_TTL_S", 86400.0),
    # On SIGTERM, running sessions get this long to finish the model calls in flight before they are cut.
    "SHUTDOWN_GRACE_S": envfloat("REASONING_SHUTDOWN_GRACE_S", 3.0),
    # Sessions one API key or one user may create per period, counted in the cache (CACHE_URL: the profile's Redis,
    # shared by every server process, or this process's memory in the embedded profile).
    "CREATE_RATE": envrate("REASONING_CREATE_RATE", "30/minute"),
    # Oversight actions (prune, expand, pause, ...) one API key or user may take, through the API and sockets together.
    "ACTION_RATE": envrate("REASONING_ACTION_RATE", "120/minute"),
    # A replay runs a whole strategy over the ledger: it spends no money but a server's time, so it is counted.
    "REPLAY_RATE": envrate("REASONING_REPLAY_RATE", "10/minute"),
    # Login attempts (POSTs to the login pages, the admin's included) per username and per client address.
    "LOGIN_RATE": envrate("REASONING_LOGIN_RATE", "10/5minutes"),
    "LOGIN_IP_RATE": envrate("REASONING_LOGIN_IP_RATE", "50/5minutes"),
    # Messages one live socket may send (actions and snapshot requests together), and snapshots it may ask for; a
    # socket past either is closed with code 4429. A browser asks for a snapshot only after a gap in seq.
    "SOCKET_RATE": envrate("REASONING_SOCKET_RATE", "60/10s"),
    "SOCKET_SNAPSHOT_RATE": envrate("REASONING_SOCKET_SNAPSHOT_RATE", "10/10s"),
}

CELERY_BROKER_URL = REDIS_URL or "memory://"
CELERY_TASK_ACKS_LATE = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
