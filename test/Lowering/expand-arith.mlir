// RUN: lmc-opt %s -lmc-expand-arith | FileCheck %s

// maximumf/minimumf stay (LLVM lowers them to llvm.maximum/minimum, which
// its loop vectorizer reduces); upstream's arith-expand would turn them
// into compares and selects.
// CHECK-LABEL: func.func @keeps_min_max
// CHECK: arith.maximumf %arg0, %arg1 : f32
// CHECK: arith.minimumf %arg0, %arg1 : f32
// CHECK-NOT: arith.select
func.func @keeps_min_max(%a: f32, %b: f32) -> (f32, f32) {
  %0 = arith.maximumf %a, %b : f32
  %1 = arith.minimumf %a, %b : f32
  return %0, %1 : f32, f32
}

// bf16 truncation becomes integer arithmetic (round to nearest even).
// CHECK-LABEL: func.func @bf16
// CHECK-NOT: arith.truncf
// CHECK: arith.bitcast %arg0 : f32 to i32
// CHECK: arith.shrui
// CHECK: arith.trunci
// CHECK: arith.bitcast {{.*}} : i16 to bf16
func.func @bf16(%a: f32) -> bf16 {
  %0 = arith.truncf %a : f32 to bf16
  return %0 : bf16
}

// Floor division (from affine lowering) is expanded.
// CHECK-LABEL: func.func @floordiv
// CHECK-NOT: arith.floordivsi
// CHECK: arith.divsi
func.func @floordiv(%a: index, %b: index) -> index {
  %0 = arith.floordivsi %a, %b : index
  return %0 : index
}
