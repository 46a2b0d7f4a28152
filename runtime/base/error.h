//===- error.h - Runtime errors and checked-call helpers -----------------===//
//
// Errors are C++ exceptions inside the runtime; the driver catches them at the
// top of main() and prints exactly one "error: ..." line. Nothing escapes.
//
//===----------------------------------------------------------------------===//
#ifndef LMC_RUNTIME_ERROR_H
#define LMC_RUNTIME_ERROR_H

#include <sstream>
#include <stdexcept>
#include <string>

namespace lmc::rt {

/// A problem the user can fix (bad file, bad flag value, ...). Exit code 1.
class Error : public std::runtime_error {
public:
  explicit Error(const std::string &message) : std::runtime_error(message) {}
};

/// A command-line usage problem. Exit code 2.
class UsageError : public Error {
public:
  explicit UsageError(const std::string &message) : Error(message) {}
};

/// Concatenates anything streamable into one string.
template <typename... Args> std::string concat(const Args &...args) {
  std::ostringstream os;
  (os << ... << args);
  return os.str();
}

/// "runtime/io/npy.cpp:42" from __FILE__/__LINE__ (path shortened to the
/// part under the source tree so messages do not leak build directories).
std::string sourceLocation(const char *file, int line);

/// Builds "<what>: <strerror(errnum)> [file:line]".
std::string systemErrorMessage(const std::string &what, int errnum,
                               const char *file, int line);

} // namespace lmc::rt

/// Throws lmc::rt::Error with the concatenated message if cond is false.
#define LMC_CHECK(cond, ...)                                                   \
  do {                                                                         \
    if (!(cond))                                                               \
      throw ::lmc::rt::Error(::lmc::rt::concat(__VA_ARGS__));                  \
  } while (0)

/// For stdio/POSIX calls that set errno: throws with strerror and the runtime
/// source location, e.g. "cannot open 'x.npy': No such file ... [npy.cpp:12]".
#define LMC_CHECK_SYS(cond, ...)                                               \
  do {                                                                         \
    if (!(cond)) {                                                             \
      int lmcSavedErrno = errno;                                               \
      throw ::lmc::rt::Error(::lmc::rt::systemErrorMessage(                    \
          ::lmc::rt::concat(__VA_ARGS__), lmcSavedErrno, __FILE__, __LINE__)); \
    }                                                                          \
  } while (0)

#endif // LMC_RUNTIME_ERROR_H
