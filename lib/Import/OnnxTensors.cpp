//===- OnnxTensors.cpp - ONNX TensorProto to dense attributes -------------===//

#include "OnnxImporter.h"

#include "llvm/Support/CheckedArithmetic.h"

using namespace mlir;

namespace lmc::onnx_import {

Type convertElementType(MLIRContext *context, int32_t dataType) {
  switch (dataType) {
  case onnx::TensorProto::FLOAT:
    return Float32Type::get(context);
  case onnx::TensorProto::DOUBLE:
    return Float64Type::get(context);
  case onnx::TensorProto::INT64:
    return IntegerType::get(context, 64);
  case onnx::TensorProto::INT32:
    return IntegerType::get(context, 32);
  default:
    return nullptr;
  }
}

StringRef dataTypeName(int32_t dataType) {
  if (!onnx::TensorProto::DataType_IsValid(dataType))
    return "<invalid>";
  // The generated name table outlives every caller.
  const std::string &name =
      onnx::TensorProto::DataType_Name(
          static_cast<onnx::TensorProto::DataType>(dataType));
  return name;
}

FailureOr<int64_t> checkedNumElements(ArrayRef<int64_t> shape) {
  int64_t count = 1;
  for (int64_t dim : shape) {
    if (dim < 0)
      return failure();
    std::optional<int64_t> product = llvm::checkedMul(count, dim);
    if (!product)
      return failure();
    count = *product;
  }
  return count;
}

SmallVector<int64_t> intValues(DenseElementsAttr attr) {
  SmallVector<int64_t> values;
  for (const APInt &v : attr.getValues<APInt>())
    values.push_back(v.getSExtValue());
  return values;
}

template <typename T, typename Field>
static DenseElementsAttr fromRepeated(RankedTensorType type,
                                      const Field &field) {
  SmallVector<T> values(field.begin(), field.end());
  return DenseElementsAttr::get(type, ArrayRef<T>(values));
}

FailureOr<DenseElementsAttr>
convertTensor(MLIRContext *context, const onnx::TensorProto &tensor,
              function_ref<InFlightDiagnostic()> emitError) {
  Type elementType = convertElementType(context, tensor.data_type());
  if (!elementType) {
    emitError() << "unsupported data type " << dataTypeName(tensor.data_type());
    return failure();
  }
  if (tensor.data_location() == onnx::TensorProto::EXTERNAL ||
      tensor.external_data_size() > 0) {
    emitError() << "external tensor data is not supported";
    return failure();
  }
  if (tensor.has_segment()) {
    emitError() << "segmented tensors are not supported";
    return failure();
  }

  SmallVector<int64_t> shape(tensor.dims().begin(), tensor.dims().end());
  FailureOr<int64_t> numElements = checkedNumElements(shape);
  if (failed(numElements)) {
    emitError() << "invalid dimensions (negative or overflowing)";
    return failure();
  }
  auto type = RankedTensorType::get(shape, elementType);
  int64_t elementBytes = elementType.getIntOrFloatBitWidth() / 8;

  if (tensor.has_raw_data()) {
    std::optional<int64_t> expected = llvm::checkedMul(*numElements,
                                                       elementBytes);
    const std::string &raw = tensor.raw_data();
    if (!expected || static_cast<uint64_t>(*expected) != raw.size()) {
      emitError() << "raw_data has " << raw.size() << " bytes but shape ["
                  << shape << "] of " << elementType << " needs "
                  << (expected ? std::to_string(*expected)
                               : std::string("an overflowing number of"))
                  << " bytes";
      return failure();
    }
    // raw_data is little-endian, like every host lmc targets; the size
    // check above rules out the one-element splat form of raw buffers.
    ArrayRef<char> bytes(raw.data(), raw.size());
    bool splat = false;
    if (!DenseElementsAttr::isValidRawBuffer(type, bytes, splat)) {
      emitError() << "raw_data is not a valid buffer for " << type;
      return failure();
    }
    return DenseElementsAttr::getFromRawBuffer(type, bytes);
  }

  int64_t given = 0;
  switch (tensor.data_type()) {
  case onnx::TensorProto::FLOAT:
    given = tensor.float_data_size();
    break;
  case onnx::TensorProto::DOUBLE:
    given = tensor.double_data_size();
    break;
  case onnx::TensorProto::INT64:
    given = tensor.int64_data_size();
    break;
  case onnx::TensorProto::INT32:
    given = tensor.int32_data_size();
    break;
  }
  if (given != *numElements) {
    emitError() << "has " << given << " values but shape [" << shape
                << "] needs " << *numElements;
    return failure();
  }
  switch (tensor.data_type()) {
  case onnx::TensorProto::FLOAT:
    return fromRepeated<float>(type, tensor.float_data());
  case onnx::TensorProto::DOUBLE:
    return fromRepeated<double>(type, tensor.double_data());
  case onnx::TensorProto::INT64:
    return fromRepeated<int64_t>(type, tensor.int64_data());
  default:
    return fromRepeated<int32_t>(type, tensor.int32_data());
  }
}

} // namespace lmc::onnx_import
