#!/usr/bin/env bash
# The collection's documentation as antsibull-docs (the tool of Ansible's collection docsites) sees it:
#   1. lint: antsibull-docs lint-collection-docs --plugin-docs: every module's, filter's and role's
#      DOCUMENTATION / EXAMPLES / RETURN (or argument spec), docs/docsite/extra-docs.yml and links.yml, and the
#      guides in docs/docsite/rst/; each finding is printed;
#   2. build: the HTML docsite of the collection (every module, filter and role, and the guides) into
#      .docs-build/build/html, offline: antsibull-docs sphinx-init's site, whose conf.py would fetch intersphinx
#      inventories from docs.ansible.com and docs.python.org; here its one intersphinx inventory is a local file
#      written from the references the generated pages make to Ansible's own docs (the links still point to
#      docs.ansible.com), and the build runs with an unreachable proxy, so that nothing can wait on the network.
#      Sphinx warnings are errors. Then every plugin and role ansible-doc lists, and every guide, must have its
#      page.
# Sets up its own venv .venv-docs (pinned antsibull-docs, Sphinx and sphinx-ansible-theme, and the ansible-core
# release of .venv), installing only what is missing.
# Ends with one line, `docs: lint N findings, M pages in .docs-build/build/html`; exits non-zero on any lint
# finding, a failed build or a missing page.
#   scripts/docs.sh          # lint, then build
#   scripts/docs.sh lint     # only the named step (lint, build)
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
VENV=$ROOT/.venv-docs
DEST=$ROOT/.docs-build
DOCS_PINS="antsibull-docs==2.28.0 sphinx==9.1.1 sphinx-ansible-theme==0.10.4"
# The base URL of Ansible's docs in sphinx-init's conf.py: where the pages' references to them link.
ANSIBLE_DOCS=https://docs.ansible.com/projects/ansible/devel/
log() { printf 'docs.sh: %s\n' "$*" >&2; }
start=$SECONDS
steps=("$@")
[ ${#steps[@]} -gt 0 ] || steps=(lint build)
for s in "${steps[@]}"; do
  case $s in lint|build) ;; *) log "unknown step $s (lint, build)"; exit 2 ;; esac
done

./scripts/setup.sh >/dev/null   # .venv (whose ansible-core release the docs venv gets) and the .collections link

# The venv: made from .venv's interpreter, with .venv's ansible-core release (2.21 on Python >= 3.12, 2.19 on 3.11).
core=$(.venv/bin/python -c 'import ansible; print(ansible.__version__)')
pins="$DOCS_PINS ansible-core==$core"
# shellcheck source=/dev/null  # scripts/pinned_venv.sh
. "$ROOT/scripts/pinned_venv.sh"
pinned_venv "$VENV" "$pins" "$(.venv/bin/python -c 'import sys; print(sys._base_executable)')"
# antsibull-docs runs ansible and ansible-doc from PATH: the venv's, on the checkout as ascend.sglang.
export PATH=$VENV/bin:$PATH ANSIBLE_COLLECTIONS_PATH=$ROOT/.collections

findings=-
step_lint() {
  local out rc=0
  out=$(mktemp)
  log "antsibull-docs lint-collection-docs --plugin-docs ."
  antsibull-docs lint-collection-docs --plugin-docs . >"$out" 2>&1 || rc=$?
  # One finding a line: "path:line:column: message".
  findings=$(grep -cE '^[^ :]+:[0-9]+:[0-9]+: ' "$out" || true)
  grep -E '^[^ :]+:[0-9]+:[0-9]+: ' "$out" >&2 || true
  if [ "$rc" -ne 0 ] && [ "$findings" -eq 0 ]; then
    cat "$out" >&2; log "antsibull-docs exited $rc"; findings=1
  fi
  rm -f "$out"
}

pages=-
build_failed=0
step_build() {
  local html=$DEST/build/html t dir names missing=() name kind
  # sphinx-init wants its directory to exist, be ours and be writable by us alone.
  mkdir -p "$DEST"; chmod 700 "$DEST"
  log "antsibull-docs sphinx-init, collection (rst), sphinx-build into .docs-build/build/html"
  antsibull-docs sphinx-init --use-current --dest-dir "$DEST" --project ascend.sglang --title ascend.sglang \
    --copyright 'ascend.sglang maintainers' ascend.sglang >/dev/null
  # Its build.sh, step by step: the collection's RST (the guides included), then Sphinx.
  (cd "$DEST" && mkdir -p rst && chmod og-w rst \
   && antsibull-docs --config-file antsibull-docs.cfg collection --cleanup everything --use-current \
        --dest-dir rst ascend.sglang >"$DEST/collection.log" 2>&1) \
    || { cat "$DEST/collection.log" >&2; log "antsibull-docs collection failed"; build_failed=1; return; }
  # Offline intersphinx: conf.py's mapping (python, python3, jinja2, ansible_devel; each fetched from the web)
  # becomes one local inventory (ansible_devel.inv; Sphinx reads it relative to the source directory rst/,
  # hence ../) of the labels of Ansible's docs that the generated pages refer to.
  "$VENV/bin/python" - "$DEST" "$ANSIBLE_DOCS" <<'EOF' || { log "could not write the local intersphinx inventory"; build_failed=1; return; }
import pathlib, re, sys, zlib
dest, base = pathlib.Path(sys.argv[1]), sys.argv[2]
# Labels of Ansible's docs the generated pages use (antsibull-docs' templates), by page.
PAGES = {
    "common_return_values": "reference_appendices/common_return_values.html",
    "action_plugins": "plugins/action.html",
    "ansible_configuration_settings": "reference_appendices/config.html",
}
rst = list((dest / "rst").rglob("*.rst"))
defined = {m for p in rst for m in re.findall(r"^\.\. _([^:]+):\s*$", p.read_text(), re.M)}
used = {m for p in rst for m in re.findall(r":ref:`(?:[^`<]*<)?([^`<>]+)>?`", p.read_text())}
lines = []
for label in sorted(used - defined):
    m = re.fullmatch(r"ansible_collections\.ansible\.builtin\.(\w+)_(\w+)", label)
    page = f"collections/ansible/builtin/{m[1]}_{m[2]}.html" if m else PAGES.get(label)
    if page:  # the anchor of a label is its docutils id; any other label stays undefined: a Sphinx warning
        lines.append(f"{label} std:label -1 {page}#{re.sub(r'[^a-z0-9]+', '-', label.lower()).strip('-')} -\n")
head = "# Sphinx inventory version 2\n# Project: Ansible\n# Version: devel\n# The remainder of this file is compressed using zlib.\n"
(dest / "ansible_devel.inv").write_bytes(head.encode() + zlib.compress("".join(lines).encode()))
conf = dest / "conf.py"
text, n = re.subn(r"^intersphinx_mapping = \{.*?^\}$",
                  f"intersphinx_mapping = {{'ansible_devel': ({base!r}, '../ansible_devel.inv')}}",
                  conf.read_text(), count=1, flags=re.M | re.S)
if n != 1:
    sys.exit("docs.sh: conf.py of sphinx-init has no intersphinx_mapping block to replace")
conf.write_text(text)
EOF
  rm -rf "$DEST/build"
  # An unreachable proxy: a fetch that would slip through fails at once instead of waiting.
  (cd "$DEST" && http_proxy=http://127.0.0.1:9 https_proxy=http://127.0.0.1:9 no_proxy='' \
     HTTP_PROXY=http://127.0.0.1:9 HTTPS_PROXY=http://127.0.0.1:9 NO_PROXY='' \
     sphinx-build -M html rst build -c . -W --keep-going -q >"$DEST/sphinx.log" 2>&1) \
    || { cat "$DEST/sphinx.log" >&2; log "sphinx-build failed (warnings are errors)"; build_failed=1; return; }
  # Every plugin and role ansible-doc lists for the collection, and every guide, has its page.
  # Plugin types by their directory (module: plugins/modules), roles by roles/.
  for t in module filter test lookup callback connection inventory become cache vars strategy shell role; do
    case $t in module) dir=plugins/modules ;; role) dir=roles ;; *) dir=plugins/$t ;; esac
    [ -d "$dir" ] || continue
    names=$(ansible-doc -t "$t" -l ascend.sglang --json \
            | "$VENV/bin/python" -c 'import json, sys; print(" ".join(k.split(".")[-1] for k in json.load(sys.stdin)))') \
      || { log "ansible-doc -t $t -l ascend.sglang failed"; build_failed=1; return; }
    for name in $names; do
      [ -f "$html/collections/ascend/sglang/${name}_$t.html" ] || missing+=("${name}_$t")
    done
  done
  for kind in docs/docsite/rst/*.rst; do
    name=$(basename "$kind" .rst)
    [ -f "$html/collections/ascend/sglang/docsite/$name.html" ] || missing+=("docsite/$name")
  done
  if [ ${#missing[@]} -gt 0 ]; then
    log "no page for: ${missing[*]}"; build_failed=1
  fi
  pages=$(find "$html" -name '*.html' | wc -l)
}

for s in "${steps[@]}"; do "step_$s"; done
echo "docs: lint $findings findings, $pages pages in .docs-build/build/html in $((SECONDS - start)) s"
[ "$findings" = - ] || [ "$findings" -eq 0 ] || exit 1
[ "$build_failed" -eq 0 ]
