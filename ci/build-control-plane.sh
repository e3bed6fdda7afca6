#!/usr/bin/env bash
# Build the control-plane binaries npu-emu's cluster harness runs, from Go
# modules only (no Docker, no release downloads):
#
#   etcd, kube-apiserver, kube-controller-manager, kwok, kwokctl,
#   vc-scheduler, vc-controller-manager   (and kubectl, optional)
#
# into a per-version cache directory outside the repository, skipping binaries
# that are already there. Prints the directory on the last line of stdout.
#
#   ci/build-control-plane.sh            # build what is missing
#   ci/build-control-plane.sh --print-dir   # only print the target directory
#   ci/build-control-plane.sh --force    # rebuild everything
#   ci/build-control-plane.sh --only=etcd,kwok   # groups: etcd kwok kubernetes volcano
#
# Environment:
#   NPU_EMU_BIN_DIR   target directory (default ~/.cache/npu-emu/bin/<version-set>)
#   GO                go command (default: go on PATH, else /usr/local/go/bin/go)
#   NPU_EMU_BUILD_P   value for go build -p (default: number of CPUs)
#   NPU_EMU_BUILD_KUBECTL  0 = skip kubectl (default 1)
#   NPU_EMU_BUILD_JOBS  1 = build the groups one after another; 2 (default) =
#                     Kubernetes in parallel with the others
#
# See docs/control-plane.md for the recipe and the measured build times.
set -euo pipefail

K8S_VERSION=v1.35.3
ETCD_VERSION=v3.6.10
KWOK_VERSION=v0.8.0
VOLCANO_VERSION=v1.15.1
VERSION_SET="k8s-${K8S_VERSION}_etcd-${ETCD_VERSION}_kwok-${KWOK_VERSION}_volcano-${VOLCANO_VERSION}"

CI_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
BIN_DIR=${NPU_EMU_BIN_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/npu-emu/bin/${VERSION_SET}}

FORCE=0
ONLY=""
for arg in "$@"; do
  case $arg in
    --only=*) ONLY=",${arg#--only=}," ;;
    --print-dir) echo "$BIN_DIR"; exit 0 ;;
    --force) FORCE=1 ;;
    -h|--help) sed -n '2,20p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "build-control-plane: unknown argument: $arg" >&2; exit 2 ;;
  esac
done

if [[ -z ${GO:-} ]]; then
  if command -v go >/dev/null 2>&1; then GO=go
  elif [[ -x /usr/local/go/bin/go ]]; then GO=/usr/local/go/bin/go
  else echo "build-control-plane: no Go toolchain found (need Go >= 1.26; set GO=...)" >&2; exit 1
  fi
fi
P=${NPU_EMU_BUILD_P:-$(nproc 2>/dev/null || echo 2)}
JOBS=${NPU_EMU_BUILD_JOBS:-2}
LOG_DIR="$BIN_DIR/.logs"
mkdir -p "$BIN_DIR" "$LOG_DIR"
export CGO_ENABLED=0
# Never let a developer's GOFLAGS (e.g. -mod=vendor) change what is built.
export GOFLAGS=-buildvcs=false
TIMES_FILE="$BIN_DIR/.build-times"

log() { printf '[build-control-plane %s] %s\n' "$(date -u +%H:%M:%S)" "$*"; }

# have NAME... -> success when every named binary exists and is executable
have() {
  [[ $FORCE == 1 ]] && return 1
  local b
  for b in "$@"; do [[ -x "$BIN_DIR/$b" ]] || return 1; done
}

FAIL_FILE=$(mktemp)
trap 'rm -f "$FAIL_FILE"' EXIT
# build LABEL "BIN1 BIN2" command... : run the command (which writes into
# $STAGE), move the produced binaries into $BIN_DIR atomically, time it.
build() {
  local label=$1 bins=$2; shift 2
  if [[ -n $ONLY && $ONLY != *",$label,"* && ( $label != kube* || $ONLY != *",kubernetes,"* ) ]]; then
    log "$label: not selected (--only), skipping"; return 0
  fi
  # shellcheck disable=SC2086
  if have $bins; then log "$label: already built, skipping"; return 0; fi
  STAGE=$(mktemp -d "$BIN_DIR/.stage.XXXXXX")
  local logf="$LOG_DIR/$label.log" start end rc=0
  log "$label: building ($bins) ... log: $logf"
  start=$(date +%s)
  "$@" >"$logf" 2>&1 || rc=$?
  end=$(date +%s)
  if [[ $rc != 0 ]]; then
    log "$label: FAILED after $((end - start))s (exit $rc). Last lines of $logf:"
    tail -n 25 "$logf" | sed 's/^/    /'
    echo "$label" >>"$FAIL_FILE"
    rm -rf "$STAGE"
    return 0
  fi
  local b
  for b in $bins; do
    if [[ ! -x "$STAGE/$b" ]]; then
      log "$label: FAILED: the build did not produce $b (see $logf)"
      echo "$label" >>"$FAIL_FILE"; rm -rf "$STAGE"; return 0
    fi
  done
  for b in $bins; do mv -f "$STAGE/$b" "$BIN_DIR/$b"; done
  rm -rf "$STAGE"
  log "$label: done in $((end - start))s"
  printf '%s\t%s\t%ss\n' "$(date -u +%FT%TZ)" "$label" "$((end - start))" >>"$TIMES_FILE"
}

# ---- recipes --------------------------------------------------------------

build_etcd() {
  cd "$CI_DIR/etcd" || return 1
  "$GO" build -p "$P" -trimpath -ldflags "-s -w" -o "$STAGE/etcd" go.etcd.io/etcd/server/v3
}

K8S_MINOR=${K8S_VERSION#v1.}; K8S_MINOR=${K8S_MINOR%%.*}
K8S_LDFLAGS="-s -w \
 -X k8s.io/component-base/version.gitVersion=${K8S_VERSION} \
 -X k8s.io/component-base/version.gitMajor=1 \
 -X k8s.io/component-base/version.gitMinor=${K8S_MINOR} \
 -X k8s.io/component-base/version.gitTreeState=clean \
 -X k8s.io/client-go/pkg/version.gitVersion=${K8S_VERSION} \
 -X k8s.io/client-go/pkg/version.gitMajor=1 \
 -X k8s.io/client-go/pkg/version.gitMinor=${K8S_MINOR} \
 -X k8s.io/client-go/pkg/version.gitTreeState=clean"

build_k8s() {
  cd "$CI_DIR/k8s" || return 1
  # One invocation for both: the shared packages compile once and the two
  # links run in parallel.
  "$GO" build -p "$P" -trimpath -ldflags "$K8S_LDFLAGS" -o "$STAGE/" "$@"
}

build_kwok() {
  # kwok's go.mod has no replace directives, so plain `go install` works.
  GOBIN="$STAGE" "$GO" install -p "$P" -trimpath -ldflags "-s -w \
    -X sigs.k8s.io/kwok/pkg/consts.Version=${KWOK_VERSION} \
    -X sigs.k8s.io/kwok/pkg/consts.KubeVersion=${K8S_VERSION}" \
    "sigs.k8s.io/kwok/cmd/kwok@${KWOK_VERSION}" "sigs.k8s.io/kwok/cmd/kwokctl@${KWOK_VERSION}"
}

build_volcano() {
  cd "$CI_DIR/volcano" || return 1
  # volcano.sh/apis v1.15.x is not on the module proxy. Build against a copy of
  # the (checksum-verified) v1.14.0 module plus the one constant v1.15.1 needs,
  # through a generated -modfile, so the committed go.mod/go.sum stay untouched.
  # (go build -overlay may not replace files under GOMODCACHE.)
  local apis src
  "$GO" mod download volcano.sh/apis || return 1
  apis=$("$GO" list -m -f '{{.Dir}}' volcano.sh/apis) || return 1
  [[ -f $apis/go.mod ]] || { echo "volcano.sh/apis not found in the module cache"; return 1; }
  src="$STAGE/volcano.sh-apis"
  cp -r "$apis" "$src" && chmod -R u+w "$src" || return 1
  cp "$CI_DIR/volcano/compat/queue_allocation_gate.go.in" \
     "$src/pkg/apis/scheduling/v1beta1/zz_npu_emu_compat.go" || return 1
  sed "s#^\([[:space:]]*volcano.sh/apis =>\).*#\1 $src#" go.mod >"$STAGE/go.mod" || return 1
  grep -q "volcano.sh/apis => $src" "$STAGE/go.mod" || { echo "could not rewrite the volcano.sh/apis replace"; return 1; }
  cp go.sum "$STAGE/go.sum" || return 1
  local ld="-s -w -X volcano.sh/volcano/pkg/version.Version=${VOLCANO_VERSION} \
    -X volcano.sh/volcano/pkg/version.GitSHA=${VOLCANO_VERSION} \
    -X volcano.sh/volcano/pkg/version.Built=module-build"
  "$GO" build -modfile "$STAGE/go.mod" -p "$P" -trimpath -ldflags "$ld" \
    -o "$STAGE/vc-scheduler" volcano.sh/volcano/cmd/scheduler || return 1
  "$GO" build -modfile "$STAGE/go.mod" -p "$P" -trimpath -ldflags "$ld" \
    -o "$STAGE/vc-controller-manager" volcano.sh/volcano/cmd/controller-manager
}

# ---- run ------------------------------------------------------------------

lane_kubernetes() {
  lane_kubernetes_core
  # kubectl is optional (nothing in npu-emu needs it) and cheap once the packages above are cached.
  if [[ ${NPU_EMU_BUILD_KUBECTL:-1} == 1 ]]; then
    build kubectl "kubectl" build_k8s k8s.io/kubernetes/cmd/kubectl
  fi
}
lane_kubernetes_core() {
  if have kube-apiserver && ! have kube-controller-manager; then
    build kube-controller-manager "kube-controller-manager" build_k8s k8s.io/kubernetes/cmd/kube-controller-manager
  elif ! have kube-apiserver && have kube-controller-manager; then
    build kube-apiserver "kube-apiserver" build_k8s k8s.io/kubernetes/cmd/kube-apiserver
  else
    build kubernetes "kube-apiserver kube-controller-manager" build_k8s \
      k8s.io/kubernetes/cmd/kube-apiserver k8s.io/kubernetes/cmd/kube-controller-manager
  fi
}
lane_others() {
  # Cheapest first, so a broken toolchain or proxy shows up within a minute.
  build etcd "etcd" build_etcd
  build kwok "kwok kwokctl" build_kwok
  build volcano "vc-scheduler vc-controller-manager" build_volcano
}

T0=$(date +%s)
log "target: $BIN_DIR ($("$GO" version), -p $P, jobs $JOBS, CGO_ENABLED=0)"
if [[ $JOBS -gt 1 ]]; then
  # Two lanes: Kubernetes (the long pole) next to etcd, kwok and Volcano. Go already compiles
  # packages in parallel, but module downloads and the single-threaded links leave cores idle.
  lane_kubernetes & k8s_pid=$!
  lane_others
  wait "$k8s_pid" || true
else
  lane_others
  lane_kubernetes
fi

# The Volcano CRDs ship in the volcano.sh/volcano module zip; keep a copy next
# to the binaries so the harness never depends on the module cache at run time.
crds() {
  local dir
  if [[ -n $ONLY && $ONLY != *",volcano,"* ]]; then return 0; fi
  if [[ $FORCE != 1 && -f "$BIN_DIR/crds/volcano/.complete" ]]; then return 0; fi
  dir=$(cd "$CI_DIR/volcano" && "$GO" mod download -json "volcano.sh/volcano@${VOLCANO_VERSION}" \
        | sed -n 's/^\t"Dir": "\(.*\)",$/\1/p') || true
  if [[ -z $dir || ! -d $dir/config/crd ]]; then
    log "volcano-crds: FAILED: cannot locate volcano.sh/volcano@${VOLCANO_VERSION} in the module cache"
    echo volcano-crds >>"$FAIL_FILE"; return 0
  fi
  rm -rf "$BIN_DIR/crds/volcano" && mkdir -p "$BIN_DIR/crds/volcano"
  cp "$dir"/config/crd/volcano/bases/*.yaml "$dir"/config/crd/jobflow/bases/*.yaml "$BIN_DIR/crds/volcano/"
  chmod u+w "$BIN_DIR"/crds/volcano/*.yaml
  touch "$BIN_DIR/crds/volcano/.complete"
  log "volcano-crds: copied $(ls "$BIN_DIR"/crds/volcano/*.yaml | wc -l) CRDs from $dir/config/crd"
}
crds
T1=$(date +%s)

if [[ -s $FAIL_FILE ]]; then
  log "FAILED components: $(tr '\n' ' ' <"$FAIL_FILE")(total $((T1 - T0))s). Logs in $LOG_DIR" >&2
  exit 1
fi
log "all binaries present in $BIN_DIR (total $((T1 - T0))s)"
echo "$BIN_DIR"
