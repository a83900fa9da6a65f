# SPDX-License-Identifier: GPL-2.0-or-later
# The runner's command line and its behaviour against broken inputs and a
# misbehaving agent: clear messages and the documented exit codes, never a
# crash. -DCONFORM= -DBAD_AGENT= -DTARGET= -DCASES= -DWORK=
function(run expect_rc expect_text)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err
                  TIMEOUT 60)
  if(NOT rc STREQUAL "${expect_rc}")
    message(FATAL_ERROR "${ARGN}\n  exit ${rc}, expected ${expect_rc}\n${out}\n${err}")
  endif()
  if(expect_text AND NOT "${out}${err}" MATCHES "${expect_text}")
    message(FATAL_ERROR "${ARGN}\n  output lacks '${expect_text}':\n${out}\n${err}")
  endif()
endfunction()

run(2 "--agent HOST:PORT is required" ${CONFORM})
run(2 "unknown option" ${CONFORM} --agent 127.0.0.1:1 --frobnicate)
run(2 "needs a value" ${CONFORM} --agent)
run(2 "wants HOST:PORT" ${CONFORM} --agent nocolon)
run(2 "wants HOST:PORT" ${CONFORM} --agent 127.0.0.1:99999)
run(2 "milliseconds" ${CONFORM} --agent 127.0.0.1:1 --timeout-ms 0)
run(2 "--iut-port wants PORT or PORT:PORT" ${CONFORM} --agent 127.0.0.1:1 --iut-port 0)
run(2 "--iut-port wants PORT or PORT:PORT" ${CONFORM} --agent 127.0.0.1:1 --iut-port 7401:x)
run(2 "--local-listen wants ADDR:PORT" ${CONFORM} --agent 127.0.0.1:1 --local-listen nocolon)
run(2 "--local-listen wants ADDR:PORT" ${CONFORM} --agent 127.0.0.1:1 --local-listen 127.0.0.1:0)
run(2 "--reply-settle-ms wants 0..10000" ${CONFORM} --agent 127.0.0.1:1 --reply-settle-ms 99999)
run(2 "unexpected argument" ${CONFORM} --agent 127.0.0.1:1 extra)
run(2 "--transport wants tcp or sctp, got 'udp'" ${CONFORM} --agent 127.0.0.1:1 --transport udp)
run(2 "go with --list" ${CONFORM} --agent 127.0.0.1:1 --markdown)
run(2 "matches no case" ${CONFORM} --list --filter no.such.case --cases ${CASES})
run(2 "cannot read the case directory" ${CONFORM} --list --cases ${WORK}/no-such-dir)
run(0 "usage: iwarp-conform" ${CONFORM} --help)
run(0 "### stag" ${CONFORM} --list --markdown --cases ${CASES})
run(0 "\"id\":\"stag.write-unregistered\"" ${CONFORM} --list --json --cases ${CASES})

# A broken case file: file:line: message, exit 2.
file(REMOVE_RECURSE ${WORK}/badcases)
file(WRITE ${WORK}/badcases/stag/broken.case "id: stag.broken\ntitle: t\nrfc: RFC 5041 §7.1\nsend: write stag=$Z.stag\n")
run(2 "broken.case:4: send|broken.case:4: stag: no region named 'Z'" ${CONFORM} --list --cases ${WORK}/badcases)
file(WRITE ${WORK}/badcases/stag/broken.case "id: mpa.elsewhere\ntitle: t\nrfc: RFC 5041 §7.1\nsend: send\n")
run(2 "is in area 'mpa' but the file is in stag" ${CONFORM} --list --cases ${WORK}/badcases)
file(WRITE ${WORK}/bad.dev "deviation: stag.x\nreason: no outcome\n")
run(2 "bad.dev:1: deviation 'stag.x' has no 'outcome:'" ${CONFORM} --agent 127.0.0.1:1 --deviations ${WORK}/bad.dev --cases ${CASES})

# No agent at all: exit 3.
run(3 "cannot connect to the agent" ${CONFORM} --agent 127.0.0.1:1 --cases ${CASES})

# Misbehaving agents.
function(with_bad_agent mode expect_rc expect_text)
  string(RANDOM LENGTH 4 ALPHABET 0123456789 r)
  math(EXPR port "21000 + ${r} % 20000")
  execute_process(COMMAND sh -c "'${BAD_AGENT}' ${port} ${mode} >/dev/null 2>&1 & echo $!" OUTPUT_VARIABLE pid
                  OUTPUT_STRIP_TRAILING_WHITESPACE)
  execute_process(COMMAND sleep 0.3)
  execute_process(COMMAND ${CONFORM} --agent 127.0.0.1:${port} --cases ${CASES}
                  --filter stag.write-unregistered,positive.write-small --timeout-ms 300
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 60)
  execute_process(COMMAND kill ${pid})
  if(NOT rc STREQUAL "${expect_rc}" OR NOT "${out}${err}" MATCHES "${expect_text}")
    message(FATAL_ERROR "bad agent '${mode}': exit ${rc} (expected ${expect_rc}), "
                        "wanted '${expect_text}':\n${out}\n${err}")
  endif()
endfunction()
with_bad_agent(garbage 3 "invalid JSON")
with_bad_agent(version 3 "protocol version 2")
with_bad_agent(refuse 1 "agent refused reset: refused by the bad agent")
with_bad_agent(hangup 3 "agent closed the control connection")
with_bad_agent(silent 3 "did not answer within")
with_bad_agent(lies 1 "ERROR")

# Start a helper in the background on a random port; its pid in ${var}_pid.
function(spawn var)
  execute_process(COMMAND sh -c "\"$0\" \"$@\" >/dev/null 2>&1 & echo $!" ${ARGN}
                  OUTPUT_VARIABLE pid OUTPUT_STRIP_TRAILING_WHITESPACE)
  set(${var}_pid ${pid} PARENT_SCOPE)
  execute_process(COMMAND sleep 0.3)
endfunction()
function(free_port var)
  string(RANDOM LENGTH 4 ALPHABET 0123456789 r)
  math(EXPR p "21000 + ${r} % 20000")
  set(${var} ${p} PARENT_SCOPE)
endfunction()
set(FOUR positive.write-small,stag.write-unregistered,stag.write-wrong-key,positive.imm)

# --transport sctp against an agent whose hello does not offer it: exit 3,
# saying so, before any case.
free_port(p)
spawn(nosctp ${BAD_AGENT} ${p} refuse)
run(3 "does not offer it \\(no \"transport.sctp\" in its hello extensions\\)" ${CONFORM}
    --agent 127.0.0.1:${p} --transport sctp --cases ${CASES})
execute_process(COMMAND kill ${nosctp_pid})

# A response line over 64 MiB ends the control connection; the runner
# reconnects once, loses it again, and lists the rest as not run in every
# report (junit counts all four). A long answer timeout: on a loaded
# machine 64 MiB can take longer than the default 2 s to arrive, and this
# checks the size limit, not the timeout.
free_port(p)
spawn(huge ${BAD_AGENT} ${p} huge)
file(REMOVE_RECURSE ${WORK}/huge)
run(3 "over 64 MiB.*NOTRUN +stag.write-unregistered.*reconnected and continued.*not run"
    ${CONFORM} --agent 127.0.0.1:${p} --cases ${CASES} --filter ${FOUR} --out ${WORK}/huge
    --no-color --timeout-ms 20000)
execute_process(COMMAND kill ${huge_pid})
file(READ ${WORK}/huge/junit.xml j)
if(NOT j MATCHES "<testsuites name=\"iwarp-conform\" tests=\"4\" failures=\"0\" errors=\"4\""
   OR NOT j MATCHES "<error type=\"notrun\" message=\"not run: the agent was lost")
  message(FATAL_ERROR "junit.xml after a lost agent does not list all four cases:\n${j}")
endif()
file(READ ${WORK}/huge/results.json j)
if(NOT j MATCHES "\"notrun\":2" OR NOT j MATCHES "\"status\":\"notrun\"")
  message(FATAL_ERROR "results.json after a lost agent lacks the not-run cases:\n${j}")
endif()

# A control connection lost once, to an agent that comes back: reconnect and
# go on (the case that was running errors; the rest pass).
free_port(tp)
free_port(fp)
spawn(tgt ${TARGET} --agent 127.0.0.1:${tp})
spawn(flk ${BAD_AGENT} ${fp} flaky ${tp} 3)
run(1 "reconnected and continued"
    ${CONFORM} --agent 127.0.0.1:${fp} --cases ${CASES} --filter ${FOUR} --no-color)
execute_process(COMMAND kill ${flk_pid} ${tgt_pid})

# Exit status for every state: FIXED (4), all skipped (5), a listed
# DEVIATION (0) - and JUnit shows them as failure, -, skipped.
free_port(tp)
spawn(tgt ${TARGET} --agent 127.0.0.1:${tp})
file(WRITE ${WORK}/fixed.dev "deviation: positive.write-small\noutcome: anything\nreason: stale\n")
file(REMOVE_RECURSE ${WORK}/fixed)
run(4 "1 listed deviation\\(s\\) no longer occur" ${CONFORM} --agent 127.0.0.1:${tp} --cases ${CASES}
    --filter positive.write-small --deviations ${WORK}/fixed.dev --out ${WORK}/fixed --no-color)
file(READ ${WORK}/fixed/junit.xml j)
if(NOT j MATCHES "<failure type=\"fixed\"")
  message(FATAL_ERROR "a FIXED deviation is not a JUnit failure:\n${j}")
endif()
execute_process(COMMAND kill ${tgt_pid})
free_port(tp)
spawn(tgt ${TARGET} --agent 127.0.0.1:${tp} --fault skip:1/1/0)
file(WRITE ${WORK}/dev.dev "deviation: stag.write-unregistered\noutcome: expected Terminate 1/1/0\nreason: known\n")
file(REMOVE_RECURSE ${WORK}/dev)
run(0 "DEVIATION" ${CONFORM} --agent 127.0.0.1:${tp} --cases ${CASES} --filter stag.write-unregistered
    --deviations ${WORK}/dev.dev --out ${WORK}/dev --timeout-ms 300 --no-color)
file(READ ${WORK}/dev/junit.xml j)
if(NOT j MATCHES "<skipped type=\"deviation\" message=\"known")
  message(FATAL_ERROR "an expected deviation is not a JUnit skip of type deviation:\n${j}")
endif()
execute_process(COMMAND kill ${tgt_pid})
free_port(p)
spawn(ref ${BAD_AGENT} ${p} refuse)
run(5 "1 skipped" ${CONFORM} --agent 127.0.0.1:${p} --cases ${CASES} --filter stag.write-other-pd
    --no-color)
execute_process(COMMAND kill ${ref_pid})


# The agent contract lets STags, TOs and atomic values travel as numbers or
# "0x..." strings: iwarp-target sends strings, this relay turns every one
# below 2^53 into a number; the runner compares by value either way.
free_port(tp)
free_port(fp)
spawn(tgt ${TARGET} --agent 127.0.0.1:${tp})
spawn(num ${BAD_AGENT} ${fp} numbers ${tp} 0)
run(0 "6 cases: 6 passed"
    ${CONFORM} --agent 127.0.0.1:${fp} --cases ${CASES} --no-color --filter
    stag.send-inv-invalidates,stag.send-se-inv-invalidates,positive.write-small,positive.iut-read,positive.atomic-fetch-add,stag.read-to-wrap)
execute_process(COMMAND kill ${num_pid} ${tgt_pid})

# Selection by RFC section and tag; the coverage table as JSON.
run(0 "mpa.crc-zero" ${CONFORM} --list --cases ${CASES} --rfc "RFC 5044 §8")
execute_process(COMMAND ${CONFORM} --list --cases ${CASES} --rfc "RFC 5044 §8" OUTPUT_VARIABLE l)
if(l MATCHES "positive.write-small" OR l MATCHES "mpa.request-bad-key")
  message(FATAL_ERROR "--rfc 'RFC 5044 §8' selected a case that does not cite it:\n${l}")
endif()
run(0 "stag.write-no-remote-write" ${CONFORM} --list --cases ${CASES} --tag alternatives)
run(2 "known tags are" ${CONFORM} --list --cases ${CASES} --tag sparkly)
run(2 "matches no case" ${CONFORM} --list --cases ${CASES} --rfc "RFC 9999")
run(0 "\"triple\":\"0/2/9\",\"name\":\"Remote Operation Error / Steering Tag cannot be Invalidated\",\"cases\":\\[\\],\"alternative_in\":\\[\"stag.send-inv"
    ${CONFORM} --list --coverage --json --cases ${CASES})

# Provenance in every report, per-case logs with agent requests and
# responses, -vv shows responses, a reused --out is emptied, and soak mode
# names the iteration of each failure.
free_port(tp)
spawn(tgt ${TARGET} --agent 127.0.0.1:${tp} --fault skip:1/1/0)
file(MAKE_DIRECTORY ${WORK}/soak/pcaps)
file(WRITE ${WORK}/soak/pcaps/stale.pcap "old")
run(1 "agent -> .*iteration 2: .*FAIL +stag.write-unregistered.*soak: 2 iterations, 4 case runs, 2 failed or errored; stag.write-unregistered in iteration 1 \\(fail\\), 2 \\(fail\\)"
    ${CONFORM} --agent 127.0.0.1:${tp} --cases ${CASES} --filter stag.write-unregistered,positive.write-small
    --repeat 2 --out ${WORK}/soak --timeout-ms 300 --no-color -vv)
execute_process(COMMAND kill ${tgt_pid})
if(EXISTS ${WORK}/soak/pcaps/stale.pcap)
  message(FATAL_ERROR "a reused --out kept an old pcap")
endif()
file(READ ${WORK}/soak/logs/stag.write-unregistered.log l)
if(NOT l MATCHES "iteration 2" OR NOT l MATCHES "agent <- {\"op\":\"reg_mr\"" OR NOT l MATCHES "agent -> {\"ok\":true,\"stag\"")
  message(FATAL_ERROR "the per-case log lacks the iterations or the agent's requests and responses:\n${l}")
endif()
foreach(f results.json junit.xml report.html)
  file(READ ${WORK}/soak/${f} r)
  if(NOT r MATCHES "case_set_hash" OR NOT r MATCHES "iwarpkit iwarp-target")
    message(FATAL_ERROR "${f} has no provenance (case_set_hash, agent hello)")
  endif()
endforeach()

# Soak over several connections at once: one runner per agent, the worst
# status wins, each connection's failures with their iterations.
free_port(ta)
free_port(tb)
spawn(tga ${TARGET} --agent 127.0.0.1:${ta})
spawn(tgb ${TARGET} --agent 127.0.0.1:${tb} --fault skip:1/1/0)
file(REMOVE_RECURSE ${WORK}/multi)
run(1 "2 connections at once.*connection 1 [^\n]*exit 0.*connection 2 [^\n]*exit 1.*stag.write-unregistered in iteration 1 \\(fail\\), 2 \\(fail\\)"
    ${CONFORM} --agent 127.0.0.1:${ta},127.0.0.1:${tb} --cases ${CASES}
    --filter stag.write-unregistered,positive.write-small --repeat 2 --timeout-ms 300
    --out ${WORK}/multi --no-color)
execute_process(COMMAND kill ${tga_pid} ${tgb_pid})
foreach(c 1 2)
  if(NOT EXISTS ${WORK}/multi/conn-${c}/junit.xml)
    message(FATAL_ERROR "connection ${c} wrote no reports")
  endif()
endforeach()
run(2 "need --out" ${CONFORM} --agent 127.0.0.1:1,127.0.0.1:2 --cases ${CASES})

message(STATUS "iwarp-conform command line and bad agents: ok")
