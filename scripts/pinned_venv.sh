# shellcheck shell=bash
# Sourced by lint.sh, docs.sh and molecule.sh: their tool venvs, each holding exactly its pinned packages.
# pinned_venv DIR PINS PYTHON: a venv at DIR made with PYTHON when missing; PINS (pip requirement words, from PyPI)
# installed when the venv was made with others (DIR/.pins). Returns 2 when the venv cannot be made or filled.
pinned_venv() {
  local dir=$1 pins=$2 python=$3
  if [ ! -x "$dir/bin/python" ]; then
    echo "creating $dir with $python" >&2
    "$python" -m venv "$dir" || return 2
  fi
  if [ "$(cat "$dir/.pins" 2>/dev/null)" != "$pins" ]; then
    echo "installing $pins into $dir" >&2
    # shellcheck disable=SC2086
    "$dir/bin/pip" install --quiet --disable-pip-version-check $pins || return 2
    echo "$pins" > "$dir/.pins"
  fi
}
