//===- Resize.cpp - ONNX Resize as interpolation matrices ---------------===//
//
// With the sizes known at compile time, Resize is linear in its input and
// separable: along each resized axis every output element is a weighted
// sum of a few input elements, with weights that depend on positions only.
// So each axis becomes one lmc.matmul by a constant [out, in] matrix of
// those weights (linear, cubic, their antialiased forms), or one
// lmc.gather of the chosen positions (nearest) — and the gradient is the
// matmul's or the gather's, as PyTorch's interpolate backward is the
// adjoint of the same weights (DINOv2 resizes its trained position
// embeddings with bicubic interpolation).
//
// The weights follow ONNX's reference implementation
// (onnx.reference.ops.op_resize) step by step, in double precision: the
// coordinate transformation, the neighbours of the source coordinate with
// edge padding, the linear / cubic (cubic_coeff_a, exclude_outside) /
// antialias coefficients and nearest_mode's choice. tf_crop_and_resize
// (a region of interest with extrapolation) is refused.
//
//===----------------------------------------------------------------------===//

#include "Importer.h"

#include "lmc/Dialect/Lmc/IR/LmcBuilders.h"
#include "lmc/Dialect/Lmc/IR/LmcOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

#include <cmath>

using namespace mlir;

namespace lmc::onnx_import {
namespace {

enum class Mode { Nearest, Linear, Cubic };

struct ResizeAttributes {
  Mode mode = Mode::Nearest;
  std::string coordinates = "half_pixel";
  std::string nearest = "round_prefer_floor";
  double cubicA = -0.75;
  bool excludeOutside = false;
  bool antialias = false;
};

/// One axis: its sizes and the scale the coordinates use (out / in when
/// sizes are given, else the given scale).
struct AxisResize {
  int64_t axis, in, out;
  double scale;
};

/// The source coordinate of output position `y`.
double sourceCoordinate(const ResizeAttributes &attrs, const AxisResize &a,
                        double y) {
  const double outWidth = a.scale * double(a.in);
  const std::string &mode = attrs.coordinates;
  if (mode == "align_corners")
    return outWidth == 1 ? 0.0 : y * double(a.in - 1) / (outWidth - 1);
  if (mode == "asymmetric")
    return y / a.scale;
  if (mode == "pytorch_half_pixel")
    return outWidth == 1 ? -0.5 : (y + 0.5) / a.scale - 0.5;
  if (mode == "tf_half_pixel_for_nn")
    return (y + 0.5) / a.scale;
  if (mode == "half_pixel_symmetric") {
    double adjustment = double(a.out) / outWidth;
    double offset = double(a.in) / 2 * (1 - adjustment);
    return offset + (y + 0.5) / a.scale - 0.5;
  }
  return (y + 0.5) / a.scale - 0.5; // half_pixel
}

double cubicKernel(double x, double A) {
  x = std::fabs(x);
  if (x <= 1)
    return ((A + 2) * x - (A + 3)) * x * x + 1;
  if (x < 2)
    return ((A * x - 5 * A) * x + 8 * A) * x - 4 * A;
  return 0;
}

/// The coefficients of the neighbours for `ratio` in (0, 1] (the source
/// coordinate's distance from the neighbour left of it).
SmallVector<double> coefficients(const ResizeAttributes &attrs, double ratio,
                                 double scale) {
  switch (attrs.mode) {
  case Mode::Nearest: {
    if (ratio == 1)
      return {0, 1};
    const std::string &m = attrs.nearest;
    bool right = m == "round_prefer_ceil" ? ratio >= 0.5
                 : m == "floor"           ? false
                 : m == "ceil"            ? true
                                          : ratio > 0.5; // round_prefer_floor
    return {right ? 0.0 : 1.0, right ? 1.0 : 0.0};
  }
  case Mode::Linear: {
    if (!attrs.antialias)
      return {1 - ratio, ratio};
    double s = std::min(scale, 1.0);
    int64_t start = int64_t(std::floor(-1 / s)) + 1;
    SmallVector<double> c;
    double sum = 0;
    for (int64_t i = start; i < 2 - start; ++i) {
      double v = std::clamp(1 - std::fabs((double(i) - ratio) * s), 0.0, 1.0);
      c.push_back(v);
      sum += v;
    }
    for (double &v : c)
      v /= sum;
    return c;
  }
  case Mode::Cubic: {
    const double A = attrs.cubicA;
    if (!attrs.antialias) {
      double r1 = ratio + 1, q = 1 - ratio, q1 = q + 1;
      return {((A * r1 - 5 * A) * r1 + 8 * A) * r1 - 4 * A,
              ((A + 2) * ratio - (A + 3)) * ratio * ratio + 1,
              ((A + 2) * q - (A + 3)) * q * q + 1,
              ((A * q1 - 5 * A) * q1 + 8 * A) * q1 - 4 * A};
    }
    double s = std::min(scale, 1.0);
    int64_t start = int64_t(std::floor(-2 / s)) + 1;
    SmallVector<double> c;
    double sum = 0;
    for (int64_t i = start; i < 2 - start; ++i) {
      double v = cubicKernel(s * (double(i) - ratio), A);
      c.push_back(v);
      sum += v;
    }
    for (double &v : c)
      v /= sum;
    return c;
  }
  }
  return {};
}

/// The weights of every output position along one axis: [out][in].
std::vector<std::vector<double>>
interpolationWeights(const ResizeAttributes &attrs, const AxisResize &a) {
  std::vector<std::vector<double>> weights(a.out,
                                           std::vector<double>(a.in, 0.0));
  for (int64_t y = 0; y < a.out; ++y) {
    double x = sourceCoordinate(attrs, a, double(y));
    double left = std::floor(x);
    double ratio = x == left ? 1.0 : x - left;
    SmallVector<double> c = coefficients(attrs, ratio, a.scale);
    const int64_t n = c.size();
    // The n neighbours nearest to x (preferring the left), in the input
    // padded by its edge values, as the reference picks them.
    const int64_t pad = (n + 1) / 2;
    double padded = x + double(pad);
    double p = std::floor(padded), frac = padded - p;
    int64_t offset = n % 2 == 0
                         ? (frac == 0 ? -(n / 2) : -(n / 2) + 1)
                         : (frac <= 0.5 ? -((n - 1) / 2) : -((n - 1) / 2) + 1);
    int64_t start = int64_t(p) + offset - pad;
    if (attrs.excludeOutside) {
      double sum = 0;
      for (int64_t k = 0; k < n; ++k) {
        if (start + k < 0 || start + k >= a.in)
          c[k] = 0;
        sum += c[k];
      }
      for (double &v : c)
        v /= sum == 0 ? 1 : sum;
    }
    for (int64_t k = 0; k < n; ++k)
      weights[y][std::clamp<int64_t>(start + k, 0, a.in - 1)] += c[k];
  }
  return weights;
}

/// Moves `axis` of `v` last, applies `apply` to the [rows, in] matrix it
/// makes, and moves the new last dimension back.
Value alongAxis(NodeImporter &n, Value v, int64_t axis, int64_t out,
                function_ref<Value(Value matrix)> apply) {
  auto type = cast<RankedTensorType>(v.getType());
  const int64_t rank = type.getRank();
  SmallVector<int64_t> perm = axisLastPermutation(rank, axis);
  Value moved = buildPermute(n.b, n.loc, v, perm);
  auto movedType = cast<RankedTensorType>(moved.getType());
  int64_t rows = movedType.getNumElements() / type.getDimSize(axis);
  Value matrix = buildReshape(n.b, n.loc, moved, {rows, type.getDimSize(axis)});
  Value result = apply(matrix);
  SmallVector<int64_t> shape(movedType.getShape());
  shape.back() = out;
  Value reshaped = buildReshape(n.b, n.loc, result, shape);
  SmallVector<int64_t> inverse(rank);
  for (int64_t d = 0; d < rank; ++d)
    inverse[perm[d]] = d;
  return buildPermute(n.b, n.loc, reshaped, inverse);
}

Value resizeAxis(NodeImporter &n, Value v, const ResizeAttributes &attrs,
                 const AxisResize &a) {
  auto type = cast<RankedTensorType>(v.getType());
  Type element = type.getElementType();
  std::vector<std::vector<double>> weights = interpolationWeights(attrs, a);
  if (attrs.mode == Mode::Nearest) {
    // Each row of the weights is one 1: a copy, gathered.
    SmallVector<int64_t> picks;
    for (const std::vector<double> &row : weights)
      picks.push_back(std::max_element(row.begin(), row.end()) - row.begin());
    auto indexType = RankedTensorType::get({a.out}, n.b.getI64Type());
    Value indices = arith::ConstantOp::create(
        n.b, n.loc, DenseElementsAttr::get(indexType, ArrayRef(picks)));
    SmallVector<int64_t> shape(type.getShape());
    shape[a.axis] = a.out;
    return GatherOp::create(n.b, n.loc, RankedTensorType::get(shape, element),
                            v, indices, a.axis, IntegerAttr());
  }
  auto weightType = RankedTensorType::get({a.out, a.in}, element);
  SmallVector<APFloat> values;
  for (const std::vector<double> &row : weights)
    for (double w : row) {
      APFloat value(w);
      bool lost;
      value.convert(cast<FloatType>(element).getFloatSemantics(),
                    APFloat::rmNearestTiesToEven, &lost);
      values.push_back(value);
    }
  Value matrix = arith::ConstantOp::create(
      n.b, n.loc, DenseElementsAttr::get(weightType, values));
  return alongAxis(n, v, a.axis, a.out, [&](Value rows) -> Value {
    auto rowsType = cast<RankedTensorType>(rows.getType());
    auto resultType =
        RankedTensorType::get({rowsType.getDimSize(0), a.out}, element);
    return MatmulOp::create(n.b, n.loc, resultType, rows, matrix,
                            /*transpose_lhs=*/false, /*transpose_rhs=*/true);
  });
}

FailureOr<ResizeAttributes> readAttributes(NodeImporter &n) {
  ResizeAttributes attrs;
  FailureOr<std::string> mode = n.stringAttr("mode", "nearest");
  FailureOr<std::string> coordinates =
      n.stringAttr("coordinate_transformation_mode", "half_pixel");
  FailureOr<std::string> nearest =
      n.stringAttr("nearest_mode", "round_prefer_floor");
  FailureOr<float> cubicA = n.floatAttr("cubic_coeff_a", -0.75f);
  FailureOr<int64_t> exclude = n.intAttr("exclude_outside", 0);
  FailureOr<int64_t> antialias = n.intAttr("antialias", 0);
  if (failed(mode) || failed(coordinates) || failed(nearest) ||
      failed(cubicA) || failed(exclude) || failed(antialias))
    return failure();
  if (*mode == "nearest")
    attrs.mode = Mode::Nearest;
  else if (*mode == "linear")
    attrs.mode = Mode::Linear;
  else if (*mode == "cubic")
    attrs.mode = Mode::Cubic;
  else
    return n.error() << "mode '" << *mode
                     << "' is not one of nearest, linear, cubic";
  static constexpr const char *kCoordinates[] = {
      "half_pixel",    "half_pixel_symmetric", "pytorch_half_pixel",
      "align_corners", "asymmetric",           "tf_half_pixel_for_nn"};
  if (*coordinates == "tf_crop_and_resize")
    return n.error() << "coordinate_transformation_mode 'tf_crop_and_resize' "
                        "(a region of interest with extrapolation) is not "
                        "supported";
  if (!llvm::is_contained(kCoordinates, *coordinates))
    return n.error() << "unknown coordinate_transformation_mode '"
                     << *coordinates << "'";
  static constexpr const char *kNearest[] = {
      "round_prefer_floor", "round_prefer_ceil", "floor", "ceil"};
  if (!llvm::is_contained(kNearest, *nearest))
    return n.error() << "unknown nearest_mode '" << *nearest << "'";
  if (*antialias && attrs.mode == Mode::Nearest)
    return n.error() << "antialias applies to linear and cubic modes, not "
                        "nearest";
  attrs.coordinates = *coordinates;
  attrs.nearest = *nearest;
  attrs.cubicA = *cubicA;
  attrs.excludeOutside = *exclude != 0;
  attrs.antialias = *antialias != 0;
  return attrs;
}

/// The resized axes with their sizes and scales, as the reference derives
/// them from `scales` or `sizes` (and axes, keep_aspect_ratio_policy).
FailureOr<SmallVector<AxisResize>> resizedAxes(NodeImporter &n,
                                               RankedTensorType type) {
  const int64_t rank = type.getRank();
  SmallVector<int64_t> axes;
  FailureOr<std::optional<SmallVector<int64_t>>> given = n.intsAttr("axes");
  if (failed(given))
    return failure();
  if (*given) {
    for (int64_t axis : **given) {
      FailureOr<int64_t> normalized = n.normalizeAxis(axis, rank);
      if (failed(normalized))
        return failure();
      axes.push_back(*normalized);
    }
  } else {
    axes = llvm::to_vector(llvm::seq<int64_t>(0, rank));
  }
  const bool hasScales =
      n.hasInput(2) && n.fixedInput(2) &&
      cast<RankedTensorType>(n.fixedInput(2).getType()).getNumElements();
  const bool hasSizes = n.hasInput(3);
  if (hasScales == hasSizes)
    return n.error() << "exactly one of 'scales' and 'sizes' must be given";
  SmallVector<AxisResize> result;
  if (hasSizes) {
    FailureOr<SmallVector<int64_t>> sizes = n.intsInput(3, "sizes");
    if (failed(sizes))
      return failure();
    if (sizes->size() != axes.size())
      return n.error() << "'sizes' has " << sizes->size() << " entries for "
                       << axes.size() << " axes";
    FailureOr<std::string> policy =
        n.stringAttr("keep_aspect_ratio_policy", "stretch");
    if (failed(policy))
      return failure();
    if (*policy != "stretch" && *policy != "not_larger" &&
        *policy != "not_smaller")
      return n.error() << "unknown keep_aspect_ratio_policy '" << *policy
                       << "'";
    double kept = *policy == "not_larger" ? INFINITY : 0;
    for (auto [axis, size] : llvm::zip(axes, *sizes)) {
      if (size <= 0)
        return n.error() << "'sizes' must be positive, got " << size;
      double scale = double(size) / double(type.getDimSize(axis));
      kept = *policy == "not_larger" ? std::min(kept, scale)
                                     : std::max(kept, scale);
      result.push_back({axis, type.getDimSize(axis), size, scale});
    }
    if (*policy != "stretch")
      for (AxisResize &a : result) {
        a.scale = kept;
        a.out = int64_t(kept * double(a.in) + 0.5);
      }
  } else {
    DenseElementsAttr scales = n.fixedInput(2);
    if (!isa<FloatType>(scales.getElementType()))
      return n.error() << "'scales' must be a float tensor";
    SmallVector<double> values;
    for (APFloat v : scales.getValues<APFloat>())
      values.push_back(v.convertToDouble());
    if (values.size() != axes.size())
      return n.error() << "'scales' has " << values.size() << " entries for "
                       << axes.size() << " axes";
    for (auto [axis, scale] : llvm::zip(axes, values)) {
      if (!(scale > 0))
        return n.error() << "'scales' must be positive, got " << scale;
      int64_t in = type.getDimSize(axis);
      int64_t out = int64_t(scale * double(in));
      if (out <= 0)
        return n.error() << "scale " << scale << " leaves axis " << axis
                         << " of size " << in << " empty";
      result.push_back({axis, in, out, scale});
    }
  }
  return result;
}

LogicalResult importResize(NodeImporter &n) {
  if (n.opset < 11)
    return n.error() << "Resize before opset 11 (its opset 10 form) is not "
                        "supported";
  SmallVector<StringRef> allowed = {"mode",
                                    "coordinate_transformation_mode",
                                    "cubic_coeff_a",
                                    "nearest_mode",
                                    "exclude_outside",
                                    "extrapolation_value"};
  if (n.opset >= 18)
    allowed.append({"antialias", "axes", "keep_aspect_ratio_policy"});
  if (failed(n.checkArity(1, 4)) || failed(n.checkAttributes(allowed)))
    return failure();
  if (n.hasInput(2) && !n.fixedInput(2))
    return n.error() << "'scales' must be a compile-time constant float "
                        "tensor";
  FailureOr<ResizeAttributes> attrs = readAttributes(n);
  FailureOr<Value> x = n.floatInput(0);
  if (failed(attrs) || failed(x))
    return failure();
  auto type = cast<RankedTensorType>(x->getType());
  if (!type.getElementType().isF32() && !type.getElementType().isF64())
    return n.error() << "Resize of " << type << " is not supported (f32, f64)";
  FailureOr<SmallVector<AxisResize>> axes = resizedAxes(n, type);
  if (failed(axes))
    return failure();
  Value result = *x;
  for (const AxisResize &a : *axes) {
    // As the reference: an axis that keeps its size at scale 1 is left.
    if (std::fabs(a.scale - 1) <= 1e-9 && a.out == a.in)
      continue;
    result = resizeAxis(n, result, *attrs, a);
  }
  return n.setResult(result);
}

} // namespace

void registerResizeOps(OpTable &table) { table["Resize"] = importResize; }

} // namespace lmc::onnx_import
