# SPDX-License-Identifier: GPL-2.0-or-later
# The committed samples must be exactly what gen_samples produces from the
# library's encoders, so they cannot drift from the code.
#   -DGEN_DIR=dir   where the gen_samples fixture wrote its output
#   -DSAMPLES=dir   reference-stack/tools/samples
set(files mpa-v2-markers-crc.hex mpa-v1-reply-nocrc.bin violations.hex)
set(fail "")
foreach(f IN LISTS files)
  execute_process(COMMAND ${CMAKE_COMMAND} -E compare_files ${GEN_DIR}/${f} ${SAMPLES}/${f}
                  RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    string(APPEND fail "  ${f}: regenerated ${GEN_DIR}/${f} differs from ${SAMPLES}/${f}\n")
  endif()
endforeach()
if(fail)
  message(FATAL_ERROR "samples drifted from gen_samples (rerun it into samples/ and review):\n${fail}")
endif()
