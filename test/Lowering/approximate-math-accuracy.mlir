// The approximations lmc-approximate-math substitutes are accurate to a few
// f32 ulps against the f64 libm functions (which the pass leaves alone):
// 400,000 points of [-10, 10] (exp: [-80, 80], relative error), run on
// the CPU. Each line prints 1 when the largest error is below its bound.
// Measured: exp 8.2e-8 relative (libm's expf: 6.0e-8); erf 3.3e-7 absolute
// (libm's erff: 4.9e-8);
// tanh 2.6e-7 absolute and relative (libm's tanhf: 9.9e-8 / 1.6e-7).
// RUN: lmc-opt %s --pass-pipeline="builtin.module(lmc-approximate-math,convert-scf-to-cf,convert-vector-to-llvm,convert-math-to-llvm,convert-math-to-libm,convert-arith-to-llvm,convert-cf-to-llvm,convert-func-to-llvm,reconcile-unrealized-casts)" \
// RUN:   | mlir-runner -e main -entry-point-result=void -shared-libs=%llvm_lib_dir/libmlir_c_runner_utils.so | FileCheck %s

// CHECK: 1
// CHECK-NEXT: 1
// CHECK-NEXT: 1
// CHECK-NEXT: 1

// The largest |f32 approximation - f64 reference| over n points from
// `start` by `step`, divided by |reference| when `relative`.
func.func @max_error(%which: index, %start: f32, %step: f32, %relative: i1) -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = arith.constant 400000 : index
  %zero = arith.constant 0.0 : f64
  %tiny = arith.constant 1.0e-30 : f64
  %worst = scf.for %i = %c0 to %n step %c1 iter_args(%max = %zero) -> (f64) {
    %ii = arith.index_cast %i : index to i32
    %fi = arith.sitofp %ii : i32 to f32
    %x = math.fma %fi, %step, %start : f32
    %xd = arith.extf %x : f32 to f64
    %pair:2 = scf.index_switch %which -> f32, f64
    case 0 {
      %a = math.exp %x : f32
      %t = math.exp %xd : f64
      scf.yield %a, %t : f32, f64
    }
    case 1 {
      %a = math.erf %x : f32
      %t = math.erf %xd : f64
      scf.yield %a, %t : f32, f64
    }
    default {
      %a = math.tanh %x : f32
      %t = math.tanh %xd : f64
      scf.yield %a, %t : f32, f64
    }
    %ad = arith.extf %pair#0 : f32 to f64
    %d = arith.subf %ad, %pair#1 : f64
    %e = math.absf %d : f64
    %mag = math.absf %pair#1 : f64
    %den = arith.maximumf %mag, %tiny : f64
    %q = arith.divf %e, %den : f64
    %err = arith.select %relative, %q, %e : f64
    %m = arith.maximumf %max, %err : f64
    scf.yield %m : f64
  }
  return %worst : f64
}

func.func @below(%error: f64, %bound: f64) {
  %ok = arith.cmpf olt, %error, %bound : f64
  vector.print %ok : i1
  return
}

func.func @main() {
  %exp = arith.constant 0 : index
  %erf = arith.constant 1 : index
  %tanh = arith.constant 2 : index
  %true = arith.constant true
  %false = arith.constant false
  %m80 = arith.constant -80.0 : f32
  %s80 = arith.constant 4.0e-4 : f32
  %m10 = arith.constant -10.0 : f32
  %s10 = arith.constant 5.0e-5 : f32
  %b3 = arith.constant 3.0e-7 : f64
  %b4 = arith.constant 4.0e-7 : f64
  %e0 = func.call @max_error(%exp, %m80, %s80, %true) : (index, f32, f32, i1) -> f64
  func.call @below(%e0, %b3) : (f64, f64) -> ()
  %e1 = func.call @max_error(%erf, %m10, %s10, %false) : (index, f32, f32, i1) -> f64
  func.call @below(%e1, %b4) : (f64, f64) -> ()
  %e2 = func.call @max_error(%tanh, %m10, %s10, %false) : (index, f32, f32, i1) -> f64
  func.call @below(%e2, %b3) : (f64, f64) -> ()
  %e3 = func.call @max_error(%tanh, %m10, %s10, %true) : (index, f32, f32, i1) -> f64
  func.call @below(%e3, %b3) : (f64, f64) -> ()
  return
}
