#include "comm/comm.h"
#include "comm/watchdog.h"

#include "test_util.h"

#include <chrono>
#include <map>
#include <string>
#include <thread>

using namespace lmc::rt;

namespace {

LaunchInfo detect(const std::map<std::string, std::string> &env) {
  return detectLaunch([&](const char *name) -> const char * {
    auto it = env.find(name);
    return it == env.end() ? nullptr : it->second.c_str();
  });
}

TEST(Launch, NoLauncherIsOneProcess) {
  LaunchInfo info = detect({});
  EXPECT_EQ(info.rank, 0);
  EXPECT_EQ(info.size, 1);
  EXPECT_EQ(info.launcher, "");
  EXPECT_EQ(detect({{"WORLD_SIZE", "1"}, {"RANK", "0"}}).size, 1);
}

TEST(Launch, ReadsOpenMpiPmiAndSlurm) {
  LaunchInfo ompi = detect({{"OMPI_COMM_WORLD_RANK", "3"},
                            {"OMPI_COMM_WORLD_SIZE", "8"},
                            {"OMPI_COMM_WORLD_LOCAL_SIZE", "4"}});
  EXPECT_EQ(ompi.launcher, "Open MPI");
  EXPECT_EQ(ompi.rank, 3);
  EXPECT_EQ(ompi.size, 8);
  EXPECT_EQ(ompi.localSize, 4);
  LaunchInfo pmi = detect({{"PMI_RANK", "1"}, {"PMI_SIZE", "2"}});
  EXPECT_EQ(pmi.launcher, "PMI");
  EXPECT_EQ(pmi.rank, 1);
  EXPECT_EQ(pmi.localSize, 1);
  LaunchInfo slurm = detect({{"SLURM_PROCID", "5"},
                             {"SLURM_NTASKS", "6"},
                             {"SLURM_NTASKS_PER_NODE", "2(x3)"}});
  EXPECT_EQ(slurm.launcher, "Slurm");
  EXPECT_EQ(slurm.rank, 5);
  EXPECT_EQ(slurm.size, 6);
  EXPECT_EQ(slurm.localSize, 1); // uneven-node syntax: not a count
  // Open MPI's own variables win over Slurm's when mpirun runs inside srun.
  EXPECT_EQ(detect({{"OMPI_COMM_WORLD_RANK", "0"},
                    {"OMPI_COMM_WORLD_SIZE", "2"},
                    {"SLURM_PROCID", "0"},
                    {"SLURM_NTASKS", "1"}})
                .size,
            2);
}

TEST(Launch, ReadsTorchrun) {
  LaunchInfo info = detect({{"RANK", "3"},
                            {"WORLD_SIZE", "4"},
                            {"LOCAL_WORLD_SIZE", "2"},
                            {"MASTER_ADDR", "node0"},
                            {"MASTER_PORT", "29500"},
                            // srun's, inherited by torchrun's workers
                            {"SLURM_PROCID", "1"},
                            {"SLURM_NTASKS", "2"}});
  EXPECT_EQ(info.launcher, "torchrun");
  EXPECT_EQ(info.rank, 3);
  EXPECT_EQ(info.size, 4);
  EXPECT_EQ(info.localSize, 2);
  EXPECT_EQ(info.masterAddr, "node0");
  EXPECT_EQ(info.masterPort, 29500);
  EXPECT_FALSE(info.agentStore);
  EXPECT_EQ(info.restartCount, 0);
}

// torchrun 2.x's workers: the agent's store, the attempt's restart count
// (the flag is Python's str(bool)).
TEST(Launch, ReadsTorchElasticAgentStoreAndRestarts) {
  std::map<std::string, std::string> env = {
      {"RANK", "0"},
      {"WORLD_SIZE", "2"},
      {"MASTER_ADDR", "127.0.0.1"},
      {"MASTER_PORT", "29500"},
      {"TORCHELASTIC_USE_AGENT_STORE", "True"},
      {"TORCHELASTIC_RESTART_COUNT", "3"}};
  LaunchInfo info = detect(env);
  EXPECT_TRUE(info.agentStore);
  EXPECT_EQ(info.restartCount, 3);
  env["TORCHELASTIC_USE_AGENT_STORE"] = "False";
  EXPECT_FALSE(detect(env).agentStore);
  env["TORCHELASTIC_RESTART_COUNT"] = "-1";
  EXPECT_ERROR_CONTAINS(detect(env), "TORCHELASTIC_RESTART_COUNT='-1'");
  EXPECT_EQ(detect({{"SLURM_PROCID", "0"},
                    {"SLURM_NTASKS", "1"},
                    {"SLURM_RESTART_COUNT", "2"}})
                .restartCount,
            2);
}

TEST(Launch, RejectsMalformed) {
  EXPECT_ERROR_CONTAINS(detect({{"OMPI_COMM_WORLD_RANK", "2"},
                                {"OMPI_COMM_WORLD_SIZE", "2"}}),
                        "OMPI_COMM_WORLD_RANK=2 is not below "
                        "OMPI_COMM_WORLD_SIZE=2");
  EXPECT_ERROR_CONTAINS(
      detect({{"PMI_RANK", "0"}, {"PMI_SIZE", "two"}}),
      "environment variable PMI_SIZE='two' is not a valid process count");
  EXPECT_ERROR_CONTAINS(
      detect({{"SLURM_PROCID", "-1"}, {"SLURM_NTASKS", "2"}}),
      "SLURM_PROCID='-1'");
  EXPECT_ERROR_CONTAINS(detect({{"WORLD_SIZE", "4"}, {"RANK", "1"}}),
                        "WORLD_SIZE=4 (a torchrun-style launch) needs RANK, "
                        "MASTER_ADDR and MASTER_PORT too");
  const std::map<std::string, std::string> torchrun = {
      {"RANK", "1"},
      {"WORLD_SIZE", "2"},
      {"MASTER_ADDR", "localhost"},
      {"MASTER_PORT", "29500"}};
  auto with = [&](const char *name, const char *value) {
    auto env = torchrun;
    env[name] = value;
    return env;
  };
  EXPECT_ERROR_CONTAINS(detect(with("RANK", "2")),
                        "RANK=2 is not below WORLD_SIZE=2");
  EXPECT_ERROR_CONTAINS(detect(with("MASTER_PORT", "70000")),
                        "MASTER_PORT=70000 is not a TCP port");
  EXPECT_ERROR_CONTAINS(detect(with("MASTER_PORT", "http")),
                        "environment variable MASTER_PORT='http'");
  EXPECT_ERROR_CONTAINS(detect(with("MASTER_ADDR", "")),
                        "needs RANK, MASTER_ADDR and MASTER_PORT");
}

TEST(Launch, SingleProcessCollectivesAreIdentities) {
  std::unique_ptr<Communicator> comm = connect(LaunchInfo{}, 600);
  float values[2] = {1.5f, -2.0f};
  comm->allReduceSum(values, 2);
  comm->broadcast(values, sizeof values);
  EXPECT_EQ(values[0], 1.5f);
  EXPECT_EQ(values[1], -2.0f);
  EXPECT_EQ(comm->rank(), 0);
  EXPECT_EQ(comm->size(), 1);
}

// Collectives that finish before their deadline leave the process alone,
// however often the watchdog is re-armed (the firing case ends the process:
// test/e2e/distributed/collective-timeout.test).
TEST(Watchdog, FinishedCollectivesNeverFire) {
  CollectiveWatchdog watchdog("process 0 of 2", 0.05);
  for (int i = 0; i < 2000; ++i) {
    CollectiveWatchdog::Watch watch = watchdog.watch("all-reduce", 4);
    CollectiveWatchdog::Watch moved = std::move(watch);
  }
  // Disarmed: waiting past the timeout is fine.
  std::this_thread::sleep_for(std::chrono::milliseconds(120));
}

} // namespace
