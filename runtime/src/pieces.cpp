//===- pieces.cpp - Fused parameters files hold whole --------------------===//

#include "pieces.h"

#include "error.h"

#include <cstring>
#include <map>
#include <optional>

namespace lmc::rt {

namespace {

/// `name` as a piece's tensor: `<piece>` or `<piece>.<slot>`, the fused
/// tensor's name with the same suffix, and the piece's index.
struct PieceOf {
  const Join *join;
  size_t index;
  std::string suffix; // "" or ".<slot>"
};

std::optional<PieceOf> pieceOf(const std::string &name,
                               const std::vector<Join> &joins) {
  for (const Join &join : joins)
    for (size_t i = 0; i < join.pieces.size(); ++i) {
      const std::string &piece = join.pieces[i];
      if (name.compare(0, piece.size(), piece) != 0)
        continue;
      if (name.size() == piece.size())
        return PieceOf{&join, i, ""};
      if (name[piece.size()] == '.')
        return PieceOf{&join, i, name.substr(piece.size())};
    }
  return std::nullopt;
}

} // namespace

void addPieceEntries(SafetensorsFile &file, const std::vector<Join> &joins) {
  std::vector<SafetensorsTensor> entries;
  for (const SafetensorsTensor &tensor : file.tensors)
    for (const Join &join : joins) {
      const std::string &name = join.name;
      if (tensor.name.compare(0, name.size(), name) != 0 ||
          (tensor.name.size() != name.size() &&
           tensor.name[name.size()] != '.'))
        continue;
      const size_t pieces = join.pieces.size();
      if (tensor.shape.empty() || tensor.shape[0] % int64_t(pieces) != 0)
        continue;
      const std::string suffix = tensor.name.substr(name.size());
      const size_t bytes = (tensor.end - tensor.begin) / pieces;
      for (size_t i = 0; i < pieces; ++i) {
        SafetensorsTensor piece = tensor;
        piece.name = join.pieces[i] + suffix;
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
  // Each fused tensor's pieces, by fused name + suffix.
  std::map<std::string, std::vector<const TensorView *>> found;
  for (const TensorView &view : tensors)
    if (std::optional<PieceOf> piece = pieceOf(view.name, joins)) {
      auto &slots = found[piece->join->name + piece->suffix];
      slots.resize(piece->join->pieces.size());
      slots[piece->index] = &view;
    }
  std::vector<TensorView> joined;
  for (const TensorView &view : tensors) {
    std::optional<PieceOf> piece = pieceOf(view.name, joins);
    if (!piece) {
      joined.push_back(view);
      continue;
    }
    if (piece->index != 0)
      continue; // joined at the first piece
    const std::string name = piece->join->name + piece->suffix;
    const std::vector<const TensorView *> &parts = found[name];
    TensorView whole{name, view.dtype, view.shape, nullptr};
    whole.shape[0] = 0;
    size_t bytes = 0;
    for (const TensorView *part : parts) {
      LMC_CHECK(part, "internal error: a piece of '", name, "' is missing");
      whole.shape[0] += part->shape[0];
      bytes += size_t(numElements(part->shape)) * dtypeSize(part->dtype);
    }
    storage.emplace_back(bytes);
    auto *to = static_cast<unsigned char *>(storage.back().data());
    for (const TensorView *part : parts) {
      const size_t size =
          size_t(numElements(part->shape)) * dtypeSize(part->dtype);
      std::memcpy(to, part->data, size);
      to += size;
    }
    whole.data = storage.back().data();
    joined.push_back(whole);
  }
  return joined;
}

} // namespace lmc::rt
