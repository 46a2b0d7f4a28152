//===- Export.cpp - The ONNX model an executable embeds -------------------===//
//
// For `--export-onnx`, the executable carries its input model minus the
// initializers that became trainable parameters; the runtime appends those
// with their trained values (runtime/io/onnx_export.h).
//
//===----------------------------------------------------------------------===//

#include "lmc/Import/Onnx/Onnx.h"
#include "Importer.h"


using namespace mlir;

namespace lmc {

FailureOr<std::string> serializeOnnxForExport(MLIRContext &context,
                                              OnnxExportSource &source,
                                              const llvm::StringSet<> &trained) {
  if (!source.state)
    return mlir::emitError(UnknownLoc::get(&context))
           << "no imported ONNX model kept for --export-onnx";
  onnx::ModelProto &model = source.state->model;
  std::string path = source.state->path;
  std::string modelDir = onnx_import::externalDataDirOf(path);
  // External data inlined: the exported model lives elsewhere. The
  // importer has read and checked these files already.
  auto inlineExternalData = [&](onnx::TensorProto &tensor,
                                StringRef what) -> LogicalResult {
    if (tensor.data_location() != onnx::TensorProto::EXTERNAL)
      return success();
    auto emitError = [&]() {
      return mlir::emitError(FileLineColLoc::get(&context, path, 0, 0))
             << what << ": ";
    };
    FailureOr<int64_t> size = onnx_import::tensorByteSize(tensor);
    if (failed(size))
      return emitError() << "invalid dimensions";
    FailureOr<std::string> bytes =
        onnx_import::readExternalData(tensor, modelDir, *size, emitError);
    if (failed(bytes))
      return failure();
    tensor.set_raw_data(std::move(*bytes));
    tensor.clear_external_data();
    tensor.clear_data_location();
    return success();
  };
  auto *initializers = model.mutable_graph()->mutable_initializer();
  for (int i = initializers->size() - 1; i >= 0; --i) {
    onnx::TensorProto &init = initializers->at(i);
    if (trained.contains(init.name())) {
      initializers->DeleteSubrange(i, 1);
      continue;
    }
    // A float initializer that stayed fixed (--freeze) gets back the value
    // the import moved out.
    auto moved = source.state->movedValues.find(init.name());
    if (moved != source.state->movedValues.end()) {
      DenseElementsAttr value = moved->second;
      ArrayRef<char> raw = value.getRawData();
      std::string *bytes = init.mutable_raw_data();
      for (int64_t k = 0, e = value.isSplat() ? value.getNumElements() : 1;
           k < e; ++k)
        bytes->append(raw.data(), raw.size());
      continue;
    }
    if (failed(inlineExternalData(init, "initializer '" + init.name() + "'")))
      return failure();
  }
  // Constant nodes of exports above 2 GB keep their values there too.
  for (onnx::NodeProto &node : *model.mutable_graph()->mutable_node())
    for (onnx::AttributeProto &attr : *node.mutable_attribute())
      if (attr.has_t() &&
          failed(inlineExternalData(*attr.mutable_t(),
                                    "node '" + node.name() + "' attribute '" +
                                        attr.name() + "'")))
        return failure();
  std::string bytes;
  bool serialized = model.SerializeToString(&bytes);
  source.state.reset();
  if (!serialized)
    return mlir::emitError(FileLineColLoc::get(&context, path, 0, 0))
           << "cannot serialize the ONNX model for --export-onnx";
  return bytes;
}

} // namespace lmc
