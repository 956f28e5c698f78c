#!/usr/bin/env bash
# Compare the report's row count with the file's.
set -euo pipefail
file="$1"
report="${2:-report.md}"
rows=$(($(wc -l < "$file") - 1))
grep -q "^$rows rows" "$report" && echo "row count ok ($rows)" || { echo "row count differs" >&2; exit 1; }
