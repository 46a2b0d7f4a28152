//===- launcher_error_file.h - The failure as torchrun's summary reads it -===//
//
// torchrun gives each worker a TORCHELASTIC_ERROR_FILE; a worker that fails
// writes its error there as JSON, and the summary torchrun prints at the
// end names the first failure's message ("root cause") instead of
// "exitcode 1". The format is what PyTorch's ErrorHandler.record_exception
// writes and torch.distributed.elastic.multiprocessing.errors reads:
//   {"message": {"message": "...", "extraInfo": {"timestamp": "<seconds>"}}}
// (torchrun shows extraInfo.py_callstack when there is one, else message).
//
//===----------------------------------------------------------------------===//
#ifndef LMC_RUNTIME_LAUNCHER_ERROR_FILE_H
#define LMC_RUNTIME_LAUNCHER_ERROR_FILE_H

#include <cstdint>
#include <string>

namespace lmc::rt {

/// The file's text for `message`, failed at `unixSeconds`.
std::string launcherErrorJson(const std::string &message, int64_t unixSeconds);

/// Writes `message` to the file TORCHELASTIC_ERROR_FILE names, if any.
/// Never throws: it runs while an error is being reported (a file that
/// cannot be written is said on stderr).
void writeLauncherErrorFile(const std::string &message);

} // namespace lmc::rt

#endif // LMC_RUNTIME_LAUNCHER_ERROR_FILE_H
