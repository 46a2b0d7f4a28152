// Round trip of the logical, conversion, slicing, max/min reduction and
// gather ops.
// RUN: lmc-opt %s | lmc-opt | FileCheck %s

// CHECK-LABEL: func.func @ops
func.func @ops(%a: tensor<2x3xf32>, %b: tensor<2x3xf32>, %m: tensor<2x3xi1>, %i: tensor<2x3xi64>, %t: tensor<5x3xf32>, %ids: tensor<4xi64>)
    -> (tensor<2x3xf32>, tensor<2x3xi1>, tensor<2x3xf32>, tensor<2x6xf32>, tensor<2x3xf32>, tensor<2x1xf32>, tensor<3xf32>, tensor<5x3xf32>) {
  // CHECK: lmc.abs %{{.*}} : tensor<2x3xf32>
  %0 = lmc.abs %a : tensor<2x3xf32>
  // CHECK: lmc.erf %{{.*}} : tensor<2x3xf32>
  %1 = lmc.erf %0 : tensor<2x3xf32>
  // CHECK: lmc.max %{{.*}}, %{{.*}} : tensor<2x3xf32>
  %2 = lmc.max %1, %b : tensor<2x3xf32>
  // CHECK: lmc.min %{{.*}}, %{{.*}} : tensor<2x3xf32>
  %3 = lmc.min %2, %b : tensor<2x3xf32>
  // CHECK: lmc.cmp lt, %{{.*}}, %{{.*}} : tensor<2x3xi64> -> tensor<2x3xi1>
  %c = lmc.cmp lt, %i, %i : tensor<2x3xi64> -> tensor<2x3xi1>
  // CHECK: lmc.not %{{.*}} : tensor<2x3xi1>
  %n = lmc.not %c : tensor<2x3xi1>
  // CHECK: lmc.and %{{.*}}, %{{.*}} : tensor<2x3xi1>
  %x = lmc.and %n, %m : tensor<2x3xi1>
  // CHECK: lmc.or %{{.*}}, %{{.*}} : tensor<2x3xi1>
  %o = lmc.or %x, %m : tensor<2x3xi1>
  // CHECK: lmc.convert %{{.*}} : tensor<2x3xi64> -> tensor<2x3xf32>
  %f = lmc.convert %i : tensor<2x3xi64> -> tensor<2x3xf32>
  // CHECK: lmc.concat axis = 1, %{{.*}}, %{{.*}} : tensor<2x3xf32>, tensor<2x3xf32> -> tensor<2x6xf32>
  %cat = lmc.concat axis = 1, %3, %f : tensor<2x3xf32>, tensor<2x3xf32> -> tensor<2x6xf32>
  // CHECK: lmc.slice %{{.*}}, start = [0, 5], stride = [1, -2] : tensor<2x6xf32> -> tensor<2x3xf32>
  %s = lmc.slice %cat, start = [0, 5], stride = [1, -2] : tensor<2x6xf32> -> tensor<2x3xf32>
  // CHECK: lmc.slice_grad %{{.*}}, start = [0, 5], stride = [1, -2] : tensor<2x3xf32> -> tensor<2x6xf32>
  %sg = lmc.slice_grad %s, start = [0, 5], stride = [1, -2] : tensor<2x3xf32> -> tensor<2x6xf32>
  // CHECK: lmc.reduce_max %{{.*}}, axes = [1] {keep_dims} : tensor<2x3xf32> -> tensor<2x1xf32>
  %rm = lmc.reduce_max %s, axes = [1] {keep_dims} : tensor<2x3xf32> -> tensor<2x1xf32>
  // CHECK: lmc.reduce_min %{{.*}}, axes = [0] : tensor<2x3xf32> -> tensor<3xf32>
  %rn = lmc.reduce_min %s, axes = [0] : tensor<2x3xf32> -> tensor<3xf32>
  // CHECK: lmc.gather %{{.*}}, %{{.*}}, axis = 0 : tensor<5x3xf32>, tensor<4xi64> -> tensor<4x3xf32>
  %g = lmc.gather %t, %ids, axis = 0 : tensor<5x3xf32>, tensor<4xi64> -> tensor<4x3xf32>
  // CHECK: lmc.gather %{{.*}}, %{{.*}}, axis = 0 padding_index = 1 : tensor<5x3xf32>, tensor<4xi64> -> tensor<4x3xf32>
  %p = lmc.gather %t, %ids, axis = 0 padding_index = 1 : tensor<5x3xf32>, tensor<4xi64> -> tensor<4x3xf32>
  // CHECK: lmc.scatter_add %{{.*}}, %{{.*}}, axis = 0 : tensor<4x3xf32>, tensor<4xi64> -> tensor<5x3xf32>
  %sa = lmc.scatter_add %g, %ids, axis = 0 : tensor<4x3xf32>, tensor<4xi64> -> tensor<5x3xf32>
  return %3, %o, %s, %sg, %s, %rm, %rn, %sa : tensor<2x3xf32>, tensor<2x3xi1>, tensor<2x3xf32>, tensor<2x6xf32>, tensor<2x3xf32>, tensor<2x1xf32>, tensor<3xf32>, tensor<5x3xf32>
}

// CHECK-LABEL: func.func @mode_select
func.func @mode_select(%a: tensor<3xf32>, %b: tensor<3xf32>) -> tensor<3xf32> {
  // CHECK: lmc.mode_select train(%{{.*}}) eval(%{{.*}}) : tensor<3xf32>
  %0 = lmc.mode_select train(%a) eval(%b) : tensor<3xf32>
  return %0 : tensor<3xf32>
}

// CHECK-LABEL: func.func @random_uniform
func.func @random_uniform(%key: tensor<i64>) -> (tensor<2x3xf32>, tensor<4xf64>) {
  // CHECK: lmc.random_uniform %{{.*}}, stream = -3 : tensor<i64> -> tensor<2x3xf32>
  %0 = lmc.random_uniform %key, stream = -3 : tensor<i64> -> tensor<2x3xf32>
  // CHECK: lmc.random_uniform %{{.*}}, stream = 5 : tensor<i64> -> tensor<4xf64>
  %1 = lmc.random_uniform %key, stream = 5 : tensor<i64> -> tensor<4xf64>
  return %0, %1 : tensor<2x3xf32>, tensor<4xf64>
}

// Integer arithmetic and data movement (index arithmetic an export computes
// at run time) and the integer running sum in its modes.
// CHECK-LABEL: func.func @integers
func.func @integers(%a: tensor<2x4xi64>, %b: tensor<2x4xi32>, %m: tensor<2x4xi1>) -> (tensor<2x4xi64>, tensor<2x4xi32>, tensor<4x2xi64>, tensor<2x6xi64>) {
  // CHECK: lmc.cumsum %{{.*}}, axis = 1 : tensor<2x4xi64>
  %0 = lmc.cumsum %a, axis = 1 : tensor<2x4xi64>
  // CHECK: lmc.cumsum %{{.*}}, axis = 0 exclusive reverse : tensor<2x4xi32>
  %1 = lmc.cumsum %b, axis = 0 exclusive reverse : tensor<2x4xi32>
  // CHECK: lmc.cumsum %{{.*}}, axis = 1 reverse : tensor<2x4xi64>
  %2 = lmc.cumsum %0, axis = 1 reverse : tensor<2x4xi64>
  // CHECK: lmc.add %{{.*}}, %{{.*}} : tensor<2x4xi64>
  %3 = lmc.add %2, %a : tensor<2x4xi64>
  // CHECK: lmc.mul %{{.*}}, %{{.*}} : tensor<2x4xi32>
  %4 = lmc.mul %1, %b : tensor<2x4xi32>
  // CHECK: lmc.neg %{{.*}} : tensor<2x4xi32>
  %5 = lmc.neg %4 : tensor<2x4xi32>
  // CHECK: lmc.select %{{.*}}, %{{.*}}, %{{.*}} : tensor<2x4xi1>, tensor<2x4xi64>
  %6 = lmc.select %m, %3, %a : tensor<2x4xi1>, tensor<2x4xi64>
  // CHECK: lmc.transpose %{{.*}}, perm = [1, 0] : tensor<2x4xi64> -> tensor<4x2xi64>
  %7 = lmc.transpose %6, perm = [1, 0] : tensor<2x4xi64> -> tensor<4x2xi64>
  // CHECK: lmc.slice %{{.*}}, start = [0, 1], stride = [1, 2] : tensor<2x4xi64> -> tensor<2x2xi64>
  %8 = lmc.slice %6, start = [0, 1], stride = [1, 2] : tensor<2x4xi64> -> tensor<2x2xi64>
  // CHECK: lmc.concat axis = 1, %{{.*}}, %{{.*}} : tensor<2x4xi64>, tensor<2x2xi64> -> tensor<2x6xi64>
  %9 = lmc.concat axis = 1, %6, %8 : tensor<2x4xi64>, tensor<2x2xi64> -> tensor<2x6xi64>
  return %6, %5, %7, %9 : tensor<2x4xi64>, tensor<2x4xi32>, tensor<4x2xi64>, tensor<2x6xi64>
}
