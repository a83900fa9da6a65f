# SPDX-License-Identifier: GPL-2.0-or-later
# ctest driver for a fuzz-smoke test: a bounded libFuzzer run on a scratch
# copy of the corpus (libFuzzer adds what it finds to the first corpus dir,
# and the source tree must stay untouched). Crash inputs go to WORK/artifacts.
#   cmake -DFUZZER= -DCORPUS= -DWORK= -DDICT= -DOPTIONS= -DSECONDS= [-DSEEDS=] -P smoke.cmake
# Every "key = value" of OPTIONS (the target's .options) but dict becomes
# -key=value, as OSS-Fuzz passes them.
file(REMOVE_RECURSE "${WORK}")
file(MAKE_DIRECTORY "${WORK}/corpus" "${WORK}/artifacts")
file(GLOB seeds "${CORPUS}/*")
# SEEDS > 0: every k-th seed, at most SEEDS of them. The corpus replay tests
# run every seed already; a smoke that first re-runs 1,500 plugin inputs
# spends its time there and not fuzzing.
list(LENGTH seeds n)
if(SEEDS AND n GREATER SEEDS)
  list(SORT seeds)
  math(EXPR step "(${n} + ${SEEDS} - 1) / ${SEEDS}")
  math(EXPR last "${n} - 1")
  set(kept "")
  foreach(i RANGE 0 ${last} ${step})
    list(GET seeds ${i} s)
    list(APPEND kept "${s}")
  endforeach()
  set(seeds ${kept})
endif()
file(COPY ${seeds} DESTINATION "${WORK}/corpus")
file(STRINGS "${OPTIONS}" lines REGEX "^[a-z_]+ *= *")
set(opts "")
foreach(line IN LISTS lines)
  string(REGEX REPLACE "^([a-z_]+) *= *(.*)$" "-\\1=\\2" opt "${line}")
  if(NOT opt MATCHES "^-dict=")
    list(APPEND opts "${opt}")
  endif()
endforeach()
execute_process(
  COMMAND "${FUZZER}" -max_total_time=${SECONDS} -rss_limit_mb=2048 -timeout=25
          ${opts} -dict=${DICT} -print_final_stats=1
          -artifact_prefix=${WORK}/artifacts/ "${WORK}/corpus"
  RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  file(GLOB crashes "${WORK}/artifacts/*")
  message(FATAL_ERROR "${FUZZER} failed (${rc}); reproducers: ${crashes}")
endif()
