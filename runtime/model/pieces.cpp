//===- pieces.cpp - Fused parameters files hold whole --------------------===//

#include "model/pieces.h"

#include "base/error.h"

#include <cstring>
#include <map>
#include <optional>

namespace lmc::rt {

namespace {

/// What follows `tensor` in `name` when `name` is `tensor` ("") or its
/// optimizer state `<tensor>.<slot>` (".<slot>").
std::optional<std::string> suffixAfter(const std::string &name,
                                       const std::string &tensor) {
  if (name.compare(0, tensor.size(), tensor) != 0 ||
      (name.size() != tensor.size() && name[tensor.size()] != '.'))
    return std::nullopt;
  return name.substr(tensor.size());
}

/// `name` as a piece's tensor: its join, the piece's index, and the suffix
/// the fused tensor's name takes too.
struct PieceOf {
  const Join *join;
  size_t index;
  std::string suffix; // "" or ".<slot>"
};

std::optional<PieceOf> pieceOf(const std::string &name,
                               const std::vector<Join> &joins) {
  for (const Join &join : joins)
    for (size_t i = 0; i < join.pieces.size(); ++i)
      if (std::optional<std::string> suffix = suffixAfter(name, join.pieces[i]))
        return PieceOf{&join, i, *suffix};
  return std::nullopt;
}

} // namespace

void addPieceEntries(SafetensorsFile &file, const std::vector<Join> &joins) {
  std::vector<SafetensorsTensor> entries;
  for (const SafetensorsTensor &tensor : file.tensors)
    for (const Join &join : joins) {
      std::optional<std::string> suffix = suffixAfter(tensor.name, join.name);
      const size_t pieces = join.pieces.size();
      if (!suffix || tensor.shape.empty() ||
          tensor.shape[0] % int64_t(pieces) != 0)
        continue;
      const size_t bytes = (tensor.end - tensor.begin) / pieces;
      for (size_t i = 0; i < pieces; ++i) {
        SafetensorsTensor piece = tensor;
        piece.name = join.pieces[i] + *suffix;
        piece.shape[0] /= int64_t(pieces);
        piece.begin = tensor.begin + i * bytes;
        piece.end = piece.begin + bytes;
        entries.push_back(std::move(piece));
      }
    }
  file.tensors.insert(file.tensors.end(), entries.begin(), entries.end());
}

std::vector<TensorView> joinPieces(const std::vector<TensorView> &tensors,
                                   const std::vector<Join> &joins,
                                   std::vector<AlignedBuffer> &storage) {
  if (joins.empty())
    return tensors;
  // Each view's piece (if it is one), and each fused tensor's pieces by
  // fused name + suffix.
  std::vector<std::optional<PieceOf>> pieceOfView;
  std::map<std::string, std::vector<const TensorView *>> found;
  for (const TensorView &view : tensors) {
    std::optional<PieceOf> &piece =
        pieceOfView.emplace_back(pieceOf(view.name, joins));
    if (!piece)
      continue;
    auto &slots = found[piece->join->name + piece->suffix];
    slots.resize(piece->join->pieces.size());
    slots[piece->index] = &view;
  }
  std::vector<TensorView> joined;
  for (size_t v = 0; v < tensors.size(); ++v) {
    const std::optional<PieceOf> &piece = pieceOfView[v];
    if (!piece) {
      joined.push_back(tensors[v]);
      continue;
    }
    if (piece->index != 0)
      continue; // joined at the first piece
    const std::string name = piece->join->name + piece->suffix;
    const std::vector<const TensorView *> &parts = found[name];
    TensorView whole{name, tensors[v].dtype, tensors[v].shape, nullptr};
    whole.shape[0] = 0;
    for (const TensorView *part : parts) {
      LMC_CHECK(part, "internal error: a piece of '", name, "' is missing");
      whole.shape[0] += part->shape[0];
    }
    const size_t partBytes =
        size_t(numElements(tensors[v].shape)) * dtypeSize(tensors[v].dtype);
    auto *to = static_cast<unsigned char *>(
        storage.emplace_back(partBytes * parts.size()).data());
    for (size_t i = 0; i < parts.size(); ++i) // one shape (validateJoins)
      std::memcpy(to + i * partBytes, parts[i]->data, partBytes);
    whole.data = to;
    joined.push_back(whole);
  }
  return joined;
}

} // namespace lmc::rt
