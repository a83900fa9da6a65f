# SPDX-License-Identifier: GPL-2.0-or-later
# One capture of pcaps/ against its expected decode. The exit status must
# be 1 when the expected output holds a verdict other than ok, else 0; a
# capture without an expected decode fails, so none is forgotten.
#
#   -DTOOL=path -DPCAP=file -DGOLDEN=file -DACTUAL=file
if(NOT EXISTS ${GOLDEN})
  message(FATAL_ERROR "${PCAP} has no expected decode ${GOLDEN}: run "
                      "reference-stack/tools/tests/update_golden.sh and review it")
endif()
file(READ ${GOLDEN} want)
if(want MATCHES "\"verdict\":{")
  set(expect_rc 1)
else()
  set(expect_rc 0)
endif()
execute_process(COMMAND ${TOOL} --json ${PCAP}
                OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc)
set(fail "")
if(NOT rc STREQUAL expect_rc)
  string(APPEND fail "exit status ${rc}, expected ${expect_rc}\n")
endif()
if(NOT out STREQUAL want)
  file(WRITE ${ACTUAL} "${out}")
  string(APPEND fail "stdout differs from ${GOLDEN}; actual output in ${ACTUAL}\n")
endif()
# Expected stderr, if any, in NAME.stderr beside the golden (the capture's
# path written as PCAP).
string(REGEX REPLACE "\\.jsonl$" ".stderr" errgolden "${GOLDEN}")
set(want_err "")
if(EXISTS ${errgolden})
  file(READ ${errgolden} want_err)
endif()
string(REPLACE "${PCAP}" "PCAP" err "${err}")
if(NOT err STREQUAL want_err)
  string(APPEND fail "unexpected stderr:\n${err}\n")
endif()
if(fail)
  message(FATAL_ERROR "iwarp-decode --json ${PCAP}\n${fail}")
endif()
