# NVLink multicast stays off: no file under include/, example/, tools/,
# bench/ (but its records of runs) or scripts/ may set NCCL_NVLS_ENABLE (in any language: an
# assignment, setenv, putenv, an environment table) or call cuMulticastCreate.
# A program that uses multicast can put a machine's GPUs out of service.
#   cmake -DSOURCE=<repository root> -P no_multicast_check.cmake
#   cmake -DSELF_TEST=ON -DWORK=<scratch directory> -P no_multicast_check.cmake
# The self test writes files that break the rule and expects each to be found.
cmake_minimum_required(VERSION 3.24)

set(_forbidden
    "NCCL_NVLS_ENABLE[\"' \t]*[:=]"          # shell, env, C strings, Python dicts, YAML
    "(setenv|putenv|setdefault)[ \t]*\\([^)]*NCCL_NVLS_ENABLE"
    "set[ \t]*\\([ \t]*ENV[ \t]*\\{[ \t]*NCCL_NVLS_ENABLE"  # CMake
    "environ[^\n]*NCCL_NVLS_ENABLE[^\n]*="
    "cuMulticastCreate")

# Sets <out> to "<file>: <text>" for every line of <files> that matches.
# Whole files are searched (a line may hold semicolons, which CMake lists split).
function(find_offences out root)
  set(found "")
  foreach(file IN LISTS ARGN)
    file(READ "${file}" text)
    foreach(pattern IN LISTS _forbidden)
      string(REGEX MATCHALL "[^\n]*${pattern}[^\n]*" hits "${text}")
      if(hits)
        file(RELATIVE_PATH name "${root}" "${file}")
        string(APPEND found "${name}: ${hits}\n")
      endif()
    endforeach()
  endforeach()
  set(${out} "${found}" PARENT_SCOPE)
endfunction()

if(SELF_TEST)
  set(dir "${WORK}/no_multicast_self_test")
  file(REMOVE_RECURSE "${dir}")
  set(bad
      "export NCCL_NVLS_ENABLE=1"
      "NCCL_NVLS_ENABLE=1 ./program"
      "setenv(\"NCCL_NVLS_ENABLE\", \"1\", 1)"
      "putenv(const_cast<char*>(\"NCCL_NVLS_ENABLE=1\"))"
      "set(ENV{NCCL_NVLS_ENABLE} 1)"
      "os.environ[\"NCCL_NVLS_ENABLE\"] = \"1\""
      "env = {\"NCCL_NVLS_ENABLE\": \"1\"}"
      "CUresult r = cuMulticastCreate(&handle, &prop)")
  set(index 0)
  foreach(text IN LISTS bad)
    file(WRITE "${dir}/bad${index}.txt" "// fine\n${text}\n")
    find_offences(found "${dir}" "${dir}/bad${index}.txt")
    if(found STREQUAL "")
      message(FATAL_ERROR "no_multicast_check: the line '${text}' was not found")
    endif()
    math(EXPR index "${index} + 1")
  endforeach()
  file(WRITE "${dir}/good.txt" "// Reads NCCL_NVLS_ENABLE, never sets it.\nconst char* v = getenv(\"NCCL_NVLS_ENABLE\")\nif($ENV{NCCL_NVLS_ENABLE})\n")
  find_offences(found "${dir}" "${dir}/good.txt")
  if(NOT found STREQUAL "")
    message(FATAL_ERROR "no_multicast_check: reading the variable was taken for setting it:\n${found}")
  endif()
  file(REMOVE_RECURSE "${dir}")
  message(STATUS "no_multicast_check: ${index} offending lines found, a harmless one left alone")
  return()
endif()

set(files "")
foreach(top include example tools bench scripts)
  file(GLOB_RECURSE some LIST_DIRECTORIES false "${SOURCE}/${top}/*")
  list(APPEND files ${some})
endforeach()
# Text files only: pictures and data say nothing of the environment. The
# records of runs (bench/results/) quote the machines' settings; they run nothing.
list(FILTER files EXCLUDE REGEX "\\.(png|jpg|gif|bin|ckpt|gz|pdf)$")
list(FILTER files EXCLUDE REGEX "/bench/results/")
list(LENGTH files count)
find_offences(found "${SOURCE}" ${files})
if(NOT found STREQUAL "")
  message(FATAL_ERROR "NVLink multicast must stay off: these lines set NCCL_NVLS_ENABLE or call "
                      "cuMulticastCreate (../shared/guide/GPU.md, \"Several GPUs\"):\n${found}")
endif()
message(STATUS "no_multicast_check: ${count} files checked, none sets NCCL_NVLS_ENABLE or calls cuMulticastCreate")
