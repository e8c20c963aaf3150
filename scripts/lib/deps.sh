# Sourced by scripts/test.sh and scripts/demo.sh: makes sure the build's
# prerequisites are installed before anything is configured.
#
#   ensure_deps cmake g++ make python3 libcli11-dev ...
#
# Each name is a Debian package; a probe (a command, a header or a CMake
# package file) decides whether what it provides is already there, however it
# was installed. Missing ones are installed with apt-get when running as root;
# otherwise one message lists them all with the single command that installs
# them, and the script exits 1. The CUDA Toolkit is not installed here: without
# nvcc the CUDA parts are skipped and say so.

# deps_have <package>: 0 if what the package provides is present.
deps_have() {
  local cmake_dirs=(/usr/lib/x86_64-linux-gnu/cmake /usr/lib/aarch64-linux-gnu/cmake /usr/lib/cmake
                    /usr/share/cmake /usr/local/lib/cmake /usr/local/share/cmake)
  local d
  case "$1" in
    cmake) command -v cmake >/dev/null ;;
    g++) command -v g++ >/dev/null || command -v c++ >/dev/null ;;
    make) command -v make >/dev/null || command -v ninja >/dev/null ;;
    python3) command -v python3 >/dev/null ;;
    doxygen) command -v doxygen >/dev/null ;;
    libgtest-dev)
      for d in "${cmake_dirs[@]}"; do [[ -f $d/GTest/GTestConfig.cmake ]] && return 0; done
      return 1
      ;;
    libcli11-dev)
      for d in "${cmake_dirs[@]}"; do [[ -f $d/CLI11/CLI11Config.cmake ]] && return 0; done
      return 1
      ;;
    libpng-dev) [[ -f /usr/include/png.h || -f /usr/local/include/png.h ]] ;;
    libsdl2-dev)
      for d in "${cmake_dirs[@]}"; do [[ -f $d/SDL2/sdl2-config.cmake || -f $d/SDL2/SDL2Config.cmake ]] && return 0; done
      return 1
      ;;
    *) dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed" ;;
  esac
}

# CMake >= 3.24 (what the build asks for); an older one is reported with where
# to get a newer one, since apt-get may not have one.
deps_check_cmake_version() {
  command -v cmake >/dev/null || return 0
  local v major minor
  v=$(cmake --version | sed -n 's/^cmake version \([0-9]*\)\.\([0-9]*\).*/\1 \2/p')
  read -r major minor <<<"$v"
  if ! ((major > 3 || (major == 3 && minor >= 24))); then
    echo "error: cmake ${major}.${minor} is installed; the build needs 3.24 or newer." >&2
    echo "Install a newer one, e.g. with: python3 -m pip install 'cmake>=3.24'" >&2
    exit 1
  fi
}

ensure_deps() {
  local missing=() p
  for p in "$@"; do deps_have "$p" || missing+=("$p"); done
  if ((${#missing[@]} == 0)); then
    deps_check_cmake_version
    return 0
  fi
  if [[ $(id -u) -eq 0 ]] && command -v apt-get >/dev/null; then
    echo "installing what this machine lacks: ${missing[*]}"
    DEBIAN_FRONTEND=noninteractive apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
    for p in "${missing[@]}"; do
      deps_have "$p" || { echo "error: $p is still missing after apt-get install" >&2; exit 1; }
    done
    deps_check_cmake_version
    return 0
  fi
  if ! command -v apt-get >/dev/null; then
    echo "error: this machine lacks ${missing[*]} (Debian package names); install them with its package manager." >&2
    exit 1
  fi
  {
    echo "error: this machine lacks ${missing[*]}."
    echo "Install them with this one command, then run $(basename "$0") again:"
    echo
    echo "    sudo apt-get install -y ${missing[*]}"
  } >&2
  exit 1
}

# CMake's default generator needs make; a machine with only ninja uses ninja.
if ! command -v make >/dev/null && command -v ninja >/dev/null && [[ -z ${CMAKE_GENERATOR:-} ]]; then
  export CMAKE_GENERATOR=Ninja
fi

# Puts a CUDA Toolkit's nvcc on PATH if one is installed in the usual place.
find_nvcc() {
  command -v nvcc >/dev/null && return 0
  [[ -x /usr/local/cuda/bin/nvcc ]] && { export PATH=/usr/local/cuda/bin:$PATH; return 0; }
  return 1
}
