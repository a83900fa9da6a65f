#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# iwarp-conform against Linux soft-iWARP (ctest -L siw: siw_conform).
#
#   interop/siw/conform-siw.sh --conform PATH [--agent-bin PATH] [--out DIR]
#                              [--deviations FILE] [--filter GLOBS] [-- RUNNER-ARGS...]
#
# Boots the guest, runs conformance/agent's iwarp-agent on siw0 in it and the
# whole suite from the host through qemu's forwards (cases listed by id in
# expected-crashes.txt last, each alone on a fresh guest):
#   runner -> agent protocol     127.0.0.1:CTL+1  -> guest :7400
#   runner -> siw's listener     127.0.0.1:CTL+2  -> guest :7401 (--iut-port 7401:CTL+2)
#   siw    -> runner's listener  10.0.2.100:CTL+3 -> 127.0.0.1:CTL+3 (--local-listen)
# The runner waits up to 4 s per expectation (TCG is slow) and 20 ms after
# siw's MPA Reply (siw loses an FPDU that comes sooner: docs/siw.md).
# A guest kernel crash is a result: the case that was running is recorded as
# crashing siw (crashes.txt), a fresh guest is booted and the suite goes on
# with the cases after it. The per-run reports (results.json, junit.xml,
# report.html, pcaps/) land in OUT/run-N; OUT/summary.txt sums them up.
#
# Exit: 0 every case passed or failed as a listed deviation (and no crash
# that is not listed); 1 otherwise; 77 the guest cannot run here.
set -euo pipefail
# shellcheck source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
G="$IWK_SIW_DIR/guest.sh"
SRC=$(cd "$IWK_SIW_DIR/../.." && pwd)

conform= agent_bin= out= filter=
deviations=$SRC/conformance/deviations/siw.txt
extra=()
while [[ $# -gt 0 ]]; do
  case "$1" in
    --conform) conform=${2:-}; shift 2 ;;
    --agent-bin) agent_bin=${2:-}; shift 2 ;;
    --out) out=${2:-}; shift 2 ;;
    --deviations) deviations=${2:-}; shift 2 ;;
    --filter) filter=${2:-}; shift 2 ;;
    --) shift; extra=("$@"); break ;;
    *) iwk_die "unknown argument: $1 (see the header of $0)" 2 ;;
  esac
done
[[ -x $conform ]] || iwk_die "--conform PATH to iwarp-conform is required" 2
[[ -f $deviations ]] || iwk_die "no deviations file $deviations" 2
RUN=$IWK_SIW_RUN
out=${out:-$RUN/conform}
mkdir -p "$RUN" "$out"
rm -rf "${out:?}"/run-* "${out:?}"/known-* "$out/crashes.txt" "$out/summary.txt"

rc=0
bash "$IWK_SIW_DIR/build-guest.sh" || rc=$?
[[ $rc == "$IWK_EXIT_SKIP" ]] && { echo "siw conform: SKIPPED: no guest here"; exit "$IWK_EXIT_SKIP"; }
[[ $rc == 0 ]] || iwk_die "build-guest.sh failed (rc=$rc)"
if [[ -z $agent_bin ]]; then
  agent_bin=$(bash "$IWK_SIW_DIR/build-agent.sh" "$SRC" | tail -n 1)
fi
[[ -x $agent_bin ]] || iwk_die "no iwarp-agent binary at '$agent_bin'"

base=$(iwk_pick_ports 4)
export IWK_SIW_CTL_PORT=$base IWK_SIW_AGENT_PORT=$(( base + 1 ))
IUT_PORT=$(( base + 2 )) LOCAL_PORT=$(( base + 3 ))
export IWK_SIW_FWD="$IUT_PORT:7401" IWK_SIW_GUESTFWD="$LOCAL_PORT"
export IWK_SIW_LIFETIME=${IWK_SIW_LIFETIME:-3600}

iwk_stop_guest_on_exit "siw conform: reports in $out"

boot() {
  iwk_boot_or_skip >/dev/null
  bash "$G" copy-in "$agent_bin" /usr/local/bin/iwarp-agent
  bash "$G" run -t 30 "$IWK_AGENT_START"
}

# The case ids to run, in the runner's order.
list_args=(--list --json)
[[ -n $filter ]] && list_args+=(--filter "$filter")
mapfile -t ids < <("$conform" "${list_args[@]}" | sed -n 's/^{"id":"\([^"]*\)".*/\1/p')
[[ ${#ids[@]} -gt 0 ]] || iwk_die "iwarp-conform lists no cases"
iwk_log "${#ids[@]} cases"
# Cases known to crash siw on their own (listed by id in expected-crashes.txt)
# run last, each alone on a fresh guest, so that the suite itself runs in one
# guest and leaves one report.
all_ids=("${ids[@]}") known_ids=() ids=()
for id in "${all_ids[@]}"; do
  if grep -q "^$id:" "$IWK_SIW_DIR/expected-crashes.txt" 2>/dev/null; then known_ids+=("$id"); else ids+=("$id"); fi
done

# Before each case its id goes into the guest's kernel log, so that an oops
# on the console is pinned on the case that was running.
HOOK="bash '$G' run -t 15 \"echo 'IWK case '\$IWC_CASE_ID >/dev/kmsg\" >/dev/null 2>&1 || true"
# HOOK is expanded by the runner's shell: IWC_CASE_ID and the IWK_SIW_*
# ports come from its environment.
export IWC_CASE_ID=

# conform FILTER DIR: one runner pass over a fresh guest; sets rc and
# crashed (the guest kernel died during it).
conform() {
  boot
  set +e
  "$conform" --agent "127.0.0.1:$IWK_SIW_AGENT_PORT" --iut-host 127.0.0.1 \
    --iut-port "7401:$IUT_PORT" --local-host 10.0.2.100 --local-listen "127.0.0.1:$LOCAL_PORT" \
    --deviations "$deviations" --filter "$1" --out "$2" --no-color \
    --timeout-ms 4000 --reply-settle-ms 20 --case-hook "$HOOK" \
    ${extra[@]+"${extra[@]}"} 2>&1 | tee "$2.log"
  rc=${PIPESTATUS[0]}
  set -e
  crashed=0
  bash "$G" status >"$2.status" 2>&1 || true
  if [[ -f $RUN/CRASHED ]] || grep -q CRASHED "$2.status"; then
    crashed=1
    mkdir -p "$2/guest"; cp "$RUN/serial.log" "$RUN/CRASHED" "$2/guest/" 2>/dev/null || true
  else
    bash "$G" logs >/dev/null 2>&1 || true
    cp -r "$RUN/logs" "$2/guest" 2>/dev/null || true
  fi
  bash "$G" stop >/dev/null 2>&1 || true
}

t0=$(date +%s)
n=0 next=0 crashes=0 runner_rc=0
while (( next < ${#ids[@]} )); do
  n=$(( n + 1 ))
  dir=$out/run-$n
  conform "$(IFS=,; echo "${ids[*]:next}")" "$dir"
  if [[ $crashed == 0 ]]; then
    [[ $rc == 0 ]] || runner_rc=1
    break
  fi
  # The first case of this run whose agent went away (it and the rest get
  # "agent connection failed"); verdicts before it count as usual.
  read -r k bad < <(/usr/bin/env python3 - "$dir/results.json" "$next" "${ids[@]}" <<'PY'
import json, sys
path, nxt, ids = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
try:
    cases = {c["id"]: c for c in json.load(open(path)).get("cases", [])}
except Exception:
    cases = {}
def gone(c):
    # "notrun": the runner lost the agent for good before this case
    return c is None or c.get("status") == "notrun" or (c.get("status") == "error" and
                         any("agent connection" in m for m in c.get("messages", [])))
k, bad = nxt, 0
while k < len(ids) and not gone(cases.get(ids[k])):
    bad += cases[ids[k]].get("status") in ("fail", "error", "fixed")
    k += 1
print(min(k, len(ids) - 1), bad)
PY
)
  [[ $bad == 0 ]] || runner_rc=1
  cp "$dir/guest/CRASHED" "$dir.crash" 2>/dev/null || true
  # The case that was running: the last id the hook wrote before the oops.
  blamed=$k
  cl=$(grep -a -n -m1 -E "$IWK_CRASH_RE" "$dir/guest/serial.log" 2>/dev/null | cut -d: -f1) || true
  if [[ -n $cl ]]; then
    marker=$(sed -n "1,${cl}p" "$dir/guest/serial.log" | tr -d '\r' | grep -a -o 'IWK case [^ ]*' | tail -n 1 | cut -d' ' -f3) || true
    for ((j = next; j <= k; j++)); do [[ ${ids[j]} == "$marker" ]] && blamed=$j; done
  fi
  # Does it crash a fresh guest on its own?
  iwk_log "confirming: ${ids[blamed]} alone on a fresh guest"
  conform "${ids[blamed]}" "$dir-confirm-${ids[blamed]}"
  if [[ $crashed == 1 ]]; then
    how="reproduced: running it alone on a fresh guest crashes the kernel"
  else
    how="not reproduced alone: it crashed after the cases before it in the same guest"
  fi
  crashes=$(( crashes + 1 ))
  { echo "${ids[blamed]}"; echo "    ($how)"; sed -n '1,60s/^/    /p' "$dir.crash" 2>/dev/null; } >>"$out/crashes.txt"
  iwk_warn "siw crashed the guest kernel: ${ids[blamed]} ($how); the rest on a fresh guest"
  next=$(( blamed + 1 ))
done

for id in ${known_ids[@]+"${known_ids[@]}"}; do
  iwk_log "$id: listed as crashing siw; alone on a fresh guest"
  conform "$id" "$out/known-$id"
  if [[ $crashed == 1 ]]; then
    crashes=$(( crashes + 1 ))
    { echo "$id"; echo "    (reproduced: a listed crash, run alone on a fresh guest)"
      sed -n '1,60s/^/    /p' "$out/known-$id/guest/CRASHED" 2>/dev/null; } >>"$out/crashes.txt"
  else
    iwk_warn "$id is listed in expected-crashes.txt but did not crash siw: remove it from the list"
    runner_rc=1
  fi
done

# One verdict per case over all runs: a run's verdicts up to the case that
# crashed the guest, "crash" for that case, then the next run's.
/usr/bin/env python3 - "$out" "${all_ids[@]}" >"$out/summary.txt" <<'PY'
import glob, json, os, re, sys
out, ids = sys.argv[1], sys.argv[2:]
crashed = [l.strip() for l in open(os.path.join(out, "crashes.txt"))
           if l.strip() and not l.startswith(" ")] if os.path.exists(os.path.join(out, "crashes.txt")) else []
final = {}
runs = sorted((p for p in glob.glob(os.path.join(out, "run-*", "results.json"))
               if re.search(r"run-\d+/results\.json$", p)),  # not the confirm runs
              key=lambda p: int(re.search(r"run-(\d+)/", p).group(1)))
runs += sorted(glob.glob(os.path.join(out, "known-*", "results.json")))
for p in runs:
    try:
        cases = json.load(open(p)).get("cases", [])
    except Exception:
        continue
    for c in cases:
        if c["id"] in crashed:
            final[c["id"]] = "crash"
        elif c["id"] not in final or final[c["id"]] == "error":
            final[c["id"]] = c.get("status", "?")
counts = {}
for i in ids:
    counts[final.get(i, "not run")] = counts.get(final.get(i, "not run"), 0) + 1
print(f"{len(ids)} cases: " + ", ".join(f"{n} {k}" for k, n in sorted(counts.items())))
for k in ("crash", "fail", "error", "fixed"):
    for i in ids:
        if final.get(i) == k:
            print(f"  {k.upper():<6} {i}")
json.dump(final, open(os.path.join(out, "verdicts.json"), "w"), indent=0)
PY
{
  echo "iwarp-conform against siw ($(sed -n 's/^IWK_KABI=//p' "$RUN/manifest.env" 2>/dev/null)), $(( $(date +%s) - t0 )) s, $n guest boot(s), $crashes guest kernel crash(es)"
  cat "$out/summary.txt"
} | tee "$out/summary.tmp"
mv "$out/summary.tmp" "$out/summary.txt"
# A crash is a failure unless expected-crashes.txt lists it: "CASE-ID: reason"
# for a crash the case reproduces alone on a fresh guest, or "any ERE ::
# reason" for one that only a sequence of cases provokes, matched against
# the console excerpt (the runner only sees an agent that went away, so
# crashes are judged here).
if [[ $crashes -gt 0 ]]; then
  EXP=$IWK_SIW_DIR/expected-crashes.txt
  awk '/^[^ ]/ { if (id != "") print id "\t" how "\t" txt; id = $0; how = ""; txt = ""; next }
       /^    \(/ && how == "" { how = $0; next }
       { txt = txt " " $0 }
       END { if (id != "") print id "\t" how "\t" txt }' "$out/crashes.txt" >"$out/crashes.tsv"
  while IFS=$'\t' read -r id how txt; do
    ok=
    if [[ $how == *reproduced:* ]] && grep -qE "^$id:" "$EXP" 2>/dev/null; then
      ok="listed in expected-crashes.txt"
    else
      while IFS= read -r line; do
        re=${line#any }; re=${re%% :: *}
        if grep -qE -- "$re" <<<"$txt"; then ok="matches '$re' in expected-crashes.txt"; break; fi
      done < <(grep -E '^any .* :: ' "$EXP" 2>/dev/null)
    fi
    if [[ -n $ok ]]; then iwk_log "crash in $id: $ok"
    else iwk_warn "crash in $id $how is not an expected crash (interop/siw/expected-crashes.txt)"; runner_rc=1; fi
  done <"$out/crashes.tsv"
fi
exit "$runner_rc"
