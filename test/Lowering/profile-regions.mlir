// RUN: lmc-opt %s -lmc-profile-regions -mlir-print-local-scope | FileCheck %s

// Every call of a step function to an outlined loop nest or a runtime
// function is bracketed by lmc_rt_profile_begin/end with its region number;
// other calls, the outlined nests' own bodies and functions without a body
// are left alone. The module lists the regions in order: the caller, the
// kind (loop, or the runtime function without lmc_rt_) and a label from
// the call's location: its node names (at most three, the rest counted),
// "(backward)" for code lmc-autodiff built, "?" for no name.

// CHECK-LABEL: module attributes {lmc.profile_regions = [
// CHECK-SAME: "step loop /blocks.0/fc/MatMul+/blocks.0/fc/Add",
// CHECK-SAME: "step matmul_f32 /blocks.0/fc/MatMul(backward)",
// CHECK-SAME: "step loop model.lmc:3:7",
// CHECK-SAME: "step loop a+b+c+2-more",
// CHECK-SAME: "step loop ?",
// CHECK-SAME: "second loop name_with_spaces"]}
module {
  // CHECK-DAG: func.func private @lmc_rt_profile_begin() -> i64
  // CHECK-DAG: func.func private @lmc_rt_profile_end(i64, i64)
  func.func private @lmc_rt_matmul_f32(!llvm.ptr, !llvm.ptr, !llvm.ptr, i64, i64, i64, i64, i64, i64, i64)
  func.func private @helper()
  func.func private @lmc_rt_thread_count() -> i64

  // CHECK-LABEL: func.func @step
  // CHECK: %[[T0:.*]] = call @lmc_rt_profile_begin() : () -> i64
  // CHECK-NEXT: call @step_loop0()
  // CHECK-NEXT: %[[R0:.*]] = arith.constant 0 : i64
  // CHECK-NEXT: call @lmc_rt_profile_end(%[[R0]], %[[T0]])
  // CHECK: %[[T1:.*]] = call @lmc_rt_profile_begin()
  // CHECK-NEXT: call @lmc_rt_matmul_f32(
  // CHECK-NEXT: %[[R1:.*]] = arith.constant 1 : i64
  // CHECK-NEXT: call @lmc_rt_profile_end(%[[R1]], %[[T1]])
  // CHECK: call @lmc_rt_profile_begin()
  // CHECK-NEXT: call @step_loop0()
  // CHECK: call @lmc_rt_profile_begin()
  // CHECK-NEXT: call @step_loop0()
  // CHECK: call @lmc_rt_profile_begin()
  // CHECK-NEXT: call @step_loop0()
  // CHECK: call @lmc_rt_profile_end
  // CHECK-NEXT: call @lmc_rt_thread_count() : () -> i64
  // CHECK-NEXT: call @helper() : () -> ()
  // CHECK-NEXT: return
  func.func @step(%p: !llvm.ptr) {
    %c1 = arith.constant 1 : i64
    %c0 = arith.constant 0 : i64
    func.call @step_loop0() : () -> () loc(fused["/blocks.0/fc/MatMul", "/blocks.0/fc/Add"])
    func.call @lmc_rt_matmul_f32(%p, %p, %p, %c1, %c1, %c1, %c1, %c0, %c0, %c1) : (!llvm.ptr, !llvm.ptr, !llvm.ptr, i64, i64, i64, i64, i64, i64, i64) -> () loc(fused<"backward">["/blocks.0/fc/MatMul"])
    func.call @step_loop0() : () -> () loc("model.lmc":3:7)
    func.call @step_loop0() : () -> () loc(fused["a", "b", "c", "d", "e", "a"])
    func.call @step_loop0() : () -> () loc(unknown)
    %threads = func.call @lmc_rt_thread_count() : () -> i64
    func.call @helper() : () -> ()
    return
  }

  // An outlined nest is a region, not a step: nothing inside it is timed.
  // CHECK-LABEL: func.func private @step_loop0
  // CHECK-NOT: lmc_rt_profile
  // CHECK: return
  func.func private @step_loop0() attributes {lmc.outlined} {
    func.call @helper() : () -> ()
    return
  }

  // CHECK-LABEL: func.func @second
  // CHECK: arith.constant 5 : i64
  func.func @second() {
    func.call @step_loop0() : () -> () loc("name with spaces")
    return
  }
}
