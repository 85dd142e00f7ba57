#!/usr/bin/env bash
# Provision a real Docker engine and the local `python:3.11-slim` base image that envkit's
# templates build FROM. Idempotent: every step is skipped when its result already exists.
# No registry is reachable from these machines (../shared/MACHINES.md), so the base image is
# made from Debian with debootstrap and carries this machine's CA bundle so pip/uv inside
# `docker build` can reach PyPI through the TLS-intercepting path.
set -euo pipefail

BASE_TAG="${ENVKIT_BASE_IMAGE:-python:3.11-slim}"
log() { printf '[docker-setup] %s\n' "$*" >&2; }

if ! command -v dockerd >/dev/null 2>&1 || ! command -v debootstrap >/dev/null 2>&1; then
  log "installing docker.io and debootstrap from Debian"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq docker.io debootstrap >/dev/null
fi

if ! docker info >/dev/null 2>&1; then
  log "starting dockerd"
  (nohup dockerd >/tmp/dockerd.log 2>&1 &)
  for _ in $(seq 1 60); do
    docker info >/dev/null 2>&1 && break
    sleep 1
  done
  docker info >/dev/null 2>&1 || { log "dockerd did not come up; see /tmp/dockerd.log"; tail -20 /tmp/dockerd.log >&2; exit 1; }
fi
log "engine: $(docker version --format '{{.Server.Version}}' 2>/dev/null)"

if docker image inspect "$BASE_TAG" >/dev/null 2>&1; then
  log "base image $BASE_TAG present"
  exit 0
fi

# The Debian mirror is this machine's own apt configuration (never a host name written here).
mirror="$(awk '/^URIs:/ {print $2; exit}' /etc/apt/sources.list.d/debian.sources 2>/dev/null || true)"
[ -n "$mirror" ] || mirror="$(awk '$1 == "deb" {print $2; exit}' /etc/apt/sources.list 2>/dev/null || true)"
[ -n "$mirror" ] || { log "no Debian mirror found in apt's sources; cannot debootstrap"; exit 1; }

rootfs="$(mktemp -d /tmp/envkit-rootfs.XXXXXX)"
trap 'rm -rf "$rootfs"' EXIT
log "building $BASE_TAG from Debian bookworm (debootstrap, ~1 min)"
debootstrap --variant=minbase \
  --include=python3,python3-venv,python3-pip,python-is-python3,ca-certificates \
  bookworm "$rootfs" "$mirror" >/tmp/debootstrap.log 2>&1 \
  || { tail -20 /tmp/debootstrap.log >&2; exit 1; }
cp /etc/ssl/certs/ca-certificates.crt "$rootfs/etc/ssl/certs/ca-certificates.crt"
rm -rf "$rootfs"/var/cache/apt/archives/*.deb "$rootfs"/var/lib/apt/lists/*
tar -C "$rootfs" -c . | docker import \
  --change 'ENV PIP_CERT=/etc/ssl/certs/ca-certificates.crt' \
  --change 'ENV SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt' \
  --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
  --change 'CMD ["python3"]' - "$BASE_TAG" >/dev/null
log "base image $BASE_TAG built"
