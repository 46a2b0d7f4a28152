//===- Convolution.cpp - Conv and pooling ops -----------------------------===//
//
// Conv becomes lmc.conv (plus a broadcast bias add) and MaxPool lmc.max_pool;
// AveragePool is a depthwise lmc.conv with a constant kernel (divided by a
// constant count tensor when padding is excluded), GlobalAveragePool and
// GlobalMaxPool are reductions over the spatial dimensions. Paddings come
// from `pads` or `auto_pad` (SAME_UPPER, SAME_LOWER, VALID).
//
//===----------------------------------------------------------------------===//

#include "Importer.h"

#include "lmc/Dialect/Lmc/IR/LmcBuilders.h"
#include "lmc/Dialect/Lmc/IR/LmcOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

using namespace mlir;

namespace lmc::onnx_import {
namespace {

/// The window of a Conv or pooling node over spatial sizes `input`.
struct Window {
  SmallVector<int64_t> kernel, strides, dilations, padLow, padHigh, output;
  /// The part of padHigh that ceil_mode added (0 without it).
  SmallVector<int64_t> ceilExtra;
};

/// Reads an ints attribute with one entry per spatial dimension, defaulting
/// to `dflt` everywhere.
FailureOr<SmallVector<int64_t>> spatialInts(NodeImporter &n, StringRef name,
                                            int64_t spatial, int64_t dflt,
                                            int64_t minValue) {
  FailureOr<std::optional<SmallVector<int64_t>>> attr = n.intsAttr(name);
  if (failed(attr))
    return failure();
  if (!*attr)
    return SmallVector<int64_t>(spatial, dflt);
  if (static_cast<int64_t>((*attr)->size()) != spatial)
    return n.error() << "attribute '" << name << "' must have " << spatial
                     << " entries (one per spatial dimension), got "
                     << (*attr)->size();
  for (int64_t v : **attr)
    if (v < minValue)
      return n.error() << "attribute '" << name << "' entries must be >= "
                       << minValue;
  return **attr;
}

/// auto_pad: NOTSET (the default), VALID, SAME_UPPER or SAME_LOWER.
FailureOr<std::string> autoPadAttr(NodeImporter &n) {
  std::string autoPad = "NOTSET";
  if (const onnx::AttributeProto *a = n.attr("auto_pad")) {
    if (a->type() != onnx::AttributeProto::STRING)
      return n.error() << "attribute 'auto_pad' must be a string";
    autoPad = a->s();
  }
  if (autoPad != "NOTSET" && autoPad != "VALID" && autoPad != "SAME_UPPER" &&
      autoPad != "SAME_LOWER")
    return n.error() << "attribute 'auto_pad' must be NOTSET, VALID, "
                        "SAME_UPPER or SAME_LOWER, got '"
                     << autoPad << "'";
  return autoPad;
}

/// Reads kernel_shape (or takes `weightKernel`), strides, dilations, pads
/// and auto_pad, and computes the output sizes (rounding down, or up with
/// `ceilMode` as PyTorch does: the last window starts inside the input or
/// the leading padding; the extra trailing padding is added to padHigh).
FailureOr<Window> readWindow(NodeImporter &n, ArrayRef<int64_t> input,
                             std::optional<ArrayRef<int64_t>> weightKernel,
                             bool ceilMode) {
  int64_t spatial = input.size();
  Window w;
  FailureOr<std::optional<SmallVector<int64_t>>> kernel =
      n.intsAttr("kernel_shape");
  if (failed(kernel))
    return failure();
  if (*kernel) {
    if (static_cast<int64_t>((*kernel)->size()) != spatial)
      return n.error() << "attribute 'kernel_shape' must have " << spatial
                       << " entries (one per spatial dimension), got "
                       << (*kernel)->size();
    if (weightKernel && ArrayRef<int64_t>(**kernel) != *weightKernel)
      return n.error() << "attribute 'kernel_shape' does not match the "
                          "weight's spatial shape";
    w.kernel = **kernel;
  } else if (weightKernel) {
    w.kernel.assign(weightKernel->begin(), weightKernel->end());
  } else {
    return n.error() << "attribute 'kernel_shape' is required";
  }
  for (int64_t k : w.kernel)
    if (k < 1)
      return n.error() << "attribute 'kernel_shape' entries must be >= 1";
  FailureOr<SmallVector<int64_t>> strides =
      spatialInts(n, "strides", spatial, 1, 1);
  FailureOr<SmallVector<int64_t>> dilations =
      spatialInts(n, "dilations", spatial, 1, 1);
  if (failed(strides) || failed(dilations))
    return failure();
  w.strides = *strides;
  w.dilations = *dilations;

  FailureOr<std::string> autoPad = autoPadAttr(n);
  if (failed(autoPad))
    return failure();
  FailureOr<std::optional<SmallVector<int64_t>>> pads = n.intsAttr("pads");
  if (failed(pads))
    return failure();
  if (*pads && *autoPad != "NOTSET")
    return n.error() << "attribute 'pads' cannot be combined with auto_pad '"
                     << *autoPad << "'";
  w.padLow.assign(spatial, 0);
  w.padHigh.assign(spatial, 0);
  if (*pads) {
    if (static_cast<int64_t>((*pads)->size()) != 2 * spatial)
      return n.error() << "attribute 'pads' must have " << 2 * spatial
                       << " entries (begins, then ends), got "
                       << (*pads)->size();
    for (int64_t i = 0; i < spatial; ++i) {
      w.padLow[i] = (**pads)[i];
      w.padHigh[i] = (**pads)[spatial + i];
      if (w.padLow[i] < 0 || w.padHigh[i] < 0)
        return n.error() << "attribute 'pads' entries must be >= 0";
    }
  }
  bool same = *autoPad == "SAME_UPPER" || *autoPad == "SAME_LOWER";
  if (same && ceilMode)
    return n.error() << "ceil_mode = 1 with auto_pad '" << *autoPad
                     << "' is not supported";
  for (int64_t i = 0; i < spatial; ++i) {
    int64_t extent = w.dilations[i] * (w.kernel[i] - 1) + 1;
    if (same) {
      int64_t out = (input[i] + w.strides[i] - 1) / w.strides[i];
      int64_t total =
          std::max<int64_t>(0, (out - 1) * w.strides[i] + extent - input[i]);
      int64_t small = total / 2;
      w.padLow[i] = *autoPad == "SAME_UPPER" ? small : total - small;
      w.padHigh[i] = total - w.padLow[i];
    }
    int64_t padded = input[i] + w.padLow[i] + w.padHigh[i];
    if (padded < extent)
      return n.error() << "window of extent " << extent
                       << " does not fit the padded size " << padded
                       << " of spatial dimension " << i;
    int64_t out = (padded - extent) / w.strides[i] + 1;
    if (ceilMode) {
      out = (padded - extent + w.strides[i] - 1) / w.strides[i] + 1;
      if ((out - 1) * w.strides[i] >= input[i] + w.padLow[i])
        --out;
      w.ceilExtra.push_back(std::max<int64_t>(
          0, (out - 1) * w.strides[i] + extent - padded));
      w.padHigh[i] += w.ceilExtra.back();
    } else {
      w.ceilExtra.push_back(0);
    }
    w.output.push_back(out);
  }
  return w;
}

/// The input as a float tensor of rank 3 to 5 ([N, C, spatial...]).
FailureOr<Value> spatialInput(NodeImporter &n) {
  FailureOr<Value> x = n.floatInput(0);
  if (failed(x))
    return failure();
  int64_t rank = cast<RankedTensorType>(x->getType()).getRank();
  if (rank < 3 || rank > 5)
    return n.error() << "expected an input of rank 3 to 5 ([N, C, spatial...]"
                        "), got rank "
                     << rank;
  return x;
}

RankedTensorType outputType(RankedTensorType input, int64_t channels,
                            ArrayRef<int64_t> spatial) {
  SmallVector<int64_t> shape = {input.getDimSize(0), channels};
  llvm::append_range(shape, spatial);
  return RankedTensorType::get(shape, input.getElementType());
}

LogicalResult setResultWithBias(NodeImporter &n, Value y, unsigned biasInput);

/// The operands of Conv / ConvTranspose: input X [N, C, spatial...],
/// weight W of the same rank and element type, and `group`.
struct ConvOperands {
  Value x, w;
  RankedTensorType xType, wType;
  int64_t group;
};

FailureOr<ConvOperands> readConvOperands(NodeImporter &n,
                                         ArrayRef<StringRef> attributes) {
  if (failed(n.checkArity(2, 3)) || failed(n.checkAttributes(attributes)))
    return failure();
  FailureOr<Value> x = spatialInput(n);
  FailureOr<Value> w = n.floatInput(1);
  FailureOr<int64_t> group = n.intAttr("group", 1);
  if (failed(x) || failed(w) || failed(group))
    return failure();
  ConvOperands ops{*x, *w, cast<RankedTensorType>(x->getType()),
                   cast<RankedTensorType>(w->getType()), *group};
  if (ops.wType.getRank() != ops.xType.getRank() ||
      ops.wType.getElementType() != ops.xType.getElementType())
    return n.error() << "expected a weight of the input's rank and element "
                        "type, got "
                     << ops.wType;
  if (ops.group < 1)
    return n.error() << "group must be >= 1, got " << ops.group;
  return ops;
}

LogicalResult importConv(NodeImporter &n) {
  FailureOr<ConvOperands> operands = readConvOperands(
      n, {"auto_pad", "dilations", "group", "kernel_shape", "pads", "strides"});
  if (failed(operands))
    return failure();
  auto [x, w, xType, wType, group] = *operands;
  int64_t channels = xType.getDimSize(1), filters = wType.getDimSize(0);
  if (channels % group != 0 || filters % group != 0 ||
      wType.getDimSize(1) * group != channels)
    return n.error() << "group " << group << " does not fit input channels "
                     << channels << " and weight " << wType;
  FailureOr<Window> win =
      readWindow(n, xType.getShape().drop_front(2),
                 wType.getShape().drop_front(2), /*ceilMode=*/false);
  if (failed(win))
    return failure();
  OpBuilder &b = n.b;
  Location loc = n.loc;
  RankedTensorType type = outputType(xType, filters, win->output);
  Value y = ConvOp::create(b, loc, type, x, w, win->strides,
                           win->dilations, win->padLow, win->padHigh, group);
  return setResultWithBias(n, y, 2);
}

/// Binds `y` [N, C, spatial...] plus the optional per-channel bias input.
LogicalResult setResultWithBias(NodeImporter &n, Value y, unsigned biasInput) {
  if (!n.hasInput(biasInput))
    return n.setResult(y);
  FailureOr<Value> bias = n.floatInput(biasInput);
  if (failed(bias))
    return failure();
  auto type = cast<RankedTensorType>(y.getType());
  int64_t channels = type.getDimSize(1);
  auto biasType = cast<RankedTensorType>(bias->getType());
  if (biasType.getRank() != 1 || biasType.getDimSize(0) != channels ||
      biasType.getElementType() != type.getElementType())
    return n.error() << "expected a bias of type "
                     << RankedTensorType::get({channels},
                                              type.getElementType())
                     << ", got " << biasType;
  return n.setResult(AddOp::create(
      n.b, n.loc, y,
      BroadcastInDimOp::create(n.b, n.loc, type, *bias, ArrayRef<int64_t>{1})));
}

/// The transposed convolution: `lmc.conv_input_grad` of the convolution
/// that maps the output [N, C_out, O...] back to the input [N, C_in, I...]
/// with the same weight [C_in, C_out / group, k...], so that
/// O = stride (I - 1) + output_padding + dilation (k - 1) + 1 - pads.
/// Pads come from `pads`, from `output_shape` or from SAME auto_pad
/// (output I * stride), split as the ONNX specification says.
LogicalResult importConvTranspose(NodeImporter &n) {
  FailureOr<ConvOperands> operands = readConvOperands(
      n, {"auto_pad", "dilations", "group", "kernel_shape", "output_padding",
          "output_shape", "pads", "strides"});
  if (failed(operands))
    return failure();
  auto [x, w, xType, wType, group] = *operands;
  int64_t inChannels = xType.getDimSize(1);
  if (wType.getDimSize(0) != inChannels ||
      inChannels % group != 0)
    return n.error() << "weight " << wType << " with group " << group
                     << " does not fit input channels " << inChannels;
  const int64_t spatial = xType.getRank() - 2;
  ArrayRef<int64_t> input = xType.getShape().drop_front(2);
  ArrayRef<int64_t> kernel = wType.getShape().drop_front(2);
  FailureOr<std::optional<SmallVector<int64_t>>> kernelAttr =
      n.intsAttr("kernel_shape");
  FailureOr<SmallVector<int64_t>> strides =
      spatialInts(n, "strides", spatial, 1, 1);
  FailureOr<SmallVector<int64_t>> dilations =
      spatialInts(n, "dilations", spatial, 1, 1);
  FailureOr<SmallVector<int64_t>> outputPadding =
      spatialInts(n, "output_padding", spatial, 0, 0);
  FailureOr<std::optional<SmallVector<int64_t>>> pads = n.intsAttr("pads");
  FailureOr<std::optional<SmallVector<int64_t>>> outputShape =
      n.intsAttr("output_shape");
  if (failed(kernelAttr) || failed(strides) || failed(dilations) ||
      failed(outputPadding) || failed(pads) || failed(outputShape))
    return failure();
  if (*kernelAttr && ArrayRef<int64_t>(**kernelAttr) != kernel)
    return n.error() << "attribute 'kernel_shape' does not match the "
                        "weight's spatial shape";
  FailureOr<std::string> autoPad = autoPadAttr(n);
  if (failed(autoPad))
    return failure();
  // output_shape may list [N, C] too; only the spatial sizes matter.
  SmallVector<int64_t> wanted;
  if (*outputShape) {
    ArrayRef<int64_t> all = **outputShape;
    if (int64_t(all.size()) < spatial)
      return n.error() << "attribute 'output_shape' must have at least "
                       << spatial << " entries";
    wanted.assign(all.end() - spatial, all.end());
  }
  if (*pads && int64_t((*pads)->size()) != 2 * spatial)
    return n.error() << "attribute 'pads' must have " << 2 * spatial
                     << " entries (begins, then ends), got " << (*pads)->size();

  SmallVector<int64_t> padLow(spatial, 0), padHigh(spatial, 0), shape = {
      xType.getDimSize(0), wType.getDimSize(1) * group};
  for (int64_t i = 0; i < spatial; ++i) {
    const int64_t s = (*strides)[i], d = (*dilations)[i];
    const int64_t op = (*outputPadding)[i];
    if (op >= s && op >= d)
      return n.error() << "output_padding " << op
                       << " must be smaller than the stride or the dilation";
    int64_t full = s * (input[i] - 1) + op + d * (kernel[i] - 1) + 1;
    const bool same = *autoPad == "SAME_UPPER" || *autoPad == "SAME_LOWER";
    if (!wanted.empty() || same) {
      int64_t total = full - (wanted.empty() ? input[i] * s : wanted[i]);
      if (total < 0) {
        // A larger output than the windows reach: trailing positions that
        // no input contributes to (more output padding), as the reference
        // implementation computes.
        if (op - total >= s)
          return n.error() << "the requested output size of spatial "
                              "dimension "
                           << i << " is more than a stride beyond the last "
                              "window";
        full -= total;
        total = 0;
      }
      // SAME_UPPER puts the odd padding at the end, everything else at the
      // beginning (the specification's rule for output_shape).
      bool upper = *autoPad == "SAME_UPPER";
      padHigh[i] = upper ? total - total / 2 : total / 2;
      padLow[i] = total - padHigh[i];
    } else if (*pads) {
      padLow[i] = (**pads)[i];
      padHigh[i] = (**pads)[spatial + i];
      if (padLow[i] < 0 || padHigh[i] < 0)
        return n.error() << "attribute 'pads' entries must be >= 0";
    }
    int64_t out = full - padLow[i] - padHigh[i];
    if (out < 1)
      return n.error() << "the output of spatial dimension " << i
                       << " would be empty";
    shape.push_back(out);
  }
  auto type = RankedTensorType::get(shape, xType.getElementType());
  Value y = ConvInputGradOp::create(n.b, n.loc, type, x, w, *strides,
                                    *dilations, padLow, padHigh, group);
  return setResultWithBias(n, y, 2);
}

LogicalResult importMaxPool(NodeImporter &n) {
  unsigned outputs = n.numOutputs();
  if (outputs > 1)
    return n.error() << "the Indices output is not supported";
  SmallVector<StringRef> allowed = {"auto_pad", "kernel_shape", "pads",
                                    "storage_order", "strides"};
  if (n.opset >= 10)
    allowed.append({"ceil_mode", "dilations"});
  if (failed(n.checkArity(1, 1)) || failed(n.checkAttributes(allowed)))
    return failure();
  FailureOr<Value> x = spatialInput(n);
  FailureOr<int64_t> ceilMode = n.intAttr("ceil_mode", 0);
  FailureOr<int64_t> storageOrder = n.intAttr("storage_order", 0);
  if (failed(x) || failed(ceilMode) || failed(storageOrder))
    return failure();
  if (*storageOrder != 0)
    return n.error() << "storage_order " << *storageOrder
                     << " is not supported (only 0, row major)";
  auto xType = cast<RankedTensorType>(x->getType());
  FailureOr<Window> win = readWindow(n, xType.getShape().drop_front(2),
                                     std::nullopt, *ceilMode != 0);
  if (failed(win))
    return failure();
  for (size_t i = 0; i < win->kernel.size(); ++i) {
    int64_t extent = win->dilations[i] * (win->kernel[i] - 1) + 1;
    if (win->padLow[i] >= extent || win->padHigh[i] >= extent)
      return n.error() << "paddings must be smaller than the window extent "
                       << extent << " (spatial dimension " << i << ")";
  }
  RankedTensorType type =
      outputType(xType, xType.getDimSize(1), win->output);
  return n.setResult(MaxPoolOp::create(n.b, n.loc, type, *x, win->kernel,
                                       win->strides, win->dilations,
                                       win->padLow, win->padHigh));
}

/// The number of input (not padding) positions that output `o` reads along
/// one spatial dimension.
int64_t windowCount(int64_t o, int64_t kernel, int64_t stride,
                    int64_t dilation, int64_t padLow, int64_t begin,
                    int64_t end) {
  int64_t count = 0;
  for (int64_t k = 0; k < kernel; ++k) {
    int64_t at = o * stride + k * dilation - padLow;
    count += at >= begin && at < end;
  }
  return count;
}

LogicalResult importAveragePool(NodeImporter &n) {
  SmallVector<StringRef> allowed = {"auto_pad", "ceil_mode",
                                    "count_include_pad", "kernel_shape",
                                    "pads", "strides"};
  if (n.opset >= 19)
    allowed.push_back("dilations");
  if (failed(n.checkArity(1, 1)) || failed(n.checkAttributes(allowed)))
    return failure();
  FailureOr<Value> x = spatialInput(n);
  FailureOr<int64_t> ceilMode = n.intAttr("ceil_mode", 0);
  FailureOr<int64_t> includePad = n.intAttr("count_include_pad", 0);
  if (failed(x) || failed(ceilMode) || failed(includePad))
    return failure();
  auto xType = cast<RankedTensorType>(x->getType());
  ArrayRef<int64_t> input = xType.getShape().drop_front(2);
  FailureOr<Window> win = readWindow(n, input, std::nullopt, *ceilMode != 0);
  if (failed(win))
    return failure();
  OpBuilder &b = n.b;
  Location loc = n.loc;
  Type element = xType.getElementType();
  int64_t channels = xType.getDimSize(1), kernelSize = 1;
  for (int64_t k : win->kernel)
    kernelSize *= k;
  bool padded = llvm::any_of(win->padLow, [](int64_t p) { return p; }) ||
                llvm::any_of(win->padHigh, [](int64_t p) { return p; });
  // The positions ceil_mode adds never count, as in PyTorch and the ONNX
  // reference; explicit padding counts with count_include_pad.
  bool ceilExtra = llvm::any_of(win->ceilExtra, [](int64_t e) { return e; });
  bool divideByCount = (padded && *includePad == 0) || ceilExtra;

  // A depthwise convolution with a constant kernel: 1/K, or 1 followed by a
  // division by the per-position count of input elements.
  SmallVector<int64_t> kernelShape = {channels, 1};
  llvm::append_range(kernelShape, win->kernel);
  auto kernelType = RankedTensorType::get(kernelShape, element);
  Value kernel = buildSplat(b, loc, kernelType,
                            divideByCount ? 1.0 : 1.0 / double(kernelSize));
  RankedTensorType type = outputType(xType, channels, win->output);
  Value y = ConvOp::create(b, loc, type, *x, kernel, win->strides,
                           win->dilations, win->padLow, win->padHigh,
                           channels);
  if (divideByCount) {
    SmallVector<int64_t> countShape = {1, 1};
    llvm::append_range(countShape, win->output);
    auto countType = RankedTensorType::get(countShape, element);
    SmallVector<double> counts;
    for (int64_t linear = 0; linear < countType.getNumElements(); ++linear) {
      SmallVector<int64_t> at = delinearize(linear, countShape);
      double count = 1;
      for (size_t i = 0; i < input.size(); ++i)
        count *= windowCount(
            at[2 + i], win->kernel[i], win->strides[i], win->dilations[i],
            win->padLow[i], *includePad ? -win->padLow[i] : 0,
            *includePad ? input[i] + win->padHigh[i] - win->ceilExtra[i]
                        : input[i]);
      counts.push_back(count);
    }
    Value countValue = arith::ConstantOp::create(
        b, loc, constantFromDoubles(countType, counts));
    auto dims = llvm::to_vector(llvm::seq<int64_t>(0, type.getRank()));
    y = DivOp::create(b, loc, y,
                      BroadcastInDimOp::create(b, loc, type, countValue, dims));
  }
  return n.setResult(y);
}

/// GlobalAveragePool / GlobalMaxPool: a reduction over the spatial
/// dimensions, kept with size 1.
template <bool isMax> LogicalResult importGlobalPool(NodeImporter &n) {
  if (failed(n.checkArity(1, 1)) || failed(n.checkAttributes({})))
    return failure();
  FailureOr<Value> x = spatialInput(n);
  if (failed(x))
    return failure();
  auto xType = cast<RankedTensorType>(x->getType());
  SmallVector<int64_t> axes, shape(xType.getShape());
  int64_t count = 1;
  for (int64_t d = 2; d < xType.getRank(); ++d) {
    axes.push_back(d);
    count *= shape[d];
    shape[d] = 1;
  }
  auto type = RankedTensorType::get(shape, xType.getElementType());
  OpBuilder &b = n.b;
  Location loc = n.loc;
  if (isMax)
    return n.setResult(ReduceMaxOp::create(b, loc, type, *x, axes,
                                           /*keep_dims=*/true));
  Value sum = ReduceSumOp::create(b, loc, type, *x, axes, /*keep_dims=*/true);
  return n.setResult(MulOp::create(b, loc, sum,
                                   buildSplat(b, loc, type, 1.0 / count)));
}

} // namespace

void registerConvolutionOps(OpTable &table) {
  table["Conv"] = importConv;
  table["MaxPool"] = importMaxPool;
  table["AveragePool"] = importAveragePool;
  table["ConvTranspose"] = importConvTranspose;
  table["GlobalAveragePool"] = importGlobalPool<false>;
  table["GlobalMaxPool"] = importGlobalPool<true>;
}

} // namespace lmc::onnx_import
