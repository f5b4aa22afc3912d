# Two commands for a fresh machine: `make run` and `make test`.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
HOST ?= 127.0.0.1
PORT ?= 8000
export LITELLM_LOCAL_MODEL_COST_MAP := True
# Both profiles start Daphne through config/serving.py: one list of server flags (DAPHNE_FLAGS there), and the doors
# Daphne lacks (bodies counted as they stream, deadlines for headers and bodies). tests/config/test_serving.py runs it.

# The scale-out profile's tests run against real PostgreSQL and Redis servers (.ci/run starts them).
SCALE_DATABASE_URL ?= postgres://postgres@127.0.0.1:5432/reasoning
SCALE_REDIS_URL ?= redis://127.0.0.1:6379/0
SCALE_TESTS := tests/reasoning tests/api tests/config/test_shared_limits.py tests/explorer/test_consumers.py tests/explorer/test_socket_rights_live.py tests/explorer/test_snapshot.py tests/test_walking_skeleton.py tests/test_restart.py

.PHONY: run run-scaled test test-scale test-chaos test-real-model install browser migrate seed bench clean

$(BIN)/python:
	$(PY) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip

$(VENV)/.installed: pyproject.toml | $(BIN)/python
	$(BIN)/pip install --quiet -e ".[scale,test]"
	touch $@

node_modules/.installed: package.json package-lock.json
	npm ci --no-audit --no-fund --silent
	touch $@

install: $(VENV)/.installed node_modules/.installed

# The browser test drives Debian's chromium; as root with apt, install it when it is missing.
browser:
	@test -x /usr/bin/chromium || { [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null && \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; } || \
	  echo "chromium is not installed at /usr/bin/chromium: the browser test will be skipped (apt-get install chromium)"

migrate: install
	$(BIN)/python manage.py migrate --noinput

seed: migrate
	$(BIN)/python manage.py seed_demo

run: seed
	$(BIN)/python manage.py interrupt_running
	@echo ""
	@echo "  Explorer: http://$(HOST):$(PORT)/   login: advisor / advisor (demo only)   model: $${REASONING_MODEL_PRIMARY:-offline/sim}"
	@echo ""
	REASONING_OFFLINE_LATENCY_MS=$${REASONING_OFFLINE_LATENCY_MS:-150} $(BIN)/python -m config.serving -b $(HOST) -p $(PORT)

# The scaled profile on this machine: two Daphne servers (PORT, PORT + 1) and two Celery workers on PostgreSQL + Redis.
# SCALE_DATABASE_URL is the tables' owner's (migrate, seed); the servers and workers log in as reasoning_app.
run-scaled: install
	DATABASE_URL="$(SCALE_DATABASE_URL)" REDIS_URL="$(SCALE_REDIS_URL)" PORT=$(PORT) $(BIN)/python scripts/scaled.py

test: install browser
	$(BIN)/pytest
	$(MAKE) --no-print-directory test-scale

test-scale: install
	@if $(BIN)/python tests/services_up.py "$(SCALE_DATABASE_URL)" "$(SCALE_REDIS_URL)"; then \
	  echo "scale-out profile: PostgreSQL + Redis channel layer"; \
	  DATABASE_URL="$(SCALE_DATABASE_URL)" REDIS_URL="$(SCALE_REDIS_URL)" $(BIN)/pytest -p no:cacheprovider $(SCALE_TESTS); \
	elif [ -n "$$CI" ]; then echo "scale-out services are not reachable" >&2; exit 1; \
	else echo "scale-out tests skipped: PostgreSQL or Redis is not reachable (CI starts them)"; fi

# The chaos test: 20 sessions on the scaled profile while a pool child, Redis (its own, on CHAOS_REDIS_PORT) and a
# server are killed. PostgreSQL and redis-server must be installed; CI runs it after `make test`.
test-chaos: install
	@if $(BIN)/python tests/services_up.py "$(SCALE_DATABASE_URL)" "$(SCALE_REDIS_URL)" && command -v redis-server >/dev/null; then \
	  REASONING_CHAOS=1 DATABASE_URL="$(SCALE_DATABASE_URL)" $(BIN)/pytest -p no:cacheprovider tests/chaos; \
	elif [ -n "$$CI" ]; then echo "the chaos test needs PostgreSQL and redis-server" >&2; exit 1; \
	else echo "chaos test skipped: PostgreSQL or redis-server is not available (CI starts them)"; fi

# Tests against a real model: SmolLM2-135M served by llama-cpp-python on loopback (scripts/real_model.sh). Separate
# from `test`: the first run builds llama-cpp-python into ~/.cache/reasoning-wheels (about 14 minutes on two cores).
test-real-model: install
	PY=$(PY) APP_BIN=$(BIN) scripts/real_model.sh

bench: migrate
	$(BIN)/pip install --quiet -e ".[scale,test,bench]"
	$(BIN)/python bench/tot_critical_path.py
	$(BIN)/python bench/game24.py
	$(BIN)/python bench/search_quality.py  # the reference code runs in var/tot-reference-venv, built on first use
	$(BIN)/python bench/strategies.py
	$(BIN)/python bench/fact_fidelity.py
	$(BIN)/python bench/sessions_list.py
	$(BIN)/python bench/read_path.py --tree resting  # an unchanged tree: every 304, memo off then on
	$(BIN)/python bench/read_path.py  # PostgreSQL too when BENCH_POSTGRES_URL (or its default) is reachable
	$(BIN)/python bench/concurrent_sessions.py
	$(BIN)/python bench/explorer_browser.py
	$(BIN)/python bench/real_model.py  # skipped unless REASONING_REAL_MODEL_BASE names a served model

clean:
	rm -rf $(VENV) node_modules var staticfiles
