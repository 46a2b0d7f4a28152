# Hardening builds of lmc's own code (docs/security.md):
#
#   -DLMC_SANITIZE=address,undefined   sanitizers for the compiler libraries,
#       the tools, the runtime and the training executables lmc links (their
#       link line gets the same -fsanitize flags). scripts/sanitize.sh.
#   -DLMC_ENABLE_FUZZERS=ON            libFuzzer targets in test/fuzz (clang;
#       implies coverage instrumentation plus ASan/UBSan). scripts/fuzz.sh.
#
# LLVM/MLIR are prebuilt shared libraries and stay uninstrumented.

set(LMC_SANITIZE "" CACHE STRING
    "Comma-separated sanitizers for lmc's code (e.g. address,undefined)")
option(LMC_ENABLE_FUZZERS "Build the libFuzzer targets in test/fuzz (clang)" OFF)

set(_lmc_sanitize "${LMC_SANITIZE}")
if(LMC_ENABLE_FUZZERS)
  if(NOT CMAKE_CXX_COMPILER_ID MATCHES "Clang")
    message(FATAL_ERROR "LMC_ENABLE_FUZZERS needs clang (libFuzzer); "
                        "configure with -DCMAKE_CXX_COMPILER=clang++-14")
  endif()
  if(NOT _lmc_sanitize)
    set(_lmc_sanitize "address,undefined")
  endif()
  add_compile_options(-fsanitize=fuzzer-no-link)
  add_compile_definitions(LMC_FUZZING=1)
endif()

if(_lmc_sanitize)
  set(_lmc_sanitize_flags "-fsanitize=${_lmc_sanitize}")
  # The compiler libraries build without RTTI (like LLVM), which the vptr
  # check needs; every other UB check stays on and is fatal.
  if(_lmc_sanitize MATCHES "undefined")
    list(APPEND _lmc_sanitize_flags -fno-sanitize=vptr
         -fno-sanitize-recover=undefined)
  endif()
  add_compile_options(${_lmc_sanitize_flags} -fno-omit-frame-pointer -g)
  add_link_options(${_lmc_sanitize_flags})
  # lib/Driver links training executables against the sanitized runtime.
  add_compile_definitions("LMC_SANITIZE_LINK_FLAG=\"-fsanitize=${_lmc_sanitize}\"")
  message(STATUS "lmc: sanitizers ${_lmc_sanitize}")
endif()
