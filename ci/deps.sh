#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# make deps: install the Debian packages a list names (default: the build
# and test set, ci/packages.txt). Idempotent: installs only what is missing,
# and says so; as a non-root user it uses sudo if there is one, else it says
# what to run.
set -euo pipefail

list=${1:-ci/packages.txt}
[ -r "$list" ] || { echo "make deps: cannot read $list" >&2; exit 1; }
mapfile -t wanted < <(sed -e 's/#.*//' -e 's/[[:space:]]//g' -e '/^$/d' "$list")

missing=()
for pkg in "${wanted[@]}"; do
	status=$(dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null || true)
	[ "$status" = "install ok installed" ] || missing+=("$pkg")
done
if [ ${#missing[@]} -eq 0 ]; then
	echo "make deps: all ${#wanted[@]} packages of $list are installed"
	exit 0
fi

if [ "$(id -u)" -eq 0 ]; then
	as_root=()
elif command -v sudo >/dev/null; then
	echo "make deps: not root; installing with sudo"
	as_root=(sudo)
else
	echo "make deps: these packages are missing: ${missing[*]}" >&2
	echo "make deps: installing them needs root; run: sudo make deps" >&2
	exit 1
fi

echo "make deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
"${as_root[@]}" apt-get update -qq
"${as_root[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
