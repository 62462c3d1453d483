#!/usr/bin/env bash
# Runs the Molecule scenarios (extensions/molecule/*) on this machine: rootful Podman containers booted
# with systemd, the real sglang-router, stand-in SGLang servers (tests/standins).
# Prepares everything it needs on a fresh Debian machine (root): podman + debootstrap, the hugetlb cgroup
# mount crun needs, container ulimits, the locally built base and host images (only when missing), a venv with
# Molecule (.venv-molecule), the offline wheelhouse (only when missing).
#   scripts/molecule.sh                 # molecule test for every scenario, in two lanes side by side
#   scripts/molecule.sh pd_mixed        # only the named scenario(s)
#   MOLECULE_CMD=converge scripts/molecule.sh pd_separation   # another molecule command
#   MOLECULE_CMD=rollout scripts/molecule.sh pd_separation    # bench/rollout.py on fresh containers (figures)
#   MOLECULE_CMD=rollout scripts/molecule.sh fleet            # bench/rollout.py --fleet 5,10,20 (SGLANG_ROLLOUT_ARGS)
#   MOLECULE_CMD=stage scripts/molecule.sh weights            # bench/stage_weights.py (SGLANG_STAGE_ARGS): star vs tree
#   scripts/molecule.sh --setup         # only the preparation (packages, images, venv, wheelhouse), no scenario
#   SGLANG_MOLECULE_DEPTH=core scripts/molecule.sh   # the core checks only (below)
#   SGLANG_MOLECULE_DEPTH=ci scripts/molecule.sh     # what CI runs: every check once (scenario_depth below)
# Ends with "N passed, M failed" (scenarios); exits non-zero when one failed.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
CACHE=$ROOT/.cache/molecule
# The base image's tag names what debootstrap puts in it (BASE_PACKAGES): a new package list builds a new image.
BASE_PACKAGES=python3,python3-venv,python3-packaging,systemd,systemd-sysv,dbus,procps,iproute2,curl,ca-certificates,rsync,openssh-server,sudo
IMAGE=${SGLANG_MOLECULE_IMAGE:-localhost/ascend-sglang-systemd:bookworm-$(printf '%s' "$BASE_PACKAGES" | sha256sum | cut -c1-8)}
WHEELHOUSE=$CACHE/wheelhouse
ROUTER_VERSION=0.3.0
CONTAINER_PYTHON=3.11            # python3 of Debian bookworm, the base image
STANDIN_TORCH=2.8.0+cpu                    # the reference environment's torch and torch_npu (document 002)
STANDIN_TORCH_NPU=2.8.0.post2.dev20251224
STANDIN_TORCH_NPU_OTHER=2.7.1                # a torch_npu for another torch (the stack fault of pd_separation)
VENV=$ROOT/.venv-molecule
log() { printf 'molecule.sh: %s\n' "$*" >&2; }
mkdir -p "$CACHE"

[ "$(id -u)" = 0 ] || { log "must run as root (rootful Podman)"; exit 2; }

# --- host packages -----------------------------------------------------------------------------
if ! command -v podman >/dev/null || ! command -v debootstrap >/dev/null; then
  log "installing podman and debootstrap"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -q >/dev/null
  apt-get install -y -q podman debootstrap >/dev/null
fi

# The real Prometheus the pd_mixed scenario runs in its router container (Debian's package, copied in).
./tests/validation/setup_promtool.sh

# --- cgroups / ulimits (crun refuses the hybrid layout without the hugetlb v1 hierarchy) -------------
if [ -d /sys/fs/cgroup ] && ! grep -q ' /sys/fs/cgroup cgroup2 ' /proc/mounts; then
  mkdir -p /sys/fs/cgroup/hugetlb 2>/dev/null || true
  mountpoint -q /sys/fs/cgroup/hugetlb || mount -t cgroup -o hugetlb cgroup /sys/fs/cgroup/hugetlb || true
fi
mkdir -p /etc/containers
if ! grep -qs '^default_ulimits' /etc/containers/containers.conf; then
  log "writing default_ulimits into /etc/containers/containers.conf"
  if grep -qs '^\[containers\]' /etc/containers/containers.conf; then
    sed -i '/^\[containers\]/a default_ulimits = ["nofile=4096:4096", "nproc=4096:4096"]' /etc/containers/containers.conf
  else
    printf '[containers]\ndefault_ulimits = ["nofile=4096:4096", "nproc=4096:4096"]\n' >> /etc/containers/containers.conf
  fi
fi

# --- base image: Debian bookworm with systemd as PID 1 (built once, cached in podman's store) --------
if ! podman image exists "$IMAGE"; then
  log "building $IMAGE with debootstrap (about a minute)"
  rootfs=$(mktemp -d "$CACHE/rootfs.XXXXXX")
  debootstrap --variant=minbase \
    --include="$BASE_PACKAGES" \
    bookworm "$rootfs" http://deb.debian.org/debian >"$CACHE/debootstrap.log" 2>&1 \
    || { tail -n 30 "$CACHE/debootstrap.log" >&2; rm -rf "$rootfs"; exit 1; }
  for u in getty@tty1.service console-getty.service serial-getty@.service systemd-remount-fs.service \
           sys-kernel-config.mount sys-kernel-debug.mount sys-kernel-tracing.mount dev-hugepages.mount \
           systemd-firstboot.service systemd-udevd.service systemd-modules-load.service; do
    ln -sf /dev/null "$rootfs/etc/systemd/system/$u"
  done
  : > "$rootfs/etc/machine-id"
  rm -rf "$rootfs"/var/cache/apt/archives/*.deb "$rootfs"/var/lib/apt/lists/*
  tar -C "$rootfs" -c . | podman import --change 'CMD ["/sbin/init"]' --change 'STOPSIGNAL SIGRTMIN+3' - "$IMAGE" >/dev/null
  rm -rf "$rootfs"
fi

# --- Python: ansible-core + Molecule in their own venv --------------------------------------------
pick_python() {
  local c
  if command -v pyenv >/dev/null 2>&1; then
    for c in "$(pyenv root)"/versions/3.1[2-9]*/bin/python3; do [ -x "$c" ] && { echo "$c"; return; }; done
  fi
  for c in python3.13 python3.12; do command -v "$c" >/dev/null 2>&1 && { command -v "$c"; return; }; done
  log "no Python >= 3.12 found (ansible-core 2.21 needs it)"; exit 2
}
PINS="ansible-core==2.21.5 ansible==14.5.0 molecule==26.10.0 molecule-plugins[podman]==26.10.12 ansible-compat==26.10.0"
# shellcheck source=/dev/null  # scripts/pinned_venv.sh
. "$ROOT/scripts/pinned_venv.sh"
if [ -x "$VENV/bin/python" ]; then python=$VENV/bin/python; else python=$(pick_python); fi
pinned_venv "$VENV" "$PINS" "$python" || exit 2

# --- offline wheelhouse: the real sglang-router (downloaded once) + the stand-in sglang wheel ---------
# Two wheelhouses, so that each host gets only what it installs: router/ (sglang-router and its
# dependencies) and server/ (the stand-in sglang wheel, rebuilt from tests/standins every run).
mkdir -p "$WHEELHOUSE/router" "$WHEELHOUSE/server"
if ! ls "$WHEELHOUSE"/router/sglang_router-"$ROUTER_VERSION"-*.whl >/dev/null 2>&1; then
  log "downloading sglang-router==$ROUTER_VERSION and its dependencies for Python $CONTAINER_PYTHON"
  "$VENV/bin/pip" download --quiet --disable-pip-version-check --dest "$WHEELHOUSE/router" \
    --only-binary=:all: --python-version "$CONTAINER_PYTHON" --implementation cp \
    --abi "cp${CONTAINER_PYTHON/./}" --abi abi3 --abi none \
    "sglang-router==$ROUTER_VERSION" >"$CACHE/pip-download.log" 2>&1 \
    || { grep -v '^WARNING: Location' "$CACHE/pip-download.log" >&2; exit 1; }
fi
# The benchmark client bench.yml runs on the router host: the real sglang.bench_serving of the reference
# release (the sglang wheel without its server dependencies: the client needs none of them) and the modules
# it imports. bench/ goes into the hosts' image (below), never through the roles.
BENCH_RELEASE=$("$VENV/bin/python" -c 'import sys, yaml; print(yaml.safe_load(open(sys.argv[1]))["sglang"]["reference"])' profiles/_releases.yml)
BENCH_DEPS="aiohttp numpy pybase64 requests datasets pillow tqdm transformers==4.57.1 IPython pydantic"
mkdir -p "$WHEELHOUSE/bench"
if ! ls "$WHEELHOUSE"/bench/sglang-"$BENCH_RELEASE"-*.whl >/dev/null 2>&1; then
  log "downloading the benchmark client (sglang==$BENCH_RELEASE without dependencies, $BENCH_DEPS)"
  # shellcheck disable=SC2086
  if ! { "$VENV/bin/pip" download --quiet --disable-pip-version-check --dest "$WHEELHOUSE/bench" \
           --only-binary=:all: --python-version "$CONTAINER_PYTHON" --implementation cp \
           --abi "cp${CONTAINER_PYTHON/./}" --abi abi3 --abi none $BENCH_DEPS >"$CACHE/pip-download-bench.log" 2>&1 \
         && "$VENV/bin/pip" download --quiet --disable-pip-version-check --dest "$WHEELHOUSE/bench" --no-deps \
           --only-binary=:all: "sglang==$BENCH_RELEASE" >>"$CACHE/pip-download-bench.log" 2>&1; }; then
    grep -v '^WARNING: Location' "$CACHE/pip-download-bench.log" >&2; rm -f "$WHEELHOUSE"/bench/sglang-*.whl; exit 1
  fi
fi
export SGLANG_MOLECULE_BENCH_RELEASE=$BENCH_RELEASE

# --- the Ascend-shaped host image of every scenario (built only when what goes into it changed) ----------------
# The base image plus what every host shares (tests/standins/host/Containerfile): the stand-in npu-smi, hccn_tool
# and CANN scripts, the model directories, the benchmark client. Its tag is the digest of what goes into it.
# image_digest FROM FILE...: 12 hex digits over the id of the image FROM, the bench release and the files named.
image_digest() {
  local from=$1; shift
  { podman image inspect --format '{{.Id}}' "$from"; echo "$BENCH_RELEASE"
    find "$@" -type f -print0 | sort -z | xargs -0 sha256sum; } | sha256sum | cut -c1-12
}
# build_image TAG CONTAINERFILE CONTEXT BUILD-OPTION...: podman build into TAG, its log under the cache.
build_image() {
  local tag=$1 file=$2 ctx=$3; shift 3
  log "building $tag"
  if ! podman build --quiet -f "$file" -t "$tag" "$@" "$ctx" >"$CACHE/image-build.log" 2>&1; then
    tail -n 30 "$CACHE/image-build.log" >&2; rm -rf "$ctx"; exit 1
  fi
}
HOST_IMAGE=localhost/ascend-sglang-host:$(image_digest "$IMAGE" tests/standins/host/Containerfile tests/standins/ascend \
                                           tests/standins/tokenizer "$WHEELHOUSE/bench")
if ! podman image exists "$HOST_IMAGE"; then
  ctx=$(mktemp -d "$CACHE/host.XXXXXX")
  cp -r tests/standins/ascend tests/standins/tokenizer "$ctx/"
  cp -r "$WHEELHOUSE/bench" "$ctx/bench-wheels"
  build_image "$HOST_IMAGE" tests/standins/host/Containerfile "$ctx" --network none \
    --build-arg "BASE=$IMAGE" --build-arg "BENCH_RELEASE=$BENCH_RELEASE"
  rm -rf "$ctx"
fi
# The container_runtime scenario's hosts: the host image with a real engine from Debian (Containerfile.engine).
engine_image() {
  local ctx
  ENGINE_IMAGE=localhost/ascend-sglang-engine:$(image_digest "$HOST_IMAGE" tests/standins/host/Containerfile.engine)
  export SGLANG_MOLECULE_ENGINE_IMAGE=$ENGINE_IMAGE
  if ! podman image exists "$ENGINE_IMAGE"; then
    ctx=$(mktemp -d "$CACHE/engine.XXXXXX")
    build_image "$ENGINE_IMAGE" tests/standins/host/Containerfile.engine "$ctx" --build-arg "BASE=$HOST_IMAGE"
    rm -rf "$ctx"
  fi
}
# One stand-in wheel per SGLang release a profile can target, versioned <release>+standin: preflight
# checks the release each server's interpreter imports (a local build of a release counts as it).
for release in $("$VENV/bin/python" -c 'import sys, yaml; print(" ".join(yaml.safe_load(open(sys.argv[1]))["sglang"]["releases"]))' profiles/_releases.yml); do
  "$VENV/bin/python" tests/standins/build_wheel.py "$WHEELHOUSE/server" "$release+standin" >/dev/null
done
# The stand-in torch / torch_npu at the reference environment's versions (profiles/_releases.yml stacks): the
# stack probe of preflight and doctor imports them with the server's interpreter.
"$VENV/bin/python" tests/standins/build_wheel.py "$WHEELHOUSE/server" "$STANDIN_TORCH" torch >/dev/null
"$VENV/bin/python" tests/standins/build_wheel.py "$WHEELHOUSE/server" "$STANDIN_TORCH_NPU" torch_npu >/dev/null
# A torch_npu built for another torch, which a bad wheelhouse could hold: the deployment must stop on it.
"$VENV/bin/python" tests/standins/build_wheel.py "$WHEELHOUSE/server" "$STANDIN_TORCH_NPU_OTHER" torch_npu >/dev/null

# --- the stand-in SGLang image of the container_runtime scenario (built only when missing) ----------------
# From the base image above, offline, with the wheels of the wheelhouse (tests/standins/image/Containerfile).
# Its tag is the digest of what goes into it, so a changed stand-in makes a new image. Two tags of the one image
# and a "podman save" tarball of each: the hosts load the image with the collection's air-gapped path
# (sglang_container_image_archive), and the second tag is the scenario's "changed image".
standin_image() {
  local digest ctx tag STANDIN_SGLANG=$BENCH_RELEASE+standin   # the reference release (profiles/_releases.yml)
  digest=$( { cat tests/standins/image/Containerfile
              echo "$IMAGE $STANDIN_SGLANG $ROUTER_VERSION $STANDIN_TORCH $STANDIN_TORCH_NPU"
              find tests/standins/sglang tests/standins/torch tests/standins/torch_npu tests/standins/ascend \
                -type f -print0 | sort -z | xargs -0 sha256sum; } | sha256sum | cut -c1-12)
  tag=localhost/sglang-standin:$digest
  mkdir -p "$CACHE/images"
  if ! podman image exists "$tag"; then
    log "building the stand-in SGLang image $tag"
    ctx=$(mktemp -d "$CACHE/image.XXXXXX")
    mkdir -p "$ctx/wheels"
    cp -r "$WHEELHOUSE/server" "$WHEELHOUSE/router" "$ctx/wheels/"
    cp -r tests/standins/ascend/usr/local/Ascend "$ctx/cann"
    rm -rf "$ctx/cann/driver"   # the driver is the host's, mounted by the plan
    if ! podman build --quiet --squash --network none -f tests/standins/image/Containerfile -t "$tag" \
           --build-arg "BASE=$IMAGE" --build-arg "SGLANG_VERSION=$STANDIN_SGLANG" \
           --build-arg "ROUTER_VERSION=$ROUTER_VERSION" --build-arg "TORCH_VERSION=$STANDIN_TORCH" \
           --build-arg "TORCH_NPU_VERSION=$STANDIN_TORCH_NPU" "$ctx" >"$CACHE/image-build.log" 2>&1; then
      tail -n 30 "$CACHE/image-build.log" >&2; rm -rf "$ctx"; exit 1
    fi
    rm -rf "$ctx"
  fi
  podman tag "$tag" "$tag-second"
  for t in "$tag" "$tag-second"; do
    if [ ! -s "$CACHE/images/${t##*:}.tar" ]; then
      rm -f "$CACHE/images/"*.tar   # tarballs of an older stand-in
      break
    fi
  done
  for t in "$tag" "$tag-second"; do
    [ -s "$CACHE/images/${t##*:}.tar" ] || podman save --format docker-archive -o "$CACHE/images/${t##*:}.tar" "$t"
  done
  export SGLANG_MOLECULE_STANDIN_IMAGE=$tag SGLANG_MOLECULE_STANDIN_ARCHIVE=$CACHE/images/$digest.tar
  export SGLANG_MOLECULE_STANDIN_IMAGE_SECOND=$tag-second
  export SGLANG_MOLECULE_STANDIN_ARCHIVE_SECOND=$CACHE/images/$digest-second.tar
}

# --- the collection under test: this checkout, built and installed as users install it ----------------
# The scenarios run the operator's playbooks by FQCN (ansible-playbook ascend.sglang.<playbook>, from a directory
# outside the checkout) against this build, not against the checkout (.collections links the whole tree):
# only what the tarball ships (galaxy.yml build_ignore) is there, laid out as ansible-galaxy installs it, so
# a playbook or role that needs a file the build leaves out fails here. A fresh build each run, in a
# collections path of this run only (no user-wide path that other checkouts share). The install looks at that
# path alone (--force): the checkout's ansible.cfg names .collections, where it would find the checkout and
# install nothing.
COLLECTIONS=$(mktemp -d -t sglang-molecule-collections.XXXXXX)
trap 'rm -rf "$COLLECTIONS"' EXIT
log "building and installing ascend.sglang from this checkout"
if ! { "$VENV/bin/ansible-galaxy" collection build --output-path "$COLLECTIONS" "$ROOT" \
       && ANSIBLE_COLLECTIONS_PATH=$COLLECTIONS "$VENV/bin/ansible-galaxy" collection install --offline --force \
            -p "$COLLECTIONS" "$COLLECTIONS"/ascend-sglang-*.tar.gz; } \
     >"$COLLECTIONS/build.log" 2>&1; then
  cat "$COLLECTIONS/build.log" >&2; exit 1
fi
ANSIBLE_COLLECTIONS_PATH="$COLLECTIONS:$(echo "$VENV"/lib/python3*/site-packages)"
export ANSIBLE_COLLECTIONS_PATH SGLANG_MOLECULE_COLLECTION=$COLLECTIONS/ansible_collections/ascend/sglang
export PATH="$VENV/bin:$PATH"
export SGLANG_MOLECULE_WHEELHOUSE=$WHEELHOUSE SGLANG_MOLECULE_IMAGE=$IMAGE SGLANG_MOLECULE_ROOT=$ROOT
export SGLANG_MOLECULE_HOST_IMAGE=$HOST_IMAGE
export SGLANG_MOLECULE_TORCH=$STANDIN_TORCH SGLANG_MOLECULE_TORCH_NPU=$STANDIN_TORCH_NPU
export SGLANG_MOLECULE_TORCH_NPU_OTHER=$STANDIN_TORCH_NPU_OTHER
export ANSIBLE_PIPELINING=True ANSIBLE_FORCE_COLOR=0 PY_COLORS=0 ANSIBLE_NOCOLOR=1
# The operator commands of the scenarios reached over ssh (shared/prepare.yml): one ssh connection per host kept open
# between tasks and between the commands of a run (ControlPersist), each module sent down it (pipelining, above).
export ANSIBLE_SSH_ARGS='-o ControlMaster=auto -o ControlPersist=60s'
# The time ssh and sudo get to answer (default 10 s): the hosts share the controller's cores with the scenarios'
# servers and request loops, and a sudo that had not answered within 12 s once failed retire.yml under that load.
export ANSIBLE_TIMEOUT=30

# --- run -----------------------------------------------------------------------------------------
cmd=${MOLECULE_CMD:-test}
# The depth of "test": full (every scenario, Molecule's whole test sequence, every check of verify.yml) or core:
# the two systemd scenarios converged once and checked up to the core end of their verify.yml (every service
# runs render mode's argv and environment, requests through the real router reach the planned instances), no
# idempotence step, no container_runtime. A full run deploys each layout about twenty times.
# ci (what CI runs): every check of the full depth once, each scenario at the depth scenario_depth gives it, so
# that the run fits beside the tests in CI's hour.
depth=${SGLANG_MOLECULE_DEPTH:-full}
case $depth in full | core | ci) ;; *) log "SGLANG_MOLECULE_DEPTH must be full, core or ci, not '$depth'"; exit 2 ;; esac
# scenario_depth S: the depth S runs at in this run.
scenario_depth() {
  if [ "$depth" != ci ]; then echo "$depth"; return; fi
  # pd_mixed and container_runtime at full depth; pd_separation at its ci depth, its full checks less those the
  # two others make as well (a decode-only change, dead and hung ranks of a 2-node instance, a never-healthy
  # server; its verify.yml lists them): no check of the full depth is left out, and each runs once. Its full
  # depth would take about 40 min of the two-core machine, more than CI's time once the tests have run.
  case $1 in pd_separation) echo ci ;; *) echo full ;; esac
}
scenarios=("$@")
if [ "${scenarios[0]:-}" = --setup ]; then
  # Everything above and, where container_runtime runs, its images; no scenario: .ci/run prepares this beside
  # the tests.
  cmd=setup scenarios=()
  [ "$depth" = core ] || scenarios=(container_runtime)
elif [ ${#scenarios[@]} -eq 0 ] && [ "$depth" = core ]; then
  scenarios=(pd_separation pd_mixed)
elif [ ${#scenarios[@]} -eq 0 ]; then
  scenarios=(pd_separation pd_mixed container_runtime)
fi
case " ${scenarios[*]} " in *" container_runtime "*) standin_image; engine_image ;; esac
if [ "$cmd" = setup ]; then
  log "ready: the images, the wheelhouse and the Molecule venv"
  exit 0
fi
# run_scenario S: one scenario; "passed S" or "failed S" into $LANE_LOGS/results. Its output goes to the terminal,
# or, when lanes run side by side (LANES_SIDE_BY_SIDE=1), into $LANE_LOGS/S.log, printed whole when it ends (one
# scenario's output at a time, under a lock).
run_scenario() {
  local s=$1 start=$SECONDS rc=0 names out='' ok_word=passed failed_word=FAILED
  [ "$cmd" != rollout ] || { ok_word="rollout figures"; failed_word="rollout FAILED"; }
  [ "$cmd" != stage ] || { ok_word="staging figures"; failed_word="staging FAILED"; }
  [ "${LANES_SIDE_BY_SIDE:-0}" = 0 ] || { out=$LANE_LOGS/$1.log; : >"$out"; }
  # to_out CMD...: CMD's output (stdout and stderr) where this scenario's goes.
  to_out() { if [ -n "$out" ]; then "$@" >>"$out" 2>&1; else "$@"; fi; }
  if { [ "$cmd" = test ] || [ "$cmd" = rollout ]; } && [ -f "extensions/molecule/$s/molecule.yml" ]; then
    # Leftovers of an interrupted run (same container names) would make create fail. Only this scenario's
    # containers are removed: the other lane's keep running.
    names=$("$VENV/bin/python" -c 'import sys, yaml; print(" ".join(p["name"] for p in yaml.safe_load(open(sys.argv[1]))["platforms"]))' \
            "extensions/molecule/$s/molecule.yml")
    # shellcheck disable=SC2086
    podman rm -f -t0 --ignore $names >/dev/null
  fi
  # The depth verify.yml reads (shared/vars/locations.yml: molecule_depth).
  local s_depth
  s_depth=$(scenario_depth "$s")
  export SGLANG_MOLECULE_DEPTH=$s_depth
  if [ "$cmd" = test ]; then log "scenario $s: molecule test ($s_depth depth)"; else log "scenario $s: molecule $cmd"; fi
  if [ "$cmd" = stage ]; then
    # Containers made and removed by bench/stage_weights.py itself (no Molecule scenario).
    if [ "$s" = weights ]; then
      # shellcheck disable=SC2086  # options of bench/stage_weights.py, e.g. "--hosts 4,8"
      to_out "$VENV/bin/python" bench/stage_weights.py ${SGLANG_STAGE_ARGS:-} || rc=$?
    else
      log "stage: bench/stage_weights.py runs as the scenario name weights only"; rc=2
    fi
  elif [ "$cmd" = rollout ]; then
    # Fresh containers (create runs prepare), the rollout figures, then the containers go.
    if [ "$s" = fleet ]; then
      # Fleets of several sizes, made and removed by bench/rollout.py itself (no Molecule scenario).
      # shellcheck disable=SC2086
      to_out "$VENV/bin/python" bench/rollout.py ${SGLANG_ROLLOUT_ARGS:---fleet 5,10,20} || rc=$?
    elif [ "$s" != pd_separation ]; then
      log "rollout: bench/rollout.py measures the pd_separation layout and fleets (fleet) only"; rc=2
    else
      # The scenario's hosts are reached over ssh: bench/rollout.py adds the connection piece prepare writes into the
      # run's directory, which it finds where Molecule is told to keep it.
      export MOLECULE_EPHEMERAL_DIRECTORY=$CACHE/rollout-$s
      if to_out molecule create -s "$s"; then
        # shellcheck disable=SC2086  # options of bench/rollout.py, e.g. "--delay 30"
        to_out "$VENV/bin/python" bench/rollout.py ${SGLANG_ROLLOUT_ARGS:-} || rc=$?
      else
        rc=1
      fi
      molecule destroy -s "$s" >/dev/null 2>&1 || true
      unset MOLECULE_EPHEMERAL_DIRECTORY
    fi
  elif [ "$cmd" = test ] && [ "$s_depth" != full ]; then
    # The test sequence without idempotence (at ci depth the two other scenarios have that step): destroy first, as it does (it also resets Molecule's state, which a
    # killed run leaves saying the instances exist, and which converge would trust), then converge (create,
    # prepare, converge), verify, and destroy whatever happened.
    { to_out molecule destroy -s "$s" && to_out molecule converge -s "$s" && to_out molecule verify -s "$s"; } \
      || rc=$?
    to_out molecule destroy -s "$s" || true
  else
    to_out molecule "$cmd" -s "$s" || rc=$?
  fi
  {
    flock 9
    [ -z "$out" ] || cat "$out"
    if [ "$rc" -eq 0 ]; then
      log "scenario $s: $ok_word in $((SECONDS - start)) s"; echo "passed $s" >>"$LANE_LOGS/results"
    else
      log "scenario $s: $failed_word after $((SECONDS - start)) s"; echo "failed $s" >>"$LANE_LOGS/results"
    fi
  } 9>"$LANE_LOGS/print.lock"
}
# run_lane S...: the scenarios named, one after another, those of this run only (core depth has no container_runtime).
run_lane() {
  local s
  for s in "$@"; do
    case " ${scenarios[*]} " in *" $s "*) run_scenario "$s" ;; esac
  done
}

# The whole suite runs in two lanes side by side: pd_separation, and pd_mixed then container_runtime (at ci depth:
# pd_separation then container_runtime, and pd_mixed). A scenario
# waits on its services for a good part of its time (health gates, watchdog restarts, request loops), which the
# other lane fills; each scenario has container names and a network of its own
# (tests/integration/test_molecule_layout.py), so the lanes share nothing but the images and the collection.
# SGLANG_MOLECULE_LANES=1 runs them one after another; named scenarios always run one after another.
LANE_LOGS=$(mktemp -d -t sglang-molecule-logs.XXXXXX)
trap 'rm -rf "$COLLECTIONS" "$LANE_LOGS"' EXIT
: >"$LANE_LOGS/results"
if [ $# -eq 0 ] && [ "$cmd" = test ] && [ "${SGLANG_MOLECULE_LANES:-2}" != 1 ]; then
  LANES_SIDE_BY_SIDE=1
  if [ "$depth" = ci ]; then
    # pd_mixed at full depth takes about as long as the two others together.
    run_lane pd_separation container_runtime &
    lane1=$!
    run_lane pd_mixed
  else
    run_lane pd_separation &
    lane1=$!
    run_lane pd_mixed container_runtime
  fi
  wait "$lane1" || true
else
  run_lane "${scenarios[@]}"
fi
passed=$(grep -c '^passed ' "$LANE_LOGS/results" || true)
failed=$(grep -c '^failed ' "$LANE_LOGS/results" || true)
[ "$failed" -eq 0 ] || log "failed: $(sed -n 's/^failed //p' "$LANE_LOGS/results" | tr '\n' ' ')"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
