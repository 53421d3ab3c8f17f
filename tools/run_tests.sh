#!/usr/bin/env bash
# Set up the environment (first time only), then run the test suite.
#   bash tools/run_tests.sh [pytest args...]
set -euo pipefail
REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="${MMVITDYN_VENV:-$REPO/.venv}"
bash "$REPO/tools/setup_env.sh"
cd "$REPO"
exec "$VENV/bin/python" -m pytest tests "$@"
