# cmake -DMODE=package|subdirectory -DSOURCE=<dynasoar source> -DBUILD=<dynasoar build>
#       -DWORK=<scratch dir> -P run_consumer.cmake
# package: installs BUILD into WORK/install, then builds test/consumer against it with
# find_package. subdirectory: builds test/consumer with add_subdirectory(SOURCE).
# Either way runs the consumer; any failing step fails the test.
foreach(var MODE SOURCE BUILD WORK)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "run_consumer.cmake: -D${var}=... is required")
  endif()
endforeach()

function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    string(REPLACE ";" " " cmd "${ARGN}")
    message(FATAL_ERROR "failed (${rc}): ${cmd}")
  endif()
endfunction()

file(REMOVE_RECURSE ${WORK})
set(args -DDYNASOAR_CONSUMER_MODE=${MODE} -DCMAKE_BUILD_TYPE=Release)
if(MODE STREQUAL "package")
  run(${CMAKE_COMMAND} --install ${BUILD} --prefix ${WORK}/install)
  list(APPEND args -DCMAKE_PREFIX_PATH=${WORK}/install)
else()
  list(APPEND args -DDYNASOAR_SOURCE_DIR=${SOURCE})
endif()
run(${CMAKE_COMMAND} -S ${SOURCE}/test/consumer -B ${WORK}/build ${args})
run(${CMAKE_COMMAND} --build ${WORK}/build)
run(${WORK}/build/consumer)
