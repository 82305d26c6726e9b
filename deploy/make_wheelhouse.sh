#!/usr/bin/env bash
# An offline classroom kit: every wheel a lab machine with no internet needs to install the explorer, in one
# folder: this package, CPU-only torch, triton, the explorer's extra and all their dependencies.
#
#   deploy/make_wheelhouse.sh [FOLDER]          # default: wheelhouse/ (git-ignored)
#
# then, on each lab machine (same OS, CPU kind and Python version as the one that made it):
#
#   pip install --no-index --find-links wheelhouse "fused-softmax-explorer[app]"
#
# Torch comes from the PyTorch CPU index (TORCH_INDEX to change it), or from a wheel already on disk
# (TORCH_WHEEL=/path/to/torch-...+cpu-...whl). It is pinned to that exact build, so the rest is resolved
# against it and PyPI's CUDA build (several GB) is never pulled in.
set -euo pipefail
cd "$(dirname "$0")/.."
OUT="${1:-wheelhouse}"
TORCH_INDEX="${TORCH_INDEX:-https://download.pytorch.org/whl/cpu}"
mkdir -p "$OUT"
python -m pip wheel -q --no-deps -w "$OUT" .
if [ -n "${TORCH_WHEEL:-}" ]; then
    cp "$TORCH_WHEEL" "$OUT"/
else
    python -m pip download -q --no-deps -d "$OUT" --index-url "$TORCH_INDEX" "torch>=2.11"
fi
TORCH_FILE="$(ls -t "$OUT"/torch-*.whl | head -1)"
TORCH_VERSION="$(basename "$TORCH_FILE" | cut -d- -f2)"
PACKAGE="$(ls -t "$OUT"/fused_softmax_explorer-*.whl | head -1)"
# torch's own dependencies too (the CPU build's), and everything the package and its [app] extra need
python -m pip download -q -d "$OUT" --find-links "$OUT" "torch==${TORCH_VERSION}" "${PACKAGE}[app]"
echo "wrote $(ls "$OUT" | wc -l) wheels ($(du -sh "$OUT" | cut -f1)) to $OUT; torch ${TORCH_VERSION}"
echo "install offline with: pip install --no-index --find-links $OUT \"fused-softmax-explorer[app]\""
