#!/usr/bin/env bash
# The collection's quality gates, each a count of findings:
#   1. ansible-lint --profile production (.ansible-lint holds the exclusions and why);
#   2. ansible-test sanity with ansible-core 2.21 (Python 3.12), every test that runs without containers, and 2.19
#      (Python 3.11), the tests whose verdict depends on the release or the Python (compile, import,
#      validate-modules, ansible-doc, runtime-metadata), on a copy
#      of the checkout laid out as ansible_collections/ascend/sglang (tracked and new files;
#      tests/sanity/ignore-<release>.txt applies);
#   3. ansible-test units on that copy with the oldest ansible-core release the collection supports (2.19, the
#      oldest requires_ansible admits and the newest that runs on Python 3.11): the host-side tests
#      (tests/unit/plugins/modules, module_utils) on the oldest host Python (3.11, Debian bookworm's); README's
#      test command runs them with 2.21 on 3.12, and the controller's unit tests (they run no ansible-core code);
#      the tests of files the roles run on the hosts (tests/unit/roles) with pytest on 3.11 too;
#      each failed or erroring test is a finding;
#   4. the built tarball installed into a temporary collections path renders, by FQCN from another directory,
#      byte for byte what the checkout's render mode writes;
#   5. the documentation (scripts/docs.sh): antsibull-docs lint-collection-docs --plugin-docs at 0 findings, and
#      the offline HTML build of the docsite with a page for every plugin, role and guide;
#   6. galaxy: Galaxy's own import checks (galaxy-importer, what Galaxy and Automation Hub run on every upload) on
#      the publishable tarball scripts/release.sh builds with a test repository URL: the metadata, the READMEs,
#      ansible-doc of every plugin, the changelog, the execution-environment file; its ansible-lint and
#      ansible-test runs off (gates 1 and 2 run them, stricter and without the importer's time limit): every
#      ERROR and every WARNING line is a finding, but those listed in GALAXY_ACCEPTED (each with its reason).
# Sets up its own tools under .cache/lint (venvs with pinned ansible-lint / ansible-core / galaxy-importer, PyPI only;
# the shellcheck binary and Python 3.11's venv module from the distribution's packages), installing only what
# is missing.
# Ends with one summary line, findings by file; exits non-zero on any finding.
#   scripts/lint.sh               # all gates
#   scripts/lint.sh lint sanity   # only the named ones (lint, sanity, units, render, docs, galaxy)
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
ROOT=$PWD
TOOLS=${SGLANG_LINT_TOOLS:-$ROOT/.cache/lint}   # where its venvs live
LINT_PINS="ansible-lint==26.10.1 ansible-core==2.21.5"
SANITY_PINS="ansible-core==2.21.5"
OLDEST_PINS="ansible-core==2.19.14"   # the oldest release requires_ansible admits, on Python 3.11 (units too)
# galaxy-importer and its direct requirements, exactly: the ansible-core whose ansible-doc it runs, the ansible-lint
# it runs (0.4.44 admits up to 26.10.1, the lint gate's release), the ansible-builder whose introspection reads
# meta/execution-environment.yml, and what parses the metadata and renders the READMEs.
GALAXY_PINS="galaxy-importer==0.4.44 ansible-core==2.21.5 ansible-lint==26.10.1 ansible-builder==3.2.0 attrs==23.2.0
 nh3==0.3.8 flake8==6.1.0 markdown==3.11.3 pyyaml==6.0.4 requests==2.34.2 semantic-version==2.10.0 packaging==26.4"
PROFILE=deepseek_r1_pd32
log() { printf 'lint.sh: %s\n' "$*" >&2; }
start=$SECONDS
gates=("$@")
[ ${#gates[@]} -gt 0 ] || gates=(lint sanity units render docs galaxy)
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

# shellcheck source=/dev/null  # scripts/pinned_venv.sh
. "$ROOT/scripts/pinned_venv.sh"
# venv DIR PINS [PYTHON]: a venv holding exactly PINS; PYTHON: its interpreter (default: a Python >= 3.12).
venv() {
  pinned_venv "$1" "$2" "${3:-$(pick_python)}" || exit 2
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

# ansible-test keeps its per-test venvs and its pip bootstrap script under $HOME/.ansible/test; the bootstrap
# script comes from ansible-test's own file server, which scripts/lint/get_pip.py replaces (PyPI only).
# ansible_test_home [VENV]: prints the HOME to give the ansible-test of VENV (default: the sanity venv).
ansible_test_home() {
  local home=$TOOLS/ansible-test-home pip_version venv=${1:-$TOOLS/sanity}
  pip_version=$(grep -oE "pip='[0-9.]+'" "$venv"/lib/python3*/site-packages/ansible_test/_internal/python_requirements.py \
                | head -n 1 | grep -oE '[0-9.]+[0-9]')
  mkdir -p "$home/.ansible/test/cache"
  cp scripts/lint/get_pip.py "$home/.ansible/test/cache/get_pip_${pip_version//./_}.py"
  echo "$home"
}

# The checkout (tracked and new files) laid out as ansible_collections/ascend/sglang, as ansible-test needs it;
# made once, shared by the sanity and units gates. Prints its path.
collection_copy() {
  local col=$work/ac/ansible_collections/ascend/sglang
  if [ ! -d "$col" ]; then
    mkdir -p "$col"
    git ls-files -co --exclude-standard -z | xargs -0 cp -P --parents -t "$col" 2>/dev/null
    (cd "$col" && git init -q && git add -A >/dev/null 2>&1)
  fi
  echo "$col"
}

# ----------------------------------------------------------------------------------- ansible-test sanity
gate_sanity() {
  venv "$TOOLS/sanity" "$SANITY_PINS"
  venv "$TOOLS/units-2.19" "$OLDEST_PINS" "$(python311)"
  if ! command -v shellcheck >/dev/null; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
      log "installing shellcheck"
      DEBIAN_FRONTEND=noninteractive apt-get install -y -q shellcheck >/dev/null 2>&1 \
        || { apt-get update -q >/dev/null 2>&1 && DEBIAN_FRONTEND=noninteractive apt-get install -y -q shellcheck >/dev/null; }
    fi
    command -v shellcheck >/dev/null || { log "shellcheck is missing (the shellcheck sanity test needs it)"; exit 2; }
  fi
  local home col core venv rc out python
  col=$(collection_copy)
  # The newest release and the oldest one requires_ansible admits (tests/sanity/ignore-<release>.txt each).
  # The newest runs every test; the oldest only those whose verdict depends on the release or on Python 3.11:
  # compile and import on 3.11, validate-modules and ansible-doc (the release's argument-spec and documentation
  # schemas) and runtime-metadata (its meta/runtime.yml schema). The style and lint checks and the code-smell
  # tests read the files alone: a second run would repeat the first.
  local only sel t
  for core in 2.21 2.19; do
    case $core in
      2.21) venv=$TOOLS/sanity python=3.12 only= ;;
      *) venv=$TOOLS/units-$core python=3.11 only="compile import validate-modules ansible-doc runtime-metadata" ;;
    esac
    sel=(); for t in $only; do sel+=(--test "$t"); done
    home=$(ansible_test_home "$venv"); out=$work/sanity-$core.out
    log "ansible-test sanity --local --python $python with ansible-core $core (${only:-every test without containers})"
    (cd "$col" && HOME=$home "$venv/bin/ansible-test" sanity --local --python "$python" --requirements \
       --color no "${sel[@]}" >"$out" 2>&1)
    rc=$?
    grep -E '^ERROR: [^ :]+:[0-9]+:[0-9]+: ' "$out" >&2
    grep -E '^ERROR: [^ :]+:[0-9]+:[0-9]+: ' "$out" | sed 's/^ERROR: //' | cut -d: -f1 \
      | sed "s/^/sanity-$core /" >> "$work/findings"
    if [ "$rc" -ne 0 ] && ! grep -q "^sanity-$core " "$work/findings"; then
      tail -n 30 "$out" >&2
      echo "sanity-$core (ansible-test exited $rc)" >> "$work/findings"
    fi
  done
}

# ------------------------------------------------------------------------------------ ansible-test units
# A Python 3.11 venv for the host-side tests: ansible-test drives this interpreter as a target only; it installs
# pytest and PyYAML into it (--requirements) and puts only ansible.module_utils and the collection loader on
# its path, so a host-side test that needed controller code from ansible would fail here.
# python311 [SUFFIX]: one venv per ansible-core release (its ansible-test installs its own constraints).
# The 2.19 venv is made from that interpreter too (a venv made with a venv's python uses the base Python).
python311() {
  local dir=$TOOLS/units-python3.11${1:-}
  if [ ! -x "$dir/bin/python" ]; then
    command -v python3.11 >/dev/null || { log "python3.11 is missing (the oldest host Python, Debian bookworm's)"; exit 2; }
    if ! python3.11 -m venv "$dir" >/dev/null 2>&1; then
      rm -rf "$dir"
      if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
        log "installing python3.11-venv"
        DEBIAN_FRONTEND=noninteractive apt-get install -y -q python3.11-venv >/dev/null 2>&1 \
          || { apt-get update -q >/dev/null 2>&1 && DEBIAN_FRONTEND=noninteractive apt-get install -y -q python3.11-venv >/dev/null; }
      fi
      python3.11 -m venv "$dir" || { log "python3.11 -m venv failed (Debian: apt-get install python3.11-venv)"; exit 2; }
    fi
  fi
  echo "$dir/bin/python"
}

# units_findings OUT LABEL RC: failed or erroring tests of one run's output become findings.
units_findings() {
  local out=$1 label=$2 rc=$3
  # pytest -r a: "FAILED path::test - reason", "ERROR path[::test] - reason"
  grep -E '^(FAILED|ERROR) tests/' "$out" >&2
  grep -E '^(FAILED|ERROR) tests/' "$out" | awk '{print $2}' | cut -d: -f1 | sed 's/^/units /' >> "$work/findings"
  grep -E '^=+ .*(passed|failed|error).* in [0-9.]+s' "$out" | sed "s/^/units, $label: /" >&2
  if [ "$rc" -ne 0 ] && ! grep -qE '^(FAILED|ERROR) tests/' "$out"; then
    tail -n 30 "$out" >&2
    echo "units ($label exited $rc)" >> "$work/findings"
  fi
}

# units_run CORE VENV PYTHON_VERSION PYTHON PATHS...: one ansible-test units run with the ansible-core release
# CORE installed in VENV.
units_run() {
  local core=$1 venv=$2 version=$3 python=$4 home col rc; shift 4
  home=$(ansible_test_home "$venv"); col=$(collection_copy)
  (cd "$col" && HOME=$home "$venv/bin/ansible-test" units --local --python "$version" --python-interpreter "$python" \
     --requirements --color no "$@" >"$work/units-$core-$version.out" 2>&1)
  rc=$?
  units_findings "$work/units-$core-$version.out" "ansible-core $core, Python $version" "$rc"
}

gate_units() {
  venv "$TOOLS/units-2.19" "$OLDEST_PINS" "$(python311)"
  local host_tests=() d py311 col rc
  for d in tests/unit/plugins/modules tests/unit/plugins/module_utils; do
    [ -d "$d" ] && host_tests+=("$d/")
  done
  # The host-side tests with the oldest ansible-core release on the oldest host Python: README's test command
  # runs them with the newest release on 3.12, so the two runs span both ranges. The controller's unit tests
  # (tests/unit/plugins/plugin_utils, ...) run once, in README's test command: plugin_utils imports nothing of
  # ansible-core, so another release would run the same code, and Python 3.11's syntax is the 2.19 sanity run's
  # compile test.
  log "ansible-test units (ansible-core 2.19): ${host_tests[*]} on Python 3.11"
  py311=$(python311 -2.19)
  units_run 2.19 "$TOOLS/units-2.19" 3.11 "$py311" "${host_tests[@]}"
  # Files the roles copy to the hosts and run there (the instance watchdog): ansible-test counts every test
  # outside plugins/modules and plugins/module_utils as controller code (run above with ansible on the path), so
  # pytest runs them on the 3.11 venv as well, which has no ansible (pytest installed there by the host-side run
  # above): they import no ansible code.
  if [ -d tests/unit/roles ]; then
    log "pytest tests/unit/roles on Python 3.11 (files the roles run on the hosts)"
    col=$(collection_copy)
    (cd "$col" && "$py311" -m pytest -p no:cacheprovider tests/unit/roles >"$work/units-roles-3.11.out" 2>&1)
    rc=$?
    units_findings "$work/units-roles-3.11.out" "host files, Python 3.11" "$rc"
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
  tar -tzf "$out"/build/ascend-sglang-*.tar.gz > "$out/members"
  # Nothing of the development tree may ship; .ansible-lint does (galaxy.yml says why: Galaxy's own lint run reads it).
  grep -E '^(tests|scripts|bench|extensions|changelogs/fragments)/|^ansible\.cfg$|^\.' "$out/members" \
    | grep -vxF .ansible-lint \
    | sed 's/^/render /' | tee -a "$work/findings" | sed 's/^render /shipped: /' >&2
  # The README that ships is a Galaxy user's: every file it links to ships too.
  grep -oE '\]\([^)#:]+\)' README.md | sed 's/^](//; s/)$//' | sort -u | while read -r target; do
    grep -qxF "$target" "$out/members" \
      || { echo "render README.md (links to $target, which the tarball lacks)" >> "$work/findings"
           log "README.md links to $target, which the tarball lacks"; }
  done
  (cd "$out/elsewhere" && ANSIBLE_COLLECTIONS_PATH=$out/collections "$ROOT/.venv/bin/ansible-playbook" \
     ascend.sglang.render -i "$ROOT/inventories/example" -e "sglang_profile=$PROFILE" \
     -e "sglang_render_dir=$out/installed" >"$out/installed.log" 2>&1) \
    || { tail -n 30 "$out/installed.log" >&2; echo "render playbooks/render.yml (FQCN run failed)" >> "$work/findings"; return; }
  ANSIBLE_COLLECTIONS_PATH=$ROOT/.collections .venv/bin/ansible-playbook -i inventories/example playbooks/render.yml \
    -e "sglang_profile=$PROFILE" -e "sglang_render_dir=$out/checkout" >"$out/checkout.log" 2>&1 \
    || { tail -n 30 "$out/checkout.log" >&2; echo "render playbooks/render.yml (checkout run failed)" >> "$work/findings"; return; }
  # The scrape configuration names its files by absolute path: the one difference two render directories may show.
  [ -f "$out/installed/monitoring/prometheus.yml" ] \
    && sed -i "s#$out/installed/#$out/checkout/#g" "$out/installed/monitoring/prometheus.yml"
  if ! diff -r "$out/checkout" "$out/installed" >&2; then
    echo "render playbooks/render.yml (installed collection renders differently)" >> "$work/findings"
  elif [ -z "$(find "$out/checkout" -type f -name '*.service')" ]; then
    echo "render playbooks/render.yml (no unit rendered)" >> "$work/findings"
  fi
}

# ------------------------------------------------------------------------- documentation (scripts/docs.sh)
gate_docs() {
  local out=$work/docs.out rc
  log "scripts/docs.sh (antsibull-docs lint-collection-docs --plugin-docs; the offline docsite build)"
  ./scripts/docs.sh >"$out" 2>&1
  rc=$?
  # A lint finding is "path:line:column: message"; a failed build or a missing page is one finding.
  grep -E '^[^ :]+:[0-9]+:[0-9]+: ' "$out" >&2
  grep -E '^[^ :]+:[0-9]+:[0-9]+: ' "$out" | cut -d: -f1 | sed 's/^/docs /' >> "$work/findings"
  if [ "$rc" -ne 0 ] && ! grep -q '^docs ' "$work/findings"; then
    tail -n 30 "$out" >&2
    echo "docs (scripts/docs.sh exited $rc)" >> "$work/findings"
  fi
  grep '^docs: ' "$out" >&2
}

# ------------------------------------------------------------------- galaxy-importer (Galaxy's own checks)
# What galaxy-importer reports that the collection cannot change: one extended regular expression per line of its
# output ("LEVEL: message"), each with its reason. Everything else it logs at WARNING, ERROR or CRITICAL is a finding.
# With the roles' READMEs and the publisher's repository URL it reports nothing: the list is empty.
GALAXY_ACCEPTED=()

# log_seconds LOG FROM TO: seconds between the lines of LOG ("<second>\t<line>") matching the regular expressions
# FROM and TO ("?" when either is missing).
log_seconds() {
  awk -F '\t' -v from="$2" -v to="$3" '$2 ~ from {s = $1} $2 ~ to && s != "" {e = $1}
    END {if (s == "" || e == "") print "?"; else print e - s}' "$1"
}

gate_galaxy() {
  venv "$TOOLS/galaxy-importer" "$GALAXY_PINS"
  local out=$work/galaxy tarball rc
  mkdir -p "$out/build" "$out/tmp" "$out/ansible-home"
  log "galaxy-importer on scripts/release.sh's tarball (test repository URL; its ansible-lint and ansible-test off)"
  # A test URL under .invalid (reserved, RFC 2606: plainly no project's home); it reaches only the tarball built
  # here, from a copy of the checkout, and never the checkout's galaxy.yml.
  if ! tarball=$(SGLANG_COLLECTION_REPOSITORY=https://example.invalid/ascend-sglang ./scripts/release.sh "$out/build" \
                 2>"$out/release.log"); then
    cat "$out/release.log" >&2; echo "galaxy scripts/release.sh (no publishable tarball)" >> "$work/findings"; return
  fi
  # Galaxy's checks as they run on an upload, with ansible-test off (the sanity gate runs it, with two releases)
  # and ansible-lint off: the lint gate runs the same ansible-lint release over the same files with the shipped
  # .ansible-lint, under the stricter production profile, where Galaxy only reports its findings as warnings and
  # stops the run after a fixed 180 s (a limit that measures the machine, not the collection). Every path is
  # this run's.
  cat > "$out/galaxy-importer.cfg" <<CFG
[galaxy-importer]
RUN_ANSIBLE_LINT = False
RUN_ANSIBLE_TEST = False
RUN_ANSIBLE_DOC = True
CHECK_CHANGELOG = True
TMP_ROOT_DIR = $out/tmp
ANSIBLE_LOCAL_TMP = $out/tmp/ansible
CFG
  # galaxy-importer runs ansible-doc from PATH: its venv's. Its GALAXY_IMPORTER_* environment
  # variables override the file: none is taken from the caller. Its own Ansible home, as in the lint gate (an
  # installed ascend.sglang there would shadow the tarball's).
  local unset_args=() name
  for name in $(compgen -e | grep '^GALAXY_IMPORTER_'); do unset_args+=(-u "$name"); done
  # Each line of its log gets the second it came at: the gate says how long ansible-doc took.
  (cd "$out" && env "${unset_args[@]}" PATH="$TOOLS/galaxy-importer/bin:$PATH" ANSIBLE_HOME="$out/ansible-home" \
     GALAXY_IMPORTER_CONFIG="$out/galaxy-importer.cfg" \
     "$TOOLS/galaxy-importer/bin/python" -m galaxy_importer.main "$tarball" 2>&1; echo $? > "$out/rc") \
    | while IFS= read -r line; do printf '%s\t%s\n' "$SECONDS" "$line"; done > "$out/importer.log"
  rc=$(cat "$out/rc" 2>/dev/null || echo 2)
  cut -f 2- "$out/importer.log" > "$out/importer.out"
  log "galaxy-importer: ansible-doc $(log_seconds "$out/importer.log" '^Getting doc strings' '^Finding content') s"
  # Its log: INFO lines bare, the others "LEVEL: message"; a finding in pep8 format ("path:line[:col]: rule:
  # message") counts under its file, the rest under galaxy-importer.
  local line accepted
  grep -E '^(WARNING|ERROR|CRITICAL): ' "$out/importer.out" | while IFS= read -r line; do
    for accepted in "${GALAXY_ACCEPTED[@]}"; do
      [[ $line =~ $accepted ]] && { log "galaxy-importer, accepted: $line"; continue 2; }
    done
    printf '%s\n' "$line" >&2
    if [[ $line =~ ^WARNING:\ ([^\ :]+):[0-9]+(:[0-9]+)?:\  ]]; then
      echo "galaxy ${BASH_REMATCH[1]}"
    else
      echo "galaxy galaxy-importer"
    fi
  done >> "$work/findings"
  if [ "$rc" -ne 0 ] || ! grep -q '^Importer processing completed successfully' "$out/importer.out"; then
    tail -n 30 "$out/importer.out" >&2
    echo "galaxy galaxy-importer (the import failed, exit $rc)" >> "$work/findings"
  fi
}

./scripts/setup.sh >/dev/null || exit 2   # .venv and the .collections link
declare -A took   # seconds per gate, printed in the summary: CI's time budget is read from them
for g in "${gates[@]}"; do
  began=$SECONDS
  case $g in
    lint) gate_lint ;;
    sanity) gate_sanity ;;
    units) gate_units ;;
    render) gate_render ;;
    docs) gate_docs ;;
    galaxy) gate_galaxy ;;
    *) log "unknown gate $g (lint, sanity, units, render, docs, galaxy)"; exit 2 ;;
  esac
  took[$g]=$((SECONDS - began))
done

total=$(grep -c . "$work/findings")
per_gate=$(for g in "${gates[@]}"; do
  case $g in lint) key=ansible-lint ;; *) key=$g ;; esac
  printf '%s %s (%s s), ' "$key" "$(grep -cE "^${key}[ -]" "$work/findings")" "${took[$g]}"
done)
by_file=$(awk '{print $2}' "$work/findings" | sort | uniq -c | sort -rn | awk '{printf "%s %s, ", $2, $1}')
echo "lint: $total findings (${per_gate%, }) in $((SECONDS - start)) s${by_file:+; by file: ${by_file%, }}"
[ "$total" -eq 0 ]
