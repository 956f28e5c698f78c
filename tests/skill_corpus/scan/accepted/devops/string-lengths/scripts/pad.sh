#!/usr/bin/env bash
# Pad TEXT to WIDTH columns (default 20); print the padding used.
set -euo pipefail
if [ $# -lt 1 ]; then
  echo "usage: pad.sh TEXT [WIDTH]" >&2
  exit 2
fi
text="$1"
width="${2:-20}"
parts=($text)
pad=$(( width - ${#text} ))
if (( pad < 0 )); then pad=0; fi
printf '%s%*s|\n' "$text" "$pad" ""
echo "words: ${#parts[@]}, padding: $pad, prefix: ${text%% *}, suffix: ${text##* }" >&2
