# cmake -DMODE=package|subdirectory -DLANGUAGE=cuda|host -DSOURCE=<dynasoar source>
#       -DBUILD=<dynasoar build> -DWORK=<scratch dir> [-DCUDA_COMPILER=... -DCUDA_ARCHITECTURES=...]
#       -P run_consumer.cmake
#
# Builds a project exactly as the README tells a user to write it
# (recipe.cmake, the README's snippet), with consumer.cpp as its app.cu or
# app.cpp and a second file that includes the framework too, and runs it:
#   subdirectory: the project's source holds dynasoar (a link to SOURCE) and adds it;
#   package:      BUILD is installed into WORK/install and found with find_package.
# host: the recipe without CUDA. cuda: the recipe as written; the app runs only
# where a GPU is present (otherwise this says that it compiled and was not run).
# Any failing step fails the test.
foreach(var MODE LANGUAGE SOURCE BUILD WORK)
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

# replace(<var> <from> <to>): in the recipe's text; the recipe must contain <from>.
function(replace var from to)
  string(FIND "${${var}}" "${from}" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "run_consumer.cmake: the README recipe no longer contains '${from}'; update this test")
  endif()
  string(REPLACE "${from}" "${to}" out "${${var}}")
  set(${var} "${out}" PARENT_SCOPE)
endfunction()

file(REMOVE_RECURSE ${WORK})
file(READ ${SOURCE}/test/consumer/recipe.cmake recipe)
set(app app.cu)
if(LANGUAGE STREQUAL "host")
  replace(recipe "LANGUAGES CXX CUDA" "LANGUAGES CXX")
  replace(recipe "add_executable(app app.cu)" "add_executable(app app.cpp)")
  set(app app.cpp)
elseif(NOT LANGUAGE STREQUAL "cuda")
  message(FATAL_ERROR "LANGUAGE must be cuda or host, not '${LANGUAGE}'")
endif()
set(args -DCMAKE_BUILD_TYPE=Release)
if(LANGUAGE STREQUAL "cuda")
  list(APPEND args -DCMAKE_CUDA_COMPILER=${CUDA_COMPILER} -DCMAKE_CUDA_ARCHITECTURES=${CUDA_ARCHITECTURES})
endif()
if(MODE STREQUAL "package")
  replace(recipe "add_subdirectory(dynasoar)" "find_package(dynasoar REQUIRED)")
  run(${CMAKE_COMMAND} --install ${BUILD} --prefix ${WORK}/install)
  list(APPEND args -DCMAKE_PREFIX_PATH=${WORK}/install)
elseif(MODE STREQUAL "subdirectory")
  file(MAKE_DIRECTORY ${WORK}/src)
  file(CREATE_LINK ${SOURCE} ${WORK}/src/dynasoar SYMBOLIC)
else()
  message(FATAL_ERROR "MODE must be package or subdirectory, not '${MODE}'")
endif()
# A second file that includes the framework, linked into the same program: a
# definition in a header that is not inline (or a template) is then defined
# twice, and the link fails here rather than in a user's project.
string(REPLACE "app." "second_unit." second ${app})
replace(recipe "add_executable(app ${app})" "add_executable(app ${app} ${second})")
file(WRITE ${WORK}/src/${second} "#include <dynasoar/dynasoar.h>\nint dynasoar_second_unit() { return 0; }\n")
file(WRITE ${WORK}/src/CMakeLists.txt "${recipe}")
configure_file(${SOURCE}/test/consumer/consumer.cpp ${WORK}/src/${app} COPYONLY)

run(${CMAKE_COMMAND} -S ${WORK}/src -B ${WORK}/build ${args})
run(${CMAKE_COMMAND} --build ${WORK}/build)
if(MODE STREQUAL "subdirectory" AND EXISTS ${WORK}/build/dynasoar/test)
  message(FATAL_ERROR "dynasoar as a subdirectory must not build its tests, benchmarks or examples")
endif()
if(LANGUAGE STREQUAL "cuda")
  execute_process(COMMAND nvidia-smi -L RESULT_VARIABLE no_gpu OUTPUT_QUIET ERROR_QUIET)
  if(NOT no_gpu EQUAL 0)
    message(STATUS "consumer (${MODE}, CUDA): compiled; not run (no GPU on this machine)")
    return()
  endif()
endif()
run(${WORK}/build/app)
