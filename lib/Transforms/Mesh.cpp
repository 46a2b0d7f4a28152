//===- Mesh.cpp - The --mesh option's process mesh ----------------------===//

#include "lmc/Transforms/Mesh.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringSet.h"

using namespace mlir;

namespace lmc {

FailureOr<Mesh> parseMesh(StringRef spec, llvm::raw_ostream &error) {
  Mesh mesh;
  llvm::StringSet<> seen;
  SmallVector<StringRef> parts;
  spec.split(parts, ',');
  for (StringRef part : parts) {
    auto [name, size] = part.trim().split('=');
    name = name.trim();
    int64_t value = 0;
    if ((name != "data" && name != "model") ||
        size.trim().getAsInteger(10, value) || value < 1) {
      error << "--mesh '" << spec
            << "': expected data=N and/or model=M (N, M >= 1), got '" << part
            << "'";
      return failure();
    }
    if (!seen.insert(name).second) {
      error << "--mesh '" << spec << "' names '" << name << "' twice";
      return failure();
    }
    (name == "data" ? mesh.data : mesh.model) = value;
  }
  return mesh;
}

} // namespace lmc
