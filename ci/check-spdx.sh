#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# Every source file of the tree carries the project's SPDX line (LICENSE) in
# its first three lines: C, headers, linker maps and X-macro lists, shell
# and awk scripts, makefiles, man pages. Data (profiles, corpora, tables)
# carries none.
#   ci/check-spdx.sh [ROOT]
set -uo pipefail
cd "${1:-.}" || exit 2
git rev-parse --is-inside-work-tree >/dev/null 2>&1 ||
	{ echo "check-spdx: not a git checkout: no list of the tree's files to check"; exit 0; }
spdx='SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause'
missing=0 n=0
while IFS= read -r f; do
	n=$((n + 1))
	if ! head -n 3 -- "$f" | grep -qF "$spdx"; then
		echo "check-spdx: $f: no \"$spdx\" in its first three lines" >&2
		missing=$((missing + 1))
	fi
done < <(git ls-files -- '*.c' '*.h' '*.map' '*.def' '*.sh' '*.awk' '*.mk' '*.in' \
	'Makefile' '*/Makefile' '.ci/run' 'ci/rxe/init' 'tools/rdmamock-pair' 'man/*.[1-8]')
[ "$missing" = 0 ] || { echo "check-spdx: $missing of $n files lack the line" >&2; exit 1; }
echo "check-spdx: $n source files, each with its SPDX line"
