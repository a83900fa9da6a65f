# SPDX-License-Identifier: GPL-2.0-or-later
# Decoding a stream cut at an FPDU boundary, with the right grid offset,
# gives the same frames as decoding it whole (offsets aside).
#   -DTOOL=iwarp-decode  -DBIN=whole stream  -DWORK=scratch dir
#   -DCUT_INDEX=n        cut before the n-th record (0-based) of the whole decode
#   -DFLAGS=a|b          extra options for the cut decode (e.g. --markers)
#   -DGRID=1             pass the cut FPDU's "pos" as --stream-offset (as 0x hex
#                        when GRID=hex); otherwise "pos" is ignored in the compare
string(REPLACE "|" ";" flags "${FLAGS}")
execute_process(COMMAND ${TOOL} --json ${BIN} OUTPUT_VARIABLE whole RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "whole decode of ${BIN} exited ${rc}")
endif()
string(REGEX REPLACE "\n$" "" whole "${whole}")
string(REPLACE "\n" ";" lines "${whole}")
list(LENGTH lines n)
if(CUT_INDEX GREATER_EQUAL n)
  message(FATAL_ERROR "only ${n} records in ${BIN}")
endif()
list(GET lines ${CUT_INDEX} at)
if(NOT at MATCHES "\"wire_off\":([0-9]+),.*\"type\":\"fpdu\".*\"pos\":([0-9]+)")
  message(FATAL_ERROR "record ${CUT_INDEX} is not an FPDU: ${at}")
endif()
set(cut ${CMAKE_MATCH_1})
set(pos ${CMAKE_MATCH_2})

# The tail as plain hex on one line (it also exercises --hex on a long line).
file(READ ${BIN} tail OFFSET ${cut} HEX)
set(cutfile ${WORK}/cut-${CUT_INDEX}.hex)
file(WRITE ${cutfile} "${tail}\n")
if(GRID STREQUAL "hex")
  math(EXPR pos_hex "${pos}" OUTPUT_FORMAT HEXADECIMAL)
  list(APPEND flags --stream-offset ${pos_hex})
elseif(GRID)
  list(APPEND flags --stream-offset ${pos})
endif()
execute_process(COMMAND ${TOOL} --json --hex ${flags} ${cutfile}
                OUTPUT_VARIABLE part ERROR_VARIABLE err RESULT_VARIABLE rc)
if(NOT rc EQUAL 0 OR NOT err STREQUAL "")
  message(FATAL_ERROR "cut decode (${flags}) exited ${rc}: ${err}")
endif()

# Compare record by record without the input offsets (and "pos" when the
# grid was not given).
string(REGEX REPLACE "\n$" "" part "${part}")
string(REPLACE "\n" ";" plines "${part}")
list(SUBLIST lines ${CUT_INDEX} -1 want)
set(strip "\"offset\":[0-9]+,\"wire_off\":[0-9]+,")
if(NOT GRID)
  set(strip "${strip}|\"pos\":[0-9]+,")
endif()
string(REGEX REPLACE "${strip}" "" want "${want}")
string(REGEX REPLACE "${strip}" "" plines "${plines}")
if(NOT want STREQUAL plines)
  string(REPLACE ";" "\n" want "${want}")
  string(REPLACE ";" "\n" plines "${plines}")
  message(FATAL_ERROR "cut at ${cut} (pos ${pos}) decodes differently.\nwant:\n${want}\ngot:\n${plines}")
endif()
list(LENGTH plines np)
message(STATUS "cut at octet ${cut}, grid position ${pos}: ${np} records identical")
