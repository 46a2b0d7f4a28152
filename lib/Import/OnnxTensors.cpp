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
  case onnx::TensorProto::BOOL:
    return IntegerType::get(context, 1);
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
  bool isBool = tensor.data_type() == onnx::TensorProto::BOOL;
  int64_t elementBytes =
      isBool ? 1 : elementType.getIntOrFloatBitWidth() / 8;

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
    if (isBool) {
      SmallVector<bool> values;
      for (char c : raw)
        values.push_back(c != 0);
      return DenseElementsAttr::get(type, ArrayRef<bool>(values));
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
  case onnx::TensorProto::BOOL:
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
  case onnx::TensorProto::BOOL: {
    SmallVector<bool> values;
    for (int32_t v : tensor.int32_data())
      values.push_back(v != 0);
    return DenseElementsAttr::get(type, ArrayRef<bool>(values));
  }
  default:
    return fromRepeated<int32_t>(type, tensor.int32_data());
  }
}

int64_t broadcastSource(int64_t linear, ArrayRef<int64_t> outShape,
                        ArrayRef<int64_t> inShape) {
  int64_t offset = outShape.size() - inShape.size();
  int64_t source = 0, stride = 1;
  for (int64_t d = outShape.size() - 1; d >= 0; --d) {
    int64_t coord = linear % outShape[d];
    linear /= outShape[d];
    if (d < offset)
      continue;
    int64_t inDim = inShape[d - offset];
    if (inDim != 1)
      source += coord * stride;
    stride *= inDim;
  }
  return source;
}

SmallVector<int64_t> delinearize(int64_t linear, ArrayRef<int64_t> shape) {
  SmallVector<int64_t> index(shape.size());
  for (int64_t d = shape.size() - 1; d >= 0; --d) {
    index[d] = linear % shape[d];
    linear /= shape[d];
  }
  return index;
}

int64_t linearize(ArrayRef<int64_t> index, ArrayRef<int64_t> shape) {
  int64_t linear = 0;
  for (auto [i, dim] : llvm::zip(index, shape))
    linear = linear * dim + i;
  return linear;
}

DenseElementsAttr remapConstant(DenseElementsAttr source,
                                RankedTensorType type,
                                function_ref<int64_t(int64_t)> sourceIndex) {
  if (source.isSplat())
    return DenseElementsAttr::get(type, source.getSplatValue<Attribute>());
  auto values = llvm::to_vector(source.getValues<Attribute>());
  SmallVector<Attribute> result;
  result.reserve(type.getNumElements());
  for (int64_t i = 0, e = type.getNumElements(); i < e; ++i)
    result.push_back(values[sourceIndex(i)]);
  return DenseElementsAttr::get(type, result);
}

SmallVector<double> doubleValues(DenseElementsAttr attr) {
  SmallVector<double> values;
  if (isa<IntegerType>(attr.getElementType())) {
    bool isBool = attr.getElementType().isInteger(1);
    for (const APInt &v : attr.getValues<APInt>())
      values.push_back(isBool ? double(v.getZExtValue())
                              : double(v.getSExtValue()));
    return values;
  }
  for (APFloat v : attr.getValues<APFloat>()) {
    bool lost = false;
    v.convert(APFloat::IEEEdouble(), APFloat::rmNearestTiesToEven, &lost);
    values.push_back(v.convertToDouble());
  }
  return values;
}

DenseElementsAttr constantFromDoubles(RankedTensorType type,
                                      ArrayRef<double> values) {
  Type elementType = type.getElementType();
  if (auto floatType = dyn_cast<FloatType>(elementType)) {
    SmallVector<APFloat> converted;
    for (double v : values) {
      APFloat f(v);
      bool lost = false;
      f.convert(floatType.getFloatSemantics(), APFloat::rmNearestTiesToEven,
                &lost);
      converted.push_back(f);
    }
    return DenseElementsAttr::get(type, converted);
  }
  unsigned width = elementType.getIntOrFloatBitWidth();
  SmallVector<APInt> converted;
  for (double v : values)
    converted.push_back(width == 1 ? APInt(1, v != 0.0)
                                   : APInt(width, static_cast<int64_t>(v),
                                           /*isSigned=*/true,
                                           /*implicitTrunc=*/true));
  return DenseElementsAttr::get(type, converted);
}

} // namespace lmc::onnx_import
