#!/usr/bin/env bash
# The demo: set up the environment (first time only), generate the embedded
# data sets and run the main job on them (see tools/demo.py).
#   bash tools/demo.sh [demo.py args...]
set -euo pipefail
REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="${MMVITDYN_VENV:-$REPO/.venv}"
bash "$REPO/tools/setup_env.sh"
cd "$REPO"
exec "$VENV/bin/python" tools/demo.py "$@"
