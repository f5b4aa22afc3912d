# Two commands for a fresh machine: `make run` and `make test`.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
HOST ?= 127.0.0.1
PORT ?= 8000
export LITELLM_LOCAL_MODEL_COST_MAP := True

.PHONY: run test install migrate seed bench e2e clean

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

migrate: install
	$(BIN)/python manage.py migrate --noinput

seed: migrate
	$(BIN)/python manage.py seed_demo

run: seed
	@echo ""
	@echo "  Explorer: http://$(HOST):$(PORT)/   login: advisor / advisor (demo only)   model: $${REASONING_MODEL_PRIMARY:-offline/sim}"
	@echo ""
	REASONING_OFFLINE_LATENCY_MS=$${REASONING_OFFLINE_LATENCY_MS:-150} $(BIN)/daphne -b $(HOST) -p $(PORT) config.asgi:application

test: install
	$(BIN)/pytest

bench: migrate
	$(BIN)/python bench/tot_critical_path.py

clean:
	rm -rf $(VENV) node_modules var staticfiles
