#!/usr/bin/env bash
# Provision the headless browser that `envkit label`'s page tests drive (tests/label/
# test_browser.py): Debian's chromium and chromium-driver, used through Selenium with
# /usr/bin/chromedriver. No browser download: only Debian's packages are reachable.
# Idempotent: nothing is installed when both binaries are already there.
set -euo pipefail

log() { printf '[browser-setup] %s\n' "$*" >&2; }

if command -v chromium >/dev/null 2>&1 && command -v chromedriver >/dev/null 2>&1; then
  log "present: $(chromium --version 2>/dev/null | head -1)"
  exit 0
fi
if [ "$(id -u)" -ne 0 ] && ! command -v sudo >/dev/null 2>&1; then
  log "chromium/chromium-driver missing and not root: install them with apt-get (Debian)"
  exit 1
fi
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
log "installing chromium and chromium-driver from Debian"
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq chromium chromium-driver >/dev/null
log "installed: $(chromium --version 2>/dev/null | head -1)"
