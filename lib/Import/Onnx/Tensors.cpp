//===- Tensors.cpp - ONNX TensorProto to dense attributes -----------------===//

#include "Importer.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/CheckedArithmetic.h"
#include "llvm/Support/Path.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

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

FailureOr<int64_t> tensorByteSize(const onnx::TensorProto &tensor) {
  int64_t elementBytes = 0;
  switch (tensor.data_type()) {
  case onnx::TensorProto::FLOAT:
  case onnx::TensorProto::INT32:
    elementBytes = 4;
    break;
  case onnx::TensorProto::DOUBLE:
  case onnx::TensorProto::INT64:
    elementBytes = 8;
    break;
  case onnx::TensorProto::BOOL:
    elementBytes = 1;
    break;
  default:
    return failure();
  }
  SmallVector<int64_t> shape(tensor.dims().begin(), tensor.dims().end());
  FailureOr<int64_t> numElements = checkedNumElements(shape);
  if (failed(numElements))
    return failure();
  std::optional<int64_t> bytes = llvm::checkedMul(*numElements, elementBytes);
  if (!bytes)
    return failure();
  return *bytes;
}

namespace {
/// Closes a file descriptor on scope exit.
struct FileDescriptor {
  int fd = -1;
  explicit FileDescriptor(int fd) : fd(fd) {}
  FileDescriptor(const FileDescriptor &) = delete;
  FileDescriptor &operator=(const FileDescriptor &) = delete;
  ~FileDescriptor() {
    if (fd >= 0)
      ::close(fd);
  }
  void reset(int newFd) {
    if (fd >= 0)
      ::close(fd);
    fd = newFd;
  }
};
} // namespace

/// Whether `name` in the directory `dirfd` is a symbolic link.
static bool isSymlinkAt(int dirfd, const std::string &name) {
  struct stat st;
  return ::fstatat(dirfd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 &&
         S_ISLNK(st.st_mode);
}

FailureOr<std::string>
readExternalData(const onnx::TensorProto &tensor, StringRef baseDir,
                 int64_t expectedBytes,
                 function_ref<InFlightDiagnostic()> emitError) {
  std::optional<std::string> location;
  std::optional<uint64_t> offset, length;
  for (const onnx::StringStringEntryProto &entry : tensor.external_data()) {
    const std::string &key = entry.key();
    if (key == "location") {
      if (location) {
        emitError() << "external data lists 'location' twice";
        return failure();
      }
      location = entry.value();
    } else if (key == "offset" || key == "length") {
      std::optional<uint64_t> &field = key == "offset" ? offset : length;
      uint64_t value = 0;
      StringRef text = entry.value();
      if (field || text.empty() || !llvm::all_of(text, [](char c) { return llvm::isDigit(c); }) ||
          text.getAsInteger(10, value)) {
        emitError() << "external data '" << key << "' must be given once as "
                    << "a non-negative integer, got '" << text << "'";
        return failure();
      }
      field = value;
    } else if (key != "checksum") {
      emitError() << "unsupported external data key '" << key << "'";
      return failure();
    }
  }
  if (!location || location->empty()) {
    emitError() << "external data has no 'location'";
    return failure();
  }
  StringRef loc = *location;
  if (loc.contains('\0')) {
    emitError() << "external data location contains a NUL character";
    return failure();
  }
  if (loc.starts_with("/")) {
    emitError() << "external data location '" << loc
                << "' is an absolute path (it must be relative to the "
                   "model's directory)";
    return failure();
  }
  SmallVector<StringRef> pieces, components;
  loc.split(pieces, '/');
  for (StringRef piece : pieces) {
    if (piece.empty() || piece == ".")
      continue;
    if (piece == "..") {
      emitError() << "external data location '" << loc
                  << "' contains '..' (it must stay inside the model's "
                     "directory)";
      return failure();
    }
    components.push_back(piece);
  }
  if (components.empty()) {
    emitError() << "external data location '" << loc << "' names no file";
    return failure();
  }

  // Walk down from the model's directory without following links.
  std::string dir = baseDir.empty() ? std::string(".") : baseDir.str();
  FileDescriptor dirfd(
      ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (dirfd.fd < 0) {
    emitError() << "cannot open the model's directory '" << dir
                << "': " << std::strerror(errno);
    return failure();
  }
  for (StringRef component : ArrayRef(components).drop_back()) {
    std::string name = component.str();
    int next = ::openat(dirfd.fd, name.c_str(),
                        O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (next < 0) {
      int error = errno;
      if (isSymlinkAt(dirfd.fd, name))
        emitError() << "external data location '" << loc
                    << "' goes through the symbolic link '" << name
                    << "' (refused)";
      else
        emitError() << "cannot open directory '" << name
                    << "' of external data location '" << loc
                    << "': " << std::strerror(error);
      return failure();
    }
    dirfd.reset(next);
  }
  std::string fileName = components.back().str();
  FileDescriptor fd(::openat(dirfd.fd, fileName.c_str(),
                             O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
  if (fd.fd < 0) {
    int error = errno;
    if (isSymlinkAt(dirfd.fd, fileName))
      emitError() << "external data file '" << loc
                  << "' is a symbolic link (refused)";
    else
      emitError() << "cannot open external data file '" << loc
                  << "': " << std::strerror(error);
    return failure();
  }
  struct stat st;
  if (::fstat(fd.fd, &st) != 0) {
    emitError() << "cannot stat external data file '" << loc
                << "': " << std::strerror(errno);
    return failure();
  }
  if (!S_ISREG(st.st_mode)) {
    emitError() << "external data file '" << loc
                << "' is not a regular file";
    return failure();
  }
  if (st.st_nlink != 1) {
    emitError() << "external data file '" << loc << "' has " << st.st_nlink
                << " hard links (refused: it may alias a file outside the "
                   "model's directory)";
    return failure();
  }
  uint64_t fileSize = static_cast<uint64_t>(st.st_size);
  uint64_t begin = offset.value_or(0);
  if (begin > fileSize) {
    emitError() << "external data offset " << begin << " is beyond the end of '"
                << loc << "' (" << fileSize << " bytes)";
    return failure();
  }
  uint64_t size = length.value_or(fileSize - begin);
  if (size > fileSize - begin) {
    emitError() << "external data range [" << begin << ", " << begin
                << " + " << size << ") is outside '" << loc << "' ("
                << fileSize << " bytes)";
    return failure();
  }
  if (size != static_cast<uint64_t>(expectedBytes)) {
    emitError() << "external data has " << size << " bytes but its shape and "
                << "data type need " << expectedBytes << " bytes";
    return failure();
  }
  std::string data(size, '\0');
  uint64_t done = 0;
  while (done < size) {
    ssize_t n = ::pread(fd.fd, data.data() + done,
                        std::min<uint64_t>(size - done, 1u << 30),
                        static_cast<off_t>(begin + done));
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0) {
      emitError() << "cannot read external data file '" << loc << "': "
                  << (n < 0 ? std::strerror(errno) : "unexpected end of file");
      return failure();
    }
    done += static_cast<uint64_t>(n);
  }
  return data;
}

std::string externalDataDirOf(StringRef modelPath) {
  std::string dir = llvm::sys::path::parent_path(modelPath).str();
  return dir.empty() ? std::string(".") : dir;
}

FailureOr<DenseElementsAttr>
convertTensor(MLIRContext *context, const onnx::TensorProto &tensor,
              function_ref<InFlightDiagnostic()> emitError,
              StringRef externalDataDir) {
  Type elementType = convertElementType(context, tensor.data_type());
  if (!elementType) {
    emitError() << "unsupported data type " << dataTypeName(tensor.data_type());
    return failure();
  }
  bool external = tensor.data_location() == onnx::TensorProto::EXTERNAL ||
                  tensor.external_data_size() > 0;
  if (external && externalDataDir.empty()) {
    emitError() << "external tensor data is not supported here";
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

  std::string externalBytes;
  if (external) {
    if (tensor.has_raw_data()) {
      emitError() << "has both external data and raw_data";
      return failure();
    }
    FailureOr<int64_t> expected = tensorByteSize(tensor);
    if (failed(expected)) {
      emitError() << "invalid dimensions (negative or overflowing)";
      return failure();
    }
    FailureOr<std::string> bytes =
        readExternalData(tensor, externalDataDir, *expected, emitError);
    if (failed(bytes))
      return failure();
    externalBytes = std::move(*bytes);
  }

  if (external || tensor.has_raw_data()) {
    std::optional<int64_t> expected = llvm::checkedMul(*numElements,
                                                       elementBytes);
    const std::string &raw = external ? externalBytes : tensor.raw_data();
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

bool foldable(DenseElementsAttr c, RankedTensorType resultType) {
  return c && (c.isSplat() || resultType.getNumElements() <= kMaxFoldedElements);
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
