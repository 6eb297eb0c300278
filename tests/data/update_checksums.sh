#!/usr/bin/env bash
# Rewrites SHA256SUMS and the checksum list at the end of README.md from the
# files in tests/data (run after adding or changing a fixture).
set -euo pipefail
cd "$(dirname "$0")"
find . -type f ! -name README.md ! -name SHA256SUMS ! -name update_checksums.sh | sed 's#^\./##' |
  LC_ALL=C sort | xargs -d '\n' sha256sum >SHA256SUMS
head_end=$(grep -n '^```$' README.md | tail -2 | head -1 | cut -d: -f1)
{ head -n "$head_end" README.md; cat SHA256SUMS; echo '```'; } >README.md.tmp
mv README.md.tmp README.md
echo "update_checksums: $(wc -l <SHA256SUMS) files"
