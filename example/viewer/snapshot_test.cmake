# A run with --snapshot computes the same checksum and live objects as
# without, and writes one valid PNG per frame (steps 0, EVERY, 2 EVERY, ...,
# STEPS) of WIDTH x HEIGHT pixels, named so that they sort by step.
# cmake -DPROGRAM=... -DARGS=a|b|c -DSTEPS=.. -DEVERY=.. -DWIDTH=.. -DHEIGHT=.. -DPNG_INFO=... -DDIR=... -P snapshot_test.cmake
string(REPLACE "|" ";" args "${ARGS}")
file(REMOVE_RECURSE "${DIR}")

execute_process(COMMAND "${PROGRAM}" ${args} --json --quiet RESULT_VARIABLE rc OUTPUT_VARIABLE plain)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "the run without --snapshot failed (${rc}): ${plain}")
endif()
string(JSON checksum GET "${plain}" checksum)
string(JSON live GET "${plain}" live)

# --expect: the program's own comparison (n-body's floating-point checksum
# with a tolerance far below what a changed state would move it by).
execute_process(COMMAND "${PROGRAM}" ${args} --json --quiet --snapshot "${DIR}" --every ${EVERY}
                        --expect ${checksum} --rtol 1e-7
                RESULT_VARIABLE rc OUTPUT_VARIABLE snapped ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "the run with --snapshot failed (${rc}) or computed another checksum than ${checksum}: ${err}")
endif()
string(JSON live_snapped GET "${snapped}" live)
if(NOT live STREQUAL live_snapped)
  message(FATAL_ERROR "live objects differ: ${live} without --snapshot, ${live_snapped} with")
endif()

string(JSON example GET "${plain}" example)
file(GLOB files RELATIVE "${DIR}" "${DIR}/*.png")
list(SORT files)
set(expected)
foreach(step RANGE 0 ${STEPS} ${EVERY})
  string(LENGTH "${step}" digits)
  math(EXPR pad "6 - ${digits}")
  string(REPEAT "0" ${pad} zeros)
  list(APPEND expected "${zeros}${step}")
endforeach()
list(LENGTH files count)
list(LENGTH expected want)
if(NOT count EQUAL want)
  message(FATAL_ERROR "${count} PNG files in ${DIR}, not ${want}: ${files}")
endif()
foreach(file number IN ZIP_LISTS files expected)
  if(NOT file MATCHES "^[a-z]+_${number}\\.png$")
    message(FATAL_ERROR "${file}: expected a name ending in _${number}.png (${example})")
  endif()
endforeach()

list(TRANSFORM files PREPEND "${DIR}/")
execute_process(COMMAND "${PNG_INFO}" ${files} RESULT_VARIABLE rc OUTPUT_VARIABLE sizes ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "not a valid PNG: ${err}")
endif()
string(REGEX MATCHALL "[^\n]+" sizes "${sizes}")
foreach(size IN LISTS sizes)
  if(NOT size STREQUAL "${WIDTH} ${HEIGHT}")
    message(FATAL_ERROR "a snapshot is ${size} pixels, not ${WIDTH} ${HEIGHT}")
  endif()
endforeach()
message(STATUS "${count} snapshots of ${WIDTH}x${HEIGHT}, checksum ${checksum}, live ${live} as without --snapshot")
