//===- Mesh.h - The --mesh option's process mesh ------------------------===//
#ifndef LMC_TRANSFORMS_MESH_H
#define LMC_TRANSFORMS_MESH_H

#include "mlir/Support/LLVM.h"

#include "llvm/Support/raw_ostream.h"

#include <cstdint>

namespace lmc {

/// `--mesh data=D,model=M` (either may be absent: 1).
struct Mesh {
  int64_t data = 1;
  int64_t model = 1;
};

/// Parses a --mesh value; on failure writes why to `error`.
mlir::FailureOr<Mesh> parseMesh(llvm::StringRef spec, llvm::raw_ostream &error);

} // namespace lmc

#endif // LMC_TRANSFORMS_MESH_H
