#!/usr/bin/env bash
# Build the Hermes image from this checkout and print its size and build time.
#
#   containers/build.sh [-t TAG] [--base IMAGE] [--no-cache] [--browser] [-f DOCKERFILE]
#
# --browser adds Debian's chromium for the browser toolset (BROWSER=chromium; about
# doubles the image).
# -f builds another image of the repository with the same arguments (the sandbox's:
# containers/sandbox/build.sh). --no-cache rebuilds every step: Docker 20.10 may still
# answer from its cache, so a build argument that changes each time is passed too.
# Version, revision and SOURCE_DATE_EPOCH come from the checkout (the `created` label
# is that time in RFC 3339). A CA bundle for a TLS-intercepting proxy (HERMES_BUILD_CA,
# else SSL_CERT_FILE, else the system bundle) is passed as a BuildKit secret: it is used
# by the install steps and never stored in a layer. Without a registry, build a base
# first: containers/base-image.sh, then --base hermes-base:bookworm.
set -euo pipefail
cd "$(dirname "$0")/.."

tag=hermes:latest base="" dockerfile=containers/Dockerfile extra=()
while [ $# -gt 0 ]; do
  case "$1" in
    -t|--tag) tag="$2"; shift 2 ;;
    --base) base="$2"; shift 2 ;;
    --no-cache) extra+=(--no-cache --build-arg "CACHE_BUST=$(date +%s%N)"); shift ;;
    --browser) extra+=(--build-arg BROWSER=chromium); shift ;;
    -f|--file) dockerfile="$2"; shift 2 ;;
    -h|--help) sed -n 2,15p "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "error: unknown argument '$1' (see containers/build.sh --help)" >&2; exit 2 ;;
  esac
done

version="$(sed -n 's/^version = "\(.*\)"/\1/p' pyproject.toml | head -1)"
revision="$(git rev-parse HEAD 2>/dev/null || echo unknown)"
epoch="${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct 2>/dev/null || echo 0)}"
created="$(date -u -d "@$epoch" +%Y-%m-%dT%H:%M:%SZ 2>/dev/null \
           || date -u -r "$epoch" +%Y-%m-%dT%H:%M:%SZ)"  # GNU, else BSD date
ca="${HERMES_BUILD_CA:-${SSL_CERT_FILE:-/etc/ssl/certs/ca-certificates.crt}}"
oci=org.opencontainers.image
args=(--build-arg "SOURCE_DATE_EPOCH=$epoch" --label "$oci.version=$version"
      --label "$oci.revision=$revision" --label "$oci.created=$created"
      --label "$oci.source=${HERMES_SOURCE_URL:-https://github.com/hermes-runtime/hermes}"
      --label "$oci.licenses=MIT")
[ -n "$base" ] && args+=(--build-arg "BASE_IMAGE=$base")
[ -f "$ca" ] && args+=(--secret "id=ca-bundle,src=$ca")

# BuildKit (needed for the secret mount) comes with the buildx plugin; a docker CLI
# without it (Debian's docker.io client on bookworm) still has BuildKit built in.
cli="${DOCKER:-docker}"
if ! "$cli" buildx version >/dev/null 2>&1 && [ -x /usr/bin/docker ] \
   && /usr/bin/docker --version | grep -q 'version 20\.'; then
  cli=/usr/bin/docker
fi

start=$(date +%s)
DOCKER_BUILDKIT=1 "$cli" build --progress=plain -f "$dockerfile" -t "$tag" \
  "${args[@]}" "${extra[@]}" .
elapsed=$(( $(date +%s) - start ))
size=$("$cli" image inspect -f '{{.Size}}' "$tag")
echo "image $tag: $(( size / 1000000 )) MB uncompressed, built in ${elapsed} s"
