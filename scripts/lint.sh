#!/usr/bin/env bash
# The collection's quality gates, each a count of findings:
#   1. ansible-lint --profile production (.ansible-lint holds the exclusions and why);
#   2. ansible-test sanity, every test that runs without containers, on a copy of the checkout laid out as
#      ansible_collections/ascend/sglang (tracked and new files; tests/sanity/ignore-*.txt applies);
#   3. the built tarball installed into a temporary collections path renders, by FQCN from another directory,
#      byte for byte what the checkout's render mode writes.
# Sets up its own tools under .cache/lint (venvs with pinned ansible-lint / ansible-core, PyPI only;
# the shellcheck binary from the distribution's packages), installing only what is missing.
# Ends with one summary line, findings by file; exits non-zero on any finding.
#   scripts/lint.sh               # all gates
#   scripts/lint.sh lint sanity   # only the named ones (lint, sanity, render)
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
ROOT=$PWD
TOOLS=${SGLANG_LINT_TOOLS:-$ROOT/.cache/lint}   # where its venvs live
LINT_PINS="ansible-lint==26.10.1 ansible-core==2.21.5"
SANITY_PINS="ansible-core==2.21.5"
PROFILE=deepseek_r1_pd32
log() { printf 'lint.sh: %s\n' "$*" >&2; }
start=$SECONDS
gates=("$@")
[ ${#gates[@]} -gt 0 ] || gates=(lint sanity render)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$TOOLS"
: > "$work/findings"   # one line per finding: "<gate> <file>"

pick_python() {
  # ansible-core 2.21 needs Python >= 3.12.
  local c
  if command -v pyenv >/dev/null 2>&1; then
    for c in "$(pyenv root)"/versions/3.1[2-9]*/bin/python3; do [ -x "$c" ] && { echo "$c"; return; }; done
  fi
  for c in python3.13 python3.12 python3; do
    if command -v "$c" >/dev/null 2>&1 && "$c" -c 'import sys; sys.exit(sys.version_info < (3, 12))'; then
      command -v "$c"; return
    fi
  done
  log "no Python >= 3.12 found (ansible-core 2.21 needs it)"; exit 2
}

# venv DIR PINS: a venv holding exactly PINS (reinstalled when the pins change).
venv() {
  local dir=$1 pins=$2
  [ -x "$dir/bin/python" ] || { log "creating $dir"; "$(pick_python)" -m venv "$dir" || exit 2; }
  if [ "$(cat "$dir/.pins" 2>/dev/null)" != "$pins" ]; then
    log "installing $pins into $dir"
    # shellcheck disable=SC2086
    "$dir/bin/pip" install --quiet --disable-pip-version-check $pins || exit 2
    echo "$pins" > "$dir/.pins"
  fi
}

# ------------------------------------------------------------------------------------------ ansible-lint
gate_lint() {
  venv "$TOOLS/ansible-lint" "$LINT_PINS"
  log "ansible-lint --offline --profile production"
  # Its own venv first on PATH: ansible-lint runs ansible-playbook --syntax-check from there. Its own Ansible
  # home: ansible-lint puts <ANSIBLE_HOME>/collections first, where an installed (older) ascend.sglang would
  # shadow the checkout.
  mkdir -p "$work/ansible-home"
  PATH="$TOOLS/ansible-lint/bin:$PATH" ANSIBLE_HOME="$work/ansible-home" ANSIBLE_COLLECTIONS_PATH="$ROOT/.collections" \
    "$TOOLS/ansible-lint/bin/ansible-lint" --offline --profile production --nocolor -f pep8 \
    >"$work/lint.out" 2>"$work/lint.err"
  local rc=$?
  # pep8 format: "path:line[:col]: rule: message"
  grep -E '^[^ :]+:[0-9]+(:[0-9]+)?: ' "$work/lint.out" >&2
  grep -E '^[^ :]+:[0-9]+(:[0-9]+)?: ' "$work/lint.out" | cut -d: -f1 | sed 's/^/ansible-lint /' >> "$work/findings"
  if [ "$rc" -ne 0 ] && ! grep -q '^ansible-lint ' "$work/findings"; then
    cat "$work/lint.err" >&2
    echo "ansible-lint (ansible-lint exited $rc)" >> "$work/findings"
  fi
}

# ----------------------------------------------------------------------------------- ansible-test sanity
gate_sanity() {
  venv "$TOOLS/sanity" "$SANITY_PINS"
  if ! command -v shellcheck >/dev/null; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
      log "installing shellcheck"
      DEBIAN_FRONTEND=noninteractive apt-get install -y -q shellcheck >/dev/null 2>&1 \
        || { apt-get update -q >/dev/null 2>&1 && DEBIAN_FRONTEND=noninteractive apt-get install -y -q shellcheck >/dev/null; }
    fi
    command -v shellcheck >/dev/null || { log "shellcheck is missing (the shellcheck sanity test needs it)"; exit 2; }
  fi
  # ansible-test keeps its per-test venvs and its pip bootstrap script under $HOME/.ansible/test; the bootstrap
  # script comes from ansible-test's own file server, which scripts/lint/get_pip.py replaces (PyPI only).
  local home=$TOOLS/ansible-test-home pip_version
  pip_version=$(grep -oE "pip='[0-9.]+'" "$TOOLS"/sanity/lib/python3*/site-packages/ansible_test/_internal/python_requirements.py \
                | head -n 1 | grep -oE '[0-9.]+[0-9]')
  mkdir -p "$home/.ansible/test/cache"
  cp scripts/lint/get_pip.py "$home/.ansible/test/cache/get_pip_${pip_version//./_}.py"
  local col=$work/sanity/ansible_collections/ascend/sglang
  mkdir -p "$col"
  git ls-files -co --exclude-standard -z | xargs -0 cp -P --parents -t "$col" 2>/dev/null
  (cd "$col" && git init -q && git add -A >/dev/null 2>&1)
  log "ansible-test sanity --local --python 3.12 (24 tests, without containers)"
  (cd "$col" && HOME=$home "$TOOLS/sanity/bin/ansible-test" sanity --local --python 3.12 --requirements \
     --color no >"$work/sanity.out" 2>&1)
  local rc=$?
  grep -E '^ERROR: [^ :]+:[0-9]+:[0-9]+: ' "$work/sanity.out" >&2
  grep -E '^ERROR: [^ :]+:[0-9]+:[0-9]+: ' "$work/sanity.out" | sed 's/^ERROR: //' | cut -d: -f1 \
    | sed 's/^/sanity /' >> "$work/findings"
  if [ "$rc" -ne 0 ] && ! grep -q '^sanity ' "$work/findings"; then
    tail -n 30 "$work/sanity.out" >&2
    echo "sanity (ansible-test exited $rc)" >> "$work/findings"
  fi
}

# --------------------------------------------------------------- build -> install -> FQCN render, compared
gate_render() {
  local out=$work/render
  mkdir -p "$out/build" "$out/collections" "$out/elsewhere"
  log "ansible-galaxy collection build / install, FQCN render of $PROFILE from another directory"
  if ! .venv/bin/ansible-galaxy collection build --output-path "$out/build" . >"$out/build.log" 2>&1 \
     || ! ANSIBLE_COLLECTIONS_PATH=$out/collections .venv/bin/ansible-galaxy collection install \
            -p "$out/collections" "$out"/build/ascend-sglang-*.tar.gz >>"$out/build.log" 2>&1; then
    cat "$out/build.log" >&2; echo "render galaxy.yml (build or install failed)" >> "$work/findings"; return
  fi
  # Nothing of the development tree may ship.
  tar -tzf "$out"/build/ascend-sglang-*.tar.gz | grep -E '^(tests|scripts|bench|extensions|changelogs/fragments)/|^ansible\.cfg$|^\.' \
    | sed 's/^/render /' | tee -a "$work/findings" | sed 's/^render /shipped: /' >&2
  (cd "$out/elsewhere" && ANSIBLE_COLLECTIONS_PATH=$out/collections "$ROOT/.venv/bin/ansible-playbook" \
     ascend.sglang.render -i "$ROOT/inventories/example" -e "sglang_profile=$PROFILE" \
     -e "sglang_render_dir=$out/installed" >"$out/installed.log" 2>&1) \
    || { tail -n 30 "$out/installed.log" >&2; echo "render playbooks/render.yml (FQCN run failed)" >> "$work/findings"; return; }
  ANSIBLE_COLLECTIONS_PATH=$ROOT/.collections .venv/bin/ansible-playbook -i inventories/example playbooks/render.yml \
    -e "sglang_profile=$PROFILE" -e "sglang_render_dir=$out/checkout" >"$out/checkout.log" 2>&1 \
    || { tail -n 30 "$out/checkout.log" >&2; echo "render playbooks/render.yml (checkout run failed)" >> "$work/findings"; return; }
  if ! diff -r "$out/checkout" "$out/installed" >&2; then
    echo "render playbooks/render.yml (installed collection renders differently)" >> "$work/findings"
  elif [ -z "$(find "$out/checkout" -type f -name '*.service')" ]; then
    echo "render playbooks/render.yml (no unit rendered)" >> "$work/findings"
  fi
}

./scripts/setup.sh >/dev/null || exit 2   # .venv and the .collections link
for g in "${gates[@]}"; do
  case $g in
    lint) gate_lint ;;
    sanity) gate_sanity ;;
    render) gate_render ;;
    *) log "unknown gate $g (lint, sanity, render)"; exit 2 ;;
  esac
done

total=$(grep -c . "$work/findings")
per_gate=$(for g in "${gates[@]}"; do
  case $g in lint) key=ansible-lint ;; *) key=$g ;; esac
  printf '%s %s, ' "$key" "$(grep -c "^$key " "$work/findings")"
done)
by_file=$(awk '{print $2}' "$work/findings" | sort | uniq -c | sort -rn | awk '{printf "%s %s, ", $2, $1}')
echo "lint: $total findings (${per_gate%, }) in $((SECONDS - start)) s${by_file:+; by file: ${by_file%, }}"
[ "$total" -eq 0 ]
