# The runner's command line and its behaviour against broken inputs and a
# misbehaving agent: clear messages and the documented exit codes, never a
# crash. -DCONFORM= -DBAD_AGENT= -DCASES= -DWORK=
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
message(STATUS "iwarp-conform command line and bad agents: ok")
