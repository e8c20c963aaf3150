# cmake -DMODE=package|subdirectory -DLANGUAGE=cuda|host [-DCASE=<case>] -DSOURCE=<dynasoar source>
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
#
# CASE varies the project to check the set-ups a newcomer meets:
#   recipe (default)  configured without a build type, as a user would: the
#                     app compiles optimised and with one -std flag, C++20, and
#                     the configure output names the build chosen (CUDA or host).
#   no_build_type     the recipe without its default build type: configuring
#                     warns that the program builds without optimisation.
#   cuda_not_enabled  host only: DYNASOAR_ENABLE_CUDA=ON in a project that has not
#                     enabled CUDA: configuring fails with the lines to add.
#   cxx20             cuda only: CMAKE_CXX_STANDARD 20 and CMAKE_CXX_STANDARD_REQUIRED ON
#                     set by the project, which CMake 3.25 alone cannot generate
#                     for CUDA sources; subdirectory also builds a small app.
# Only recipe (and cxx20 through add_subdirectory) builds; the others configure.
# Any failing step fails the test.
foreach(var MODE LANGUAGE SOURCE BUILD WORK)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "run_consumer.cmake: -D${var}=... is required")
  endif()
endforeach()
if(NOT DEFINED CASE)
  set(CASE recipe)
endif()
if(NOT CASE MATCHES "^(recipe|no_build_type|cuda_not_enabled|cxx20)$")
  message(FATAL_ERROR "CASE must be recipe, no_build_type, cuda_not_enabled or cxx20, not '${CASE}'")
endif()
# CMake takes a build type from the environment where none is given; the
# cases test the recipe's default and its absence, whatever the environment.
unset(ENV{CMAKE_BUILD_TYPE})

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

# expect(<text> <what>...): each <what> occurs in <text>; else fail, saying <why> first.
function(expect text why)
  foreach(what IN LISTS ARGN)
    string(FIND "${text}" "${what}" at)
    if(at EQUAL -1)
      message(FATAL_ERROR "${why}: the configure output does not say '${what}'")
    endif()
  endforeach()
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
if((CASE STREQUAL "cuda_not_enabled" AND LANGUAGE STREQUAL "cuda") OR
   (CASE STREQUAL "cxx20" AND LANGUAGE STREQUAL "host"))
  message(FATAL_ERROR "CASE ${CASE} does not apply to LANGUAGE ${LANGUAGE}")
endif()
if(CASE STREQUAL "cxx20")
  # Where a project sets them: after project(), before it adds the framework.
  replace(recipe "\nadd_subdirectory(dynasoar)"
          "\nset(CMAKE_CXX_STANDARD 20)\nset(CMAKE_CXX_STANDARD_REQUIRED ON)\nadd_subdirectory(dynasoar)")
endif()
# No build type: the recipe's own default is what a user gets.
set(args -DCMAKE_EXPORT_COMPILE_COMMANDS=ON)
if(LANGUAGE STREQUAL "cuda")
  list(APPEND args -DCMAKE_CUDA_COMPILER=${CUDA_COMPILER} -DCMAKE_CUDA_ARCHITECTURES=${CUDA_ARCHITECTURES})
endif()
if(MODE STREQUAL "package")
  set(command "find_package(dynasoar)")
  replace(recipe "add_subdirectory(dynasoar)" "find_package(dynasoar REQUIRED)")
  run(${CMAKE_COMMAND} --install ${BUILD} --prefix ${WORK}/install)
  list(APPEND args -DCMAKE_PREFIX_PATH=${WORK}/install)
elseif(MODE STREQUAL "subdirectory")
  set(command "add_subdirectory(dynasoar)")
  file(MAKE_DIRECTORY ${WORK}/src)
  file(CREATE_LINK ${SOURCE} ${WORK}/src/dynasoar SYMBOLIC)
else()
  message(FATAL_ERROR "MODE must be package or subdirectory, not '${MODE}'")
endif()
# A second file that includes the framework, linked into the same program: a
# definition in a header that is not inline (or a template) is then defined
# twice, and the link fails here rather than in a user's project.
if(NOT CASE STREQUAL "cxx20")
  string(REPLACE "app." "second_unit." second ${app})
  replace(recipe "add_executable(app ${app})" "add_executable(app ${app} ${second})")
  file(WRITE ${WORK}/src/${second} "#include <dynasoar/dynasoar.h>\nint dynasoar_second_unit() { return 0; }\n")
endif()

if(CASE STREQUAL "no_build_type")
  replace(recipe "if(NOT DEFINED ENV{CMAKE_BUILD_TYPE})\n  set(CMAKE_BUILD_TYPE Release CACHE STRING \"Build type\")\nendif()\n" "")
elseif(CASE STREQUAL "cuda_not_enabled")
  list(APPEND args -DDYNASOAR_ENABLE_CUDA=ON)
endif()
file(WRITE ${WORK}/src/CMakeLists.txt "${recipe}")
if(CASE STREQUAL "cxx20")
  # The point is the configuration; one small file keeps the extra CUDA build short.
  file(WRITE ${WORK}/src/${app} "#include <dynasoar/dynasoar.h>\nint main() { return 0; }\n")
else()
  configure_file(${SOURCE}/test/consumer/consumer.cpp ${WORK}/src/${app} COPYONLY)
endif()

# Configure; the output is shown, and matched with its white space folded,
# since CMake wraps the lines of a warning or error.
execute_process(COMMAND ${CMAKE_COMMAND} -S ${WORK}/src -B ${WORK}/build ${args}
                RESULT_VARIABLE rc OUTPUT_VARIABLE output ERROR_VARIABLE output)
message("${output}")
string(REGEX REPLACE "[ \t\r\n]+" " " output "${output}")
set(empty_build_type "dynasoar: CMAKE_BUILD_TYPE is empty, so the program builds without optimisation")
if(CASE STREQUAL "cuda_not_enabled")
  if(rc EQUAL 0)
    message(FATAL_ERROR "DYNASOAR_ENABLE_CUDA=ON without CUDA enabled: configuring succeeded, it must fail")
  endif()
  expect("${output}" "DYNASOAR_ENABLE_CUDA=ON without CUDA enabled"
         "DYNASOAR_ENABLE_CUDA is ON, but the project has not enabled the CUDA language"
         "project(app LANGUAGES CXX CUDA)" "enable_language(CUDA) before ${command}")
  return()
endif()
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "failed (${rc}): configuring the consumer project")
endif()
if(CASE STREQUAL "no_build_type")
  expect("${output}" "no build type" "${empty_build_type}")
  return()
endif()
string(FIND "${output}" "${empty_build_type}" at)
if(NOT at EQUAL -1)
  message(FATAL_ERROR "the recipe's default build type did not reach the configure step")
endif()
if(LANGUAGE STREQUAL "cuda")
  expect("${output}" "the build chosen" "dynasoar: CUDA build")
else()
  expect("${output}" "the build chosen" "dynasoar: host build")
endif()

# The app's compile command: optimised, and one language standard, C++20.
file(READ ${WORK}/build/compile_commands.json commands)
string(JSON count LENGTH "${commands}")
math(EXPR last "${count} - 1")
set(app_command)
foreach(i RANGE ${last})
  string(JSON file GET "${commands}" ${i} file)
  if(file MATCHES "/${app}$")
    string(JSON app_command GET "${commands}" ${i} command)
  endif()
endforeach()
if(NOT app_command)
  message(FATAL_ERROR "no compile command for ${app} in ${WORK}/build/compile_commands.json")
endif()
if(NOT app_command MATCHES " -O[1-3s]( |$)")
  message(FATAL_ERROR "${app} compiles without optimisation: ${app_command}")
endif()
string(REGEX MATCHALL " -std=[^ ]+" standards "${app_command}")
if(NOT standards MATCHES "^ -std=(c|gnu)\\+\\+20$")
  message(FATAL_ERROR "${app} must compile with one -std flag, C++20: ${app_command}")
endif()

if(CASE STREQUAL "cxx20" AND MODE STREQUAL "package")
  return()  # configured with one -std flag: the build is consumer.cuda.subdirectory.cxx20's
endif()
run(${CMAKE_COMMAND} --build ${WORK}/build --parallel 2)
if(MODE STREQUAL "subdirectory" AND EXISTS ${WORK}/build/dynasoar/test)
  message(FATAL_ERROR "dynasoar as a subdirectory must not build its tests, benchmarks or examples")
endif()
if(CASE STREQUAL "cxx20")
  return()
endif()
if(LANGUAGE STREQUAL "cuda")
  execute_process(COMMAND nvidia-smi -L RESULT_VARIABLE no_gpu OUTPUT_QUIET ERROR_QUIET)
  if(NOT no_gpu EQUAL 0)
    message(STATUS "consumer (${MODE}, CUDA): compiled; not run (no GPU on this machine)")
    return()
  endif()
endif()
run(${WORK}/build/app)
