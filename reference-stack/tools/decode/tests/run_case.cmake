# SPDX-License-Identifier: GPL-2.0-or-later
# Runs iwarp-decode once and checks what it did. Used by ctest (cmake -P),
# so the tests need no Python or shell.
#
#   -DTOOL=path           the iwarp-decode binary
#   -DARGS=a|b|c          its arguments, '|'-separated
#   -DSTDIN=file          optional: feed this file on stdin
#   -DPIPE=file           optional: feed this file on stdin through a pipe
#   -DEXPECT_RC=n         expected exit status
#   -DGOLDEN=file         optional: stdout must equal this file exactly
#   -DSTDOUT_REGEX=re     optional: stdout must match
#   -DSTDERR_REGEX=re     optional: stderr must match; without it stderr must
#                         be empty (a sanitizer report fails the case)
#   -DACTUAL=file         optional: where to save stdout when it differs
if(NOT DEFINED TOOL OR NOT DEFINED EXPECT_RC)
  message(FATAL_ERROR "run_case.cmake needs TOOL and EXPECT_RC")
endif()
string(REPLACE "|" ";" args "${ARGS}")
if(DEFINED STDIN)
  execute_process(COMMAND ${TOOL} ${args} INPUT_FILE ${STDIN}
                  OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc)
elseif(DEFINED PIPE)
  execute_process(COMMAND ${CMAKE_COMMAND} -E cat ${PIPE} COMMAND ${TOOL} ${args}
                  OUTPUT_VARIABLE out ERROR_VARIABLE err RESULTS_VARIABLE rcs)
  list(GET rcs 1 rc)
else()
  execute_process(COMMAND ${TOOL} ${args}
                  OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc)
endif()

set(fail "")
if(NOT rc STREQUAL EXPECT_RC)
  string(APPEND fail "exit status ${rc}, expected ${EXPECT_RC}\n")
endif()
if(DEFINED GOLDEN)
  file(READ ${GOLDEN} want)
  if(NOT out STREQUAL want)
    if(DEFINED ACTUAL)
      file(WRITE ${ACTUAL} "${out}")
      string(APPEND fail "stdout differs from ${GOLDEN}; actual output in ${ACTUAL}\n")
    else()
      string(APPEND fail "stdout differs from ${GOLDEN}:\n${out}\n")
    endif()
  endif()
endif()
if(DEFINED STDOUT_REGEX AND NOT out MATCHES "${STDOUT_REGEX}")
  string(APPEND fail "stdout does not match '${STDOUT_REGEX}':\n${out}\n")
endif()
if(DEFINED STDERR_REGEX)
  if(NOT err MATCHES "${STDERR_REGEX}")
    string(APPEND fail "stderr does not match '${STDERR_REGEX}':\n${err}\n")
  endif()
elseif(NOT err STREQUAL "")
  string(APPEND fail "unexpected stderr:\n${err}\n")
endif()
if(fail)
  message(FATAL_ERROR "iwarp-decode ${ARGS}\n${fail}")
endif()
