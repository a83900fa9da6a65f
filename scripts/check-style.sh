#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The tree's two mechanical rules, checked (ctest style_check) or applied:
#  1. every source file names its licence in an SPDX line: line 1 of C
#     files, line 1 or 2 (after a #! line) of scripts and CMake files;
#  2. every C file is formatted by the project's .clang-format.
#   check-style.sh          report every violation, exit 1 if any
#   check-style.sh --fix    add the missing SPDX lines, run clang-format -i
set -euo pipefail
cd "$(dirname "$0")/.."
fix=0
[ "${1:-}" = --fix ] && fix=1
spdx_id='SPDX-License-Identifier: GPL-2.0-or-later'

command -v git >/dev/null || { echo "check-style: needs git (scripts/deps.sh)"; exit 2; }
command -v clang-format >/dev/null ||
  { echo "check-style: needs clang-format (scripts/deps.sh installs it)"; exit 2; }
git rev-parse --is-inside-work-tree >/dev/null 2>&1 ||
  { echo "check-style: not a git checkout, nothing to check"; exit 77; }

# Tracked files plus new ones not yet committed; generated and data files
# (captures, corpora, goldens) carry no header.
mapfile -t c_files < <(git ls-files -co --exclude-standard -- '*.c' '*.h' '*.h.in' | sort -u)
mapfile -t script_files < <(git ls-files -co --exclude-standard -- '*.sh' '*.py' '*.cmake' \
  'CMakeLists.txt' '*/CMakeLists.txt' '*.cmake.in' '*Dockerfile' '.ci/run' \
  'interop/siw/guest/iwk-*' | sort -u)

bad=0
for f in "${c_files[@]}"; do
  [ -f "$f" ] || continue
  if ! head -n 1 "$f" | grep -F "$spdx_id" >/dev/null; then
    if [ $fix = 1 ]; then
      { echo "/* $spdx_id */"; cat "$f"; } >"$f.spdx" && mv "$f.spdx" "$f"
    else
      echo "$f:1: no SPDX line (want: /* $spdx_id */)"; bad=1
    fi
  fi
done
for f in "${script_files[@]}"; do
  [ -f "$f" ] || continue
  if ! head -n 2 "$f" | grep -F "$spdx_id" >/dev/null; then
    if [ $fix = 1 ]; then
      mode=$(stat -c %a "$f")
      if head -n 1 "$f" | grep '^#!' >/dev/null; then
        { head -n 1 "$f"; echo "# $spdx_id"; tail -n +2 "$f"; } >"$f.spdx"
      else
        { echo "# $spdx_id"; cat "$f"; } >"$f.spdx"
      fi
      mv "$f.spdx" "$f" && chmod "$mode" "$f"
    else
      echo "$f:1: no SPDX line (want: # $spdx_id)"; bad=1
    fi
  fi
done

# clang-format only sees real C sources (.h.in templates hold @VARS@).
fmt=()
for f in "${c_files[@]}"; do
  case $f in *.in) ;; *) [ -f "$f" ] && fmt+=("$f") ;; esac
done
if [ $fix = 1 ]; then
  clang-format -i --style=file "${fmt[@]}"
else
  if ! clang-format --dry-run --Werror --style=file "${fmt[@]}" 2>"${TMPDIR:-/tmp}/iwk-style.$$"; then
    grep -E '^[^ ].*: error:' "${TMPDIR:-/tmp}/iwk-style.$$" | sed -E 's/:[0-9]+:[0-9]+: error:.*//' |
      sort -u | sed 's/^/not formatted: /'
    echo "check-style: run scripts/check-style.sh --fix"
    bad=1
  fi
  rm -f "${TMPDIR:-/tmp}/iwk-style.$$"
fi
if [ $fix = 0 ]; then
  [ $bad = 0 ] && echo "check-style: ${#c_files[@]} C files and ${#script_files[@]} scripts ok"
  exit $bad
fi
