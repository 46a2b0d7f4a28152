// Our own main (not GTest::gtest_main): lmc_runtime also defines main(), and
// an object-file main keeps the linker from pulling that one in.
#include <gtest/gtest.h>

int main(int argc, char **argv) {
  testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
