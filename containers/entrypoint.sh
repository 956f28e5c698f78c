#!/bin/sh
# The image's entrypoint (PID 1 is tini): `docker run IMAGE [hermes args...]`.
#   no arguments      -> hermes gateway run
#   `hermes ...`      -> the leading `hermes` is dropped
#   anything else     -> hermes <args>  (profile list, -z "...", config show, ...)
# Started as root it remaps the hermes user to HERMES_UID/HERMES_GID, fixes the
# volume's ownership only when it differs, and drops to that user; started non-root
# (`--user`, compose `user:`) it runs as it is, in a volume that user must own.
set -eu

root="${HOME:-/home/hermes}/.hermes"

# Secrets from files (Docker secrets, mounted env files): NAME_FILE=/run/secrets/x sets
# NAME to the file's content unless NAME is already set. Values are never printed.
# The names go to the runtime in HERMES_SECRET_NAMES: it redacts their values from
# tool output and logs whatever the names look like.
secret_names=""
for assignment in $(env | sed -n 's/^\([A-Za-z_][A-Za-z0-9_]*\)_FILE=.*/\1/p'); do
  name="$assignment"
  case "$name" in SSL_CERT|CURL_CA|REQUESTS_CA|GIT_CONFIG|PYTHONSTARTUP) continue ;; esac
  secret_names="${secret_names:+$secret_names,}$name"
  eval "path=\${${name}_FILE}"
  eval "already=\${${name}+set}"
  [ -n "$already" ] && continue
  if [ ! -r "$path" ]; then
    echo "error: ${name}_FILE: cannot read $path — mount the secret there or unset ${name}_FILE" >&2
    exit 2
  fi
  value="$(cat "$path")"
  export "$name=$value"
  unset "${name}_FILE"
done
if [ -n "$secret_names" ]; then
  export HERMES_SECRET_NAMES="${HERMES_SECRET_NAMES:+$HERMES_SECRET_NAMES,}$secret_names"
fi

if [ "$#" -eq 0 ]; then set -- gateway run; fi
if [ "$1" = hermes ]; then shift; fi

# HERMES_PROFILE=NAME: the command runs for that profile (`hermes -p NAME ...`), which is
# created on first start (from HERMES_PROFILE_FROM when set) so a fresh volume works.
ensure_profile() {
  [ -n "${HERMES_PROFILE:-}" ] || return 0
  [ -d "$root/profiles/$HERMES_PROFILE" ] && return 0
  if [ -n "${HERMES_PROFILE_FROM:-}" ]; then
    "$@" profile create "$HERMES_PROFILE" --from "$HERMES_PROFILE_FROM" >&2
  else
    "$@" profile create "$HERMES_PROFILE" >&2
  fi
}
if [ -n "${HERMES_PROFILE:-}" ]; then set -- -p "$HERMES_PROFILE" "$@"; fi

if [ "$(id -u)" = 0 ]; then
  uid="${HERMES_UID:-10000}"
  gid="${HERMES_GID:-10000}"
  case "$uid$gid" in *[!0-9]*)
    echo "error: HERMES_UID/HERMES_GID must be numbers (got '$uid'/'$gid')" >&2; exit 2 ;;
  esac
  if [ "$uid" = 0 ]; then
    echo "error: HERMES_UID=0: the runtime does not run as root" >&2; exit 2
  fi
  mkdir -p -m 0700 "$root"
  # Docker gives an empty volume the image's owner again at every mount: a volume handed
  # to another uid must not stay empty.
  [ -e "$root/logs" ] || install -d -o "$uid" -g "$gid" -m 0700 "$root/logs"
  # Anything in the volume the service user does not own (all of it after a remap; a
  # file `docker exec -u 0 ... /opt/hermes/bin/hermes` wrote as root) is given back.
  if [ -n "$(find "$root" \( ! -user "$uid" -o ! -group "$gid" \) -print -quit)" ]; then
    echo "hermes: giving $root to $uid:$gid" >&2
    chown -R "$uid:$gid" "$root"
  fi
  if [ "$(stat -c %u "$HOME")" != "$uid" ] && [ -w "$HOME" ]; then
    chown "$uid:$gid" "$HOME" 2>/dev/null || true
  fi
  # `hermes` (containers/hermes.sh) drops to that user, as it does for `docker exec`.
  export HERMES_UID="$uid" HERMES_GID="$gid"
  ensure_profile hermes
  exec hermes "$@"
fi

mkdir -p "$root" 2>/dev/null || true
if [ ! -w "$root" ]; then
  echo "error: $root: not writable by uid $(id -u) (--user); it belongs to" \
    "$(stat -c %u:%g "$root") — mount a volume or directory that uid owns, or give it" \
    "that uid once: docker run --rm -v VOLUME:$root -e HERMES_UID=$(id -u)" \
    "-e HERMES_GID=$(id -g) IMAGE --version" >&2
  exit 2
fi

if [ -n "${HERMES_UID:-}" ] && [ "$HERMES_UID" != "$(id -u)" ]; then
  echo "hermes: HERMES_UID=$HERMES_UID ignored: the container runs as uid $(id -u) (--user)" >&2
fi
ensure_profile hermes
exec hermes "$@"
