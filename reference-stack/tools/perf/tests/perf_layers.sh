#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# perf_layers.sh NM LAYER... : calls between object files go one way, down.
#
# Each LAYER is a ':'-separated list of object files or archives, the top
# layer first (iwarp-perf: main, the protocols, perf_common, pt_wire). An
# object may reference (nm: undefined) a global symbol defined in a layer
# below its own, never one defined above it or beside it in its own layer:
# that is a file cycle or a protocol calling the other protocol. So that
# the check cannot pass by reading nothing, every object must define a
# global symbol and every layer below the top must be referenced from above.
# Exit 0 if the layering holds, 1 with the offending symbols if not, 2 on
# bad arguments or an unreadable object.
set -u
nm=${1:?usage: perf_layers.sh NM LAYER...}
shift
[ $# -ge 2 ] || { echo "perf_layers.sh: need at least two layers" >&2; exit 2; }
tmp=$(mktemp -d) || exit 2
trap 'rm -rf "$tmp"' EXIT

# syms OBJ DEF|UND: the global symbols OBJ defines or references, sorted.
syms() {
    "$nm" -P -g "$1" >"$tmp/nm.out" 2>"$tmp/nm.err" || {
        echo "perf_layers.sh: $nm cannot read $1: $(cat "$tmp/nm.err")" >&2
        exit 2
    }
    # -P: "name type [value size]"; archive member headers end in ':'.
    awk -v want="$2" 'NF >= 2 && $1 !~ /:$/ {
        und = ($2 == "U" || $2 == "w" || $2 == "v")
        if ((want == "UND") == und) print $1
    }' "$tmp/nm.out" | sort -u
}

layer=0
objs=()  # objs[k]: file; lay[k]: its layer
lay=()
for spec in "$@"; do
    IFS=: read -r -a files <<<"$spec"
    [ ${#files[@]} -gt 0 ] || { echo "perf_layers.sh: empty layer $((layer + 1))" >&2; exit 2; }
    for f in "${files[@]}"; do
        [ -r "$f" ] || { echo "perf_layers.sh: cannot read $f" >&2; exit 2; }
        objs+=("$f")
        lay+=("$layer")
    done
    layer=$((layer + 1))
done
nlayers=$layer

for k in "${!objs[@]}"; do
    syms "${objs[$k]}" DEF >"$tmp/def.$k" || exit 2
    syms "${objs[$k]}" UND >"$tmp/und.$k" || exit 2
    if [ ! -s "$tmp/def.$k" ]; then
        echo "perf_layers.sh: ${objs[$k]} defines no global symbol: not an object of this program?" >&2
        exit 2
    fi
done

bad=0
declare -A used  # used[layer]: something above references it
for a in "${!objs[@]}"; do      # a defines
    for b in "${!objs[@]}"; do  # b references
        [ "$a" = "$b" ] && continue
        hits=$(comm -12 "$tmp/def.$a" "$tmp/und.$b" | tr '\n' ' ')
        [ -n "$hits" ] || continue
        if [ "${lay[$b]}" -lt "${lay[$a]}" ]; then
            used[${lay[$a]}]=1
            continue
        fi
        how=$([ "${lay[$b]}" -eq "${lay[$a]}" ] && echo "beside it" || echo "above it")
        echo "FAIL: $(basename "${objs[$b]}") (layer $((lay[$b] + 1))) calls into" \
             "$(basename "${objs[$a]}") (layer $((lay[$a] + 1)), $how): $hits"
        bad=1
    done
done
for ((l = 1; l < nlayers; l++)); do
    if [ -z "${used[$l]:-}" ]; then
        echo "FAIL: nothing above layer $((l + 1)) references it: wrong objects, or nm saw nothing"
        bad=1
    fi
done
if [ "$bad" = 0 ]; then
    echo "ok: ${#objs[@]} objects in $nlayers layers, every call goes down"
fi
exit "$bad"
