# cmake -DBUILD=<build dir> -DTARGET=<target> -DSOURCE=<compile_fail/*.cpp> -P check.cmake
#
# Builds a program that must not compile and checks what the compiler says:
# the build fails, every `// expect: REGEX` line of the source matches its
# output, and no `// reject: REGEX` line does (an error from deep inside the
# library, which an early check is there to spare). A script rather than
# ctest's PASS_REGULAR_EXPRESSION, so that a test can ask for several facts
# (a message and the class it names) without one regular expression that
# spans lines, which CMake's engine matches slowly on nvcc's long output.
foreach(var BUILD TARGET SOURCE)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "check.cmake: -D${var}=... is required")
  endif()
endforeach()
execute_process(COMMAND ${CMAKE_COMMAND} --build ${BUILD} --target ${TARGET}
                OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc)
set(out "${out}${err}")
if(rc EQUAL 0)
  message(FATAL_ERROR "${TARGET} compiled, but it must not:\n${out}")
endif()
file(STRINGS ${SOURCE} expects REGEX "^// expect: ")
file(STRINGS ${SOURCE} rejects REGEX "^// reject: ")
if(NOT expects)
  message(FATAL_ERROR "${SOURCE} has no `// expect: REGEX` line")
endif()
foreach(line IN LISTS expects)
  string(REGEX REPLACE "^// expect: " "" regex "${line}")
  if(NOT out MATCHES "${regex}")
    message(FATAL_ERROR "the compiler's output lacks /${regex}/:\n${out}")
  endif()
endforeach()
foreach(line IN LISTS rejects)
  string(REGEX REPLACE "^// reject: " "" regex "${line}")
  if(out MATCHES "${regex}")
    message(FATAL_ERROR "the compiler's output has /${regex}/, which the library's early check should spare:\n${out}")
  endif()
endforeach()
message(STATUS "${TARGET}: failed to compile, with the expected message")
