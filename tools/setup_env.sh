#!/usr/bin/env bash
# Set up (once) the Python environment mmvitdyn runs in, and reuse it after.
#
#   bash tools/setup_env.sh          # idempotent; prints each step
#
# Environment variables:
#   MMVITDYN_VENV   virtual environment to create/use   (default: <repo>/.venv)
#   MMVITDYN_CACHE  cache for the built mmcv wheel        (default: ~/.cache/mmvitdyn)
#   PYTHON          interpreter for the venv (Python 3.11) (default: python3.11 or python3)
#   MAX_JOBS        parallel compile jobs for mmcv         (default: number of cores)
#   FORCE_CUDA=1    build mmcv's CUDA ops even when no GPU is visible; set
#                   TORCH_CUDA_ARCH_LIST (e.g. "8.0;9.0") to the GPUs you target.
#
# It installs the tested stack pinned in requirements/constraints.txt (to put
# mmvitdyn into an environment you already have, see the README's "Into your
# own environment"). The mmcv wheel is built from the PyPI sdist because no
# wheel exists for torch 2.14; it is cached under $MMVITDYN_CACHE/wheels/<key>/
# where the key names mmcv, torch, Python and cpu/cuXY, so a rebuild only
# happens when one of those changes.
set -Eeuo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="${MMVITDYN_VENV:-$REPO/.venv}"
CACHE="${MMVITDYN_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/mmvitdyn}"
CONSTRAINTS="$REPO/requirements/constraints.txt"
MMCV_VERSION="$(sed -n 's/^mmcv==\([^ #]*\).*/\1/p' "$CONSTRAINTS")"
MMACTION_VERSION="$(sed -n 's/^mmaction2==\([^ #]*\).*/\1/p' "$CONSTRAINTS")"
STEP="start"

step() {
    STEP="$1"
    printf '\n[setup] %s\n' "$STEP"
}
trap 'printf "\n[setup] FAILED at step: %s (exit %s)\n" "$STEP" "$?" >&2' ERR

# The stamp records what the environment was built from; if nothing changed,
# the whole set-up is skipped.
stamp_source() {
    cat "$REPO"/requirements/*.txt "$REPO/setup.py" "$REPO/tools/setup_env.sh"
    echo "FORCE_CUDA=${FORCE_CUDA:-0} TORCH_CUDA_ARCH_LIST=${TORCH_CUDA_ARCH_LIST:-}"
}
STAMP_FILE="$VENV/.mmvitdyn-setup"
STAMP="$(stamp_source | sha256sum | cut -d' ' -f1)"
if [[ -f "$STAMP_FILE" && "$(cat "$STAMP_FILE")" == "$STAMP" ]]; then
    echo "[setup] environment $VENV is up to date"
    exit 0
fi

step "1/6 check Python 3.11 and a C++ compiler"
PYTHON="${PYTHON:-$(command -v python3.11 || command -v python3)}"
"$PYTHON" -c 'import sys; assert sys.version_info[:2] == (3, 11), sys.version' \
    || { echo "[setup] need Python 3.11 (set PYTHON=/path/to/python3.11); got $("$PYTHON" --version)" >&2; false; }
command -v "${CXX:-g++}" >/dev/null \
    || { echo "[setup] need a C++ compiler (g++) to build mmcv's ops" >&2; false; }

step "2/6 create virtual environment $VENV"
[[ -x "$VENV/bin/python" ]] || "$PYTHON" -m venv "$VENV"
PY="$VENV/bin/python"
PIP=("$PY" -m pip --disable-pip-version-check)
# ninja must be on PATH or torch's extension builder silently compiles serially.
export PATH="$VENV/bin:$PATH"

step "3/6 install torch, torchvision and build tools (setuptools with pkg_resources, ninja)"
"${PIP[@]}" install -q -c "$CONSTRAINTS" -r "$REPO/requirements/torch.txt" -r "$REPO/requirements/build.txt"

step "4/6 install mmcv $MMCV_VERSION with compiled ops (cached wheel or build)"
DEVICE="$("$PY" - <<'EOF'
import os, torch
cuda = torch.cuda.is_available() or os.environ.get('FORCE_CUDA') == '1'
print('cu' + torch.version.cuda.replace('.', '') if cuda and torch.version.cuda else 'cpu')
EOF
)"
TORCH_VERSION="$("$PY" -c 'import torch; print(torch.__version__.split("+")[0])')"
PY_TAG="$("$PY" -c 'import sys; print(f"cp{sys.version_info[0]}{sys.version_info[1]}")')"
KEY="mmcv-${MMCV_VERSION}_torch-${TORCH_VERSION}_${PY_TAG}_${DEVICE}"
WHEEL_DIR="$CACHE/wheels/$KEY"
if ! compgen -G "$WHEEL_DIR/mmcv-*.whl" >/dev/null; then
    echo "[setup] no cached wheel for $KEY: building mmcv from source (about 13 min on 2 cores)"
    BUILD="$(mktemp -d)"
    "${PIP[@]}" download -q --no-deps --no-binary mmcv --no-build-isolation \
        -d "$BUILD" "mmcv==$MMCV_VERSION"
    tar -xzf "$BUILD"/mmcv-"$MMCV_VERSION".tar.gz -C "$BUILD"
    SRC="$BUILD/mmcv-$MMCV_VERSION"
    # torch >= 2.14 headers need C++20; mmcv 2.1.0 hard-codes c++14/c++17.
    sed -i -E 's/-std=c\+\+1[47]/-std=c++20/g' "$SRC/setup.py"
    if [[ "$DEVICE" != cpu ]]; then export FORCE_CUDA=1; fi
    (cd "$SRC" && MMCV_WITH_OPS=1 MAX_JOBS="${MAX_JOBS:-$(nproc)}" \
        "${PIP[@]}" wheel --no-build-isolation --no-deps -w "$BUILD/dist" .)
    mkdir -p "$CACHE/wheels"
    # Publish atomically: a half-built cache entry is never visible.
    mkdir -p "$BUILD/publish/$KEY"
    mv "$BUILD"/dist/mmcv-*.whl "$BUILD/publish/$KEY/"
    rm -rf "$WHEEL_DIR"
    mv "$BUILD/publish/$KEY" "$WHEEL_DIR"
    rm -rf "$BUILD"
else
    echo "[setup] reusing cached wheel $WHEEL_DIR"
fi
"${PIP[@]}" install -q --no-deps "$WHEEL_DIR"/mmcv-*.whl

step "5/6 install OpenMMLab packages, test tools and mmvitdyn (editable)"
"${PIP[@]}" install -q -c "$CONSTRAINTS" -r "$REPO/requirements/runtime.txt" \
    -r "$REPO/requirements/video.txt" -r "$REPO/requirements/tests.txt"
# mmaction2 without its dependencies (it asks for opencv-contrib-python, a second
# cv2 over mmcv's opencv-python; requirements/video.txt has what it imports),
# built from the PyPI sdist without the import of mmaction.models.localizers.drn,
# a folder its 1.2.0 release lacks (open-mmlab/mmaction2#2714). Pure Python:
# cached as the mmcv wheel is, keyed by its version only.
MMACTION_DIR="$CACHE/wheels/mmaction2-${MMACTION_VERSION}_no-drn"
if ! compgen -G "$MMACTION_DIR/mmaction2-*.whl" >/dev/null; then
    BUILD="$(mktemp -d)"
    "${PIP[@]}" download -q --no-deps --no-binary mmaction2 --no-build-isolation \
        -d "$BUILD" "mmaction2==$MMACTION_VERSION"
    tar -xzf "$BUILD"/mmaction2-"$MMACTION_VERSION".tar.gz -C "$BUILD"
    SRC="$BUILD/mmaction2-$MMACTION_VERSION"
    LOCALIZERS="$SRC/mmaction/models/localizers/__init__.py"
    if [[ ! -d "$SRC/mmaction/models/localizers/drn" ]]; then
        sed -i -e '/^from \.drn\.drn import DRN$/d' -e "s/, 'DRN'\]/]/" "$LOCALIZERS"
        if grep -q 'DRN' "$LOCALIZERS"; then  # the sdist changed: cache nothing
            echo "[setup] mmaction2 $MMACTION_VERSION: $LOCALIZERS still names DRN" >&2
            rm -rf "$BUILD"
            exit 1
        fi
    fi
    "${PIP[@]}" wheel -q --no-build-isolation --no-deps -w "$BUILD/dist" "$SRC"
    mkdir -p "$CACHE/wheels"
    rm -rf "$MMACTION_DIR"
    mv "$BUILD/dist" "$MMACTION_DIR"
    rm -rf "$BUILD"
fi
"${PIP[@]}" install -q --no-deps "$MMACTION_DIR"/mmaction2-*.whl
# openmim (`mim search mmvitdyn`) without its dependencies: it requires
# opendatalab, whose openxlab pins setuptools, requests and rich to versions
# the stack above cannot take, and `mim search` never imports either. What mim
# does import (click, model-index, pandas, tabulate, requests, rich, pip) comes
# with the stack and requirements/tests.txt.
"${PIP[@]}" install -q --no-deps -c "$CONSTRAINTS" openmim
"${PIP[@]}" install -q --no-deps --no-build-isolation -e "$REPO"

step "6/6 check the stack imports and mmcv's ops run"
"$PY" - <<'EOF'
import torch
from mmcv.ops import RoIAlign, nms
import mmaction.models, mmdet.models, mmseg.models, mmpretrain.models  # noqa: F401
import av, decord  # noqa: F401
import mmvitdyn  # noqa: F401
boxes = torch.tensor([[0., 0., 10., 10.], [1., 1., 10., 10.], [20., 20., 30., 30.]])
_, keep = nms(boxes, torch.tensor([0.9, 0.8, 0.7]), iou_threshold=0.5)
assert keep.tolist() == [0, 2], keep
feat = torch.arange(16.).view(1, 1, 4, 4)
out = RoIAlign((2, 2), spatial_scale=1.0, sampling_ratio=2)(feat, torch.tensor([[0., 0., 0., 4., 4.]]))
assert out.shape == (1, 1, 2, 2), out.shape
import mmaction, mmcv, mmdet, mmseg, mmpretrain, mmengine
print(f'[setup] torch {torch.__version__}, mmcv {mmcv.__version__}, mmengine {mmengine.__version__}, '
      f'mmdet {mmdet.__version__}, mmseg {mmseg.__version__}, mmpretrain {mmpretrain.__version__}, '
      f'mmaction2 {mmaction.__version__} (decord {decord.__version__}, av {av.__version__})')
EOF

echo "$STAMP" > "$STAMP_FILE"
echo "[setup] done: environment $VENV"
