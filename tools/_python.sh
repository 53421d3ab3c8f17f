# Sourced by dist_train.sh, dist_test.sh, slurm_train.sh and slurm_test.sh:
# sets PYTHON to the interpreter that runs mmvitdyn, the first of
#   1. $PYTHON, when set;
#   2. the project's environment made by tools/setup_env.sh:
#      $MMVITDYN_VENV/bin/python, or <repo>/.venv/bin/python when it exists;
#   3. the active environment's python (python, else python3, on PATH);
# and stops with how to set up when that interpreter cannot import torch.

_mmvitdyn_repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
if [[ -n "${PYTHON:-}" ]]; then
    _mmvitdyn_from="PYTHON"
elif [[ -n "${MMVITDYN_VENV:-}" ]]; then
    PYTHON="$MMVITDYN_VENV/bin/python"
    _mmvitdyn_from="MMVITDYN_VENV"
elif [[ -x "$_mmvitdyn_repo/.venv/bin/python" ]]; then
    PYTHON="$_mmvitdyn_repo/.venv/bin/python"
    _mmvitdyn_from="the project's environment"
else
    PYTHON="$(command -v python || command -v python3 || true)"
    _mmvitdyn_from="PATH"
fi
if [[ -z "$PYTHON" ]]; then
    _mmvitdyn_error="no python on PATH"
elif ! _mmvitdyn_error="$("$PYTHON" -c 'import torch' 2>&1)"; then
    _mmvitdyn_error="$PYTHON (from $_mmvitdyn_from) cannot import torch: $(tail -n 1 <<<"$_mmvitdyn_error")"
else
    _mmvitdyn_error=""
fi
if [[ -n "$_mmvitdyn_error" ]]; then
    cat >&2 <<EOF
[mmvitdyn] $_mmvitdyn_error
Set up mmvitdyn's environment once with:  bash $_mmvitdyn_repo/tools/setup_env.sh
(it makes ${MMVITDYN_VENV:-$_mmvitdyn_repo/.venv}, which the tools then use), or activate
an environment that has torch and mmcv, or name its interpreter: PYTHON=/path/to/python
EOF
    exit 1
fi
