#!/usr/bin/env bash
# Build a minimal Debian bookworm base image without a registry: debootstrap a
# rootfs, trim it like the official slim image, and `docker import` it.
#
#   containers/base-image.sh [TAG]      (default TAG: hermes-base:bookworm)
#
# Used where no registry is reachable (CI, air-gapped hosts); elsewhere the
# Dockerfile's default base, debian:bookworm-slim pinned by digest, is pulled.
# Idempotent: an existing TAG is kept. Needs root, debootstrap and a running dockerd.
set -euo pipefail

tag="${1:-hermes-base:bookworm}"
mirror="${DEBIAN_MIRROR:-http://deb.debian.org/debian}"

if docker image inspect "$tag" >/dev/null 2>&1; then
  echo "base image $tag already present"
  exit 0
fi

root="$(mktemp -d)"
trap 'rm -rf "$root"' EXIT

echo "debootstrap bookworm (minbase) from $mirror ..."
debootstrap --variant=minbase --include=ca-certificates bookworm "$root" "$mirror" >"$root.log" 2>&1 \
  || { tail -20 "$root.log" >&2; exit 1; }
rm -f "$root.log"

# What the official slim image leaves out: docs, man pages, locales, apt lists and caches.
rm -rf "$root"/usr/share/doc/* "$root"/usr/share/man/* "$root"/usr/share/info/* \
       "$root"/var/lib/apt/lists/* "$root"/var/cache/apt/*.bin "$root"/var/cache/apt/archives/*.deb \
       "$root"/var/log/*.log "$root"/tmp/* 2>/dev/null || true
find "$root"/usr/share/locale -mindepth 1 -maxdepth 1 ! -name 'locale.alias' -exec rm -rf {} + 2>/dev/null || true
cat >"$root/etc/apt/sources.list" <<EOF
deb $mirror bookworm main
deb $mirror bookworm-updates main
deb http://deb.debian.org/debian-security bookworm-security main
EOF

tar -C "$root" --numeric-owner -c . \
  | docker import --change 'CMD ["bash"]' --change 'ENV LANG=C.UTF-8' - "$tag" >/dev/null
echo "base image $tag: $(docker image inspect -f '{{.Size}}' "$tag" | awk '{printf "%.0f MB", $1/1e6}')"
