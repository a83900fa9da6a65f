# SPDX-License-Identifier: GPL-2.0-or-later
# Cross-check with the Wireshark plugin: every capture in pcaps/valid.list
# (the plugin's zero-warning list) must decode with no verdict other than
# ok, as iWARP (no not_iwarp record), with at least one FPDU.
#
#   -DTOOL=path -DPCAPS=dir
file(STRINGS ${PCAPS}/valid.list names)
set(fail "")
set(n 0)
foreach(name ${names})
  if(name STREQUAL "" OR name MATCHES "^#")
    continue()
  endif()
  math(EXPR n "${n} + 1")
  execute_process(COMMAND ${TOOL} --json ${PCAPS}/${name}
                  OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    string(APPEND fail "${name}: exit status ${rc}\n${err}")
  endif()
  if(out MATCHES "\"verdict\":{")
    string(APPEND fail "${name}: a verdict other than ok\n")
  endif()
  if(out MATCHES "\"type\":\"not_iwarp\"")
    string(APPEND fail "${name}: a stream was judged not iWARP\n")
  endif()
  if(NOT out MATCHES "\"type\":\"fpdu\"")
    string(APPEND fail "${name}: no FPDU decoded\n")
  endif()
  if(NOT err STREQUAL "")
    string(APPEND fail "${name}: unexpected stderr:\n${err}\n")
  endif()
endforeach()
if(n EQUAL 0)
  set(fail "valid.list names no capture\n")
endif()
if(fail)
  message(FATAL_ERROR "${fail}")
endif()
message(STATUS "${n} captures in valid.list decode with every verdict ok")
