#!/usr/bin/env bash
# Evaluation on a Slurm cluster.
#   [GPUS=8] [GPUS_PER_NODE=8] [CPUS_PER_TASK=5] [SRUN_ARGS=...] \
#   tools/slurm_test.sh PARTITION JOB_NAME CONFIG CHECKPOINT [test.py args...]
set -euo pipefail
# The interpreter: $PYTHON, else the project's .venv, else the active python.
source "$(dirname "$0")/_python.sh"
PARTITION=$1
JOB_NAME=$2
CONFIG=$3
CHECKPOINT=$4
GPUS=${GPUS:-8}
GPUS_PER_NODE=${GPUS_PER_NODE:-8}
CPUS_PER_TASK=${CPUS_PER_TASK:-5}
SRUN_ARGS=${SRUN_ARGS:-""}

# shellcheck disable=SC2086  # SRUN_ARGS is a list of words
PYTHONPATH="$(dirname "$0")/..${PYTHONPATH:+:$PYTHONPATH}" \
srun -p "$PARTITION" \
    --job-name="$JOB_NAME" \
    --gres=gpu:"$GPUS_PER_NODE" \
    --ntasks="$GPUS" \
    --ntasks-per-node="$GPUS_PER_NODE" \
    --cpus-per-task="$CPUS_PER_TASK" \
    --kill-on-bad-exit=1 \
    $SRUN_ARGS \
    "$PYTHON" -u "$(dirname "$0")/test.py" "$CONFIG" "$CHECKPOINT" --launcher=slurm "${@:5}"
