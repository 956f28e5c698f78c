#!/bin/sh
# `hermes` in the image (first on PATH; the real one is /opt/hermes/bin/hermes).
# Run as root — `docker exec CONTAINER hermes config set ...` is root unless told
# otherwise — it runs as the service user instead (HERMES_UID/HERMES_GID, else
# 10000), so what it writes in the volume stays readable by the gateway: a root-owned
# 0600 .env would stop the gateway at its next start. Anyone else runs it unchanged.
if [ "$(id -u)" = 0 ]; then
  exec setpriv --reuid="${HERMES_UID:-10000}" --regid="${HERMES_GID:-10000}" \
    --clear-groups --no-new-privs -- /opt/hermes/bin/hermes "$@"
fi
exec /opt/hermes/bin/hermes "$@"
