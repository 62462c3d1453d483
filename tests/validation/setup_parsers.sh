#!/usr/bin/env bash
# Installs the real SGLang and sglang-router argument parsers the validation tests run, under
# .cache/parsers/: one shared Python environment with torch (the machine's pinned CPU build) and
# the import-time dependencies, plus each SGLang release unpacked with --no-deps into its own
# directory, and each sglang-router release in its own venv. Only what is missing is installed.
# .cache/parsers is a link to the user's cache (SGLANG_PARSERS_CACHE, else
# ${XDG_CACHE_HOME:-~/.cache}/ascend-sglang/parsers), so that every checkout of the collection on a machine
# shares one copy of these 2.9 GB instead of installing them again per clone; a real .cache/parsers directory
# (an older checkout's) is used as it is.
set -euo pipefail
cd "$(dirname "$0")/../.."
CACHE=.cache/parsers
if [ ! -e "$CACHE" ] && [ ! -L "$CACHE" ]; then
  shared=${SGLANG_PARSERS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/ascend-sglang/parsers}
  mkdir -p "$shared" .cache
  ln -s "$shared" "$CACHE"
fi
mkdir -p "$CACHE/"
# One install at a time into the shared copy (two checkouts' test runs may start together).
exec 9>"$CACHE/.lock"
flock 9
RELEASES_SGLANG=${RELEASES_SGLANG:-"$(.venv/bin/python tests/validation/releases.py sglang)"}
RELEASES_ROUTER=${RELEASES_ROUTER:-"$(.venv/bin/python tests/validation/releases.py sglang_router)"}
PIP=(--quiet --disable-pip-version-check)

# What is missing, said before anything is downloaded: the first run fetches about 2.9 GB from PyPI.
need_base=0
[ -x "$CACHE/base/bin/python" ] && "$CACHE/base/bin/python" -c 'import torch, triton, transformers, fastapi' 2>/dev/null \
  || need_base=1
missing=()
for rel in $RELEASES_SGLANG; do [ -f "$CACHE/sglang-$rel/.complete" ] || missing+=("sglang $rel"); done
for rel in $RELEASES_ROUTER; do
  "$CACHE/router-$rel/bin/python" -c 'import sglang_router' 2>/dev/null || missing+=("sglang-router $rel")
done
steps=$(( need_base + ${#missing[@]} ))
step=0
if [ "$steps" -gt 0 ]; then
  echo "parsers: $steps of $(( 1 + $(wc -w <<<"$RELEASES_SGLANG $RELEASES_ROUTER") )) parts missing; installing them into $CACHE"
  [ "$need_base" = 1 ] && echo "parsers:   the shared environment: torch 2.13.0 CPU, triton, transformers (about 1.9 GB installed)"
  [ "${#missing[@]}" -gt 0 ] && echo "parsers:   ${missing[*]} (about 150-500 MB each)"
  echo "parsers: a first run downloads about 2.9 GB from PyPI and takes about 10 minutes; later runs reuse $CACHE"
fi
started=$SECONDS
progress() { step=$((step + 1)); echo "parsers: [$step/$steps] $* ($((SECONDS - started)) s so far)"; }

# torch 2.13.0 has a CPU wheel for the machine's Python 3.11; an unpinned torch would pull CUDA.
py=$(command -v python3.11 || command -v python3)
if [ ! -x "$CACHE/base/bin/python" ]; then
  "$py" -m venv "$CACHE/base"
fi
if ! "$CACHE/base/bin/python" -c 'import torch, triton, transformers, fastapi' 2>/dev/null; then
  progress "the shared import environment (torch 2.13.0 CPU, triton, transformers 4.57.1, ...)"
  "$CACHE/base/bin/python" -m pip install "${PIP[@]}" torch==2.13.0 triton==3.5.0 transformers==4.57.1 numpy tqdm pybase64 requests \
    IPython pydantic aiohttp orjson safetensors pyzmq fastapi starlette packaging pillow openai \
    partial_json_parser huggingface_hub dill sentencepiece uvloop psutil setproctitle msgspec
fi
# torchvision has no CPU wheel here; sglang imports it only for multimodal processors, which the
# argument parser never runs: an import stub (tests/validation/import_stub.py) stands in. So it does for
# xgrammar, which 0.5.16's function-call parsers import at module level (the parser never builds a grammar):
# one stub rather than a download of the package for every release.
for stub in torchvision xgrammar; do
  mkdir -p "$CACHE/stubs/$stub"
  cp tests/validation/import_stub.py "$CACHE/stubs/$stub/__init__.py"
done
for rel in $RELEASES_SGLANG; do
  if [ ! -f "$CACHE/sglang-$rel/.complete" ]; then
    progress "sglang $rel"
    rm -rf "$CACHE/sglang-$rel"
    "$CACHE/base/bin/python" -m pip install "${PIP[@]}" --no-deps --target "$CACHE/sglang-$rel" "sglang==$rel"
    # A release pinning other transformers/tokenizers than the shared environment gets its own copy.
    pins=$(grep -hE '^Requires-Dist: (transformers|tokenizers)==' "$CACHE/sglang-$rel"/sglang-*.dist-info/METADATA \
           | sed 's/^Requires-Dist: //; s/ *;.*//' | grep -v '^transformers==4.57.1$' || true)
    if [ -n "$pins" ] && ! echo "$pins" | grep -q '^tokenizers==0.22'; then
      mapfile -t pin_list <<<"$pins"
      "$CACHE/base/bin/python" -m pip install "${PIP[@]}" --target "$CACHE/deps-$rel" "${pin_list[@]}"
    fi
    touch "$CACHE/sglang-$rel/.complete"
  fi
done
for rel in $RELEASES_ROUTER; do
  if [ ! -x "$CACHE/router-$rel/bin/python" ] || ! "$CACHE/router-$rel/bin/python" -c 'import sglang_router' 2>/dev/null; then
    progress "sglang-router $rel"
    "$py" -m venv "$CACHE/router-$rel"
    "$CACHE/router-$rel/bin/python" -m pip install "${PIP[@]}" "sglang-router==$rel"
  fi
done
echo "parsers: ready in $CACHE"
