#!/usr/bin/env bash
# Set up the environment (first time only), then run the test suite.
#   bash tools/run_tests.sh [pytest args...]   (e.g. -n 0: no parallel workers)
set -euo pipefail
REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="${MMVITDYN_VENV:-$REPO/.venv}"
bash "$REPO/tools/setup_env.sh"
cd "$REPO"
# One worker per CPU core (pytest-xdist); a test file runs whole in one
# worker, so its module fixtures are built once. `-n 0` runs in this process.
# The workers and the tools they start share the cores: OpenMP threads that
# wait without spinning, as docs/benchmarks.md advises for a busy machine.
export GOMP_SPINCOUNT="${GOMP_SPINCOUNT:-0}"
exec "$VENV/bin/python" -m pytest tests -n auto --dist loadfile "$@"
