#!/usr/bin/env bash
# Build the default sandbox image, hermes-sandbox:latest (environment.docker.image), from
# this checkout: containers/build.sh with the sandbox's Dockerfile, so the same options
# apply (-t TAG, --base IMAGE, --no-cache); it prints the size and build time.
#
#   containers/sandbox/build.sh [-t TAG] [--base IMAGE] [--no-cache]
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
exec "$here/../build.sh" -t hermes-sandbox:latest "$@" -f containers/sandbox/Dockerfile
