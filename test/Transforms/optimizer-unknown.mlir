// The optimizer option is an enumeration whose choices are
// lmc::kOptimizerNames: another name is refused when the pipeline is parsed.
// RUN: not lmc-opt %s -lmc-optimizer=optimizer=lion 2>&1 | FileCheck %s

// CHECK: for the --optimizer option: Cannot find option named 'lion'!
module {
}
