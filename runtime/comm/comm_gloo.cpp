//===- comm_gloo.cpp - Collectives over Gloo after a TCP rendezvous -------===//
//
// A torchrun-style launch (RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT)
// has no MPI runtime to connect the processes: they meet at a c10d store on
// MASTER_PORT (torchrun 2.x's agent serves it; else rank 0), every process
// publishes its Gloo TCP address there and Gloo connects them all to all.
// Gloo's operations time out by themselves (--collective-timeout), and a
// process that dies closes its connections, which fails the others'
// operations at once.
//
//===----------------------------------------------------------------------===//

#include "comm/comm.h"

#include "base/error.h"
#include "comm/tcp_store.h"

#include <gloo/allgather.h>
#include <gloo/allgatherv.h>
#include <gloo/allreduce.h>
#include <gloo/broadcast.h>
#include <gloo/math.h>
#include <gloo/rendezvous/context.h>
#include <gloo/rendezvous/prefix_store.h>
#include <gloo/transport/tcp/device.h>

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <random>
#include <unistd.h>

namespace lmc::rt {

namespace {

/// What the processes share: the store and the TCP device every context
/// (the job's, and those of split()) is made from.
struct GlooJob {
  std::unique_ptr<TcpStore> store;
  /// `store` seen through this attempt's key prefix (agreeOnAttempt).
  std::unique_ptr<gloo::rendezvous::PrefixStore> attempt;
  std::shared_ptr<gloo::transport::Device> device;
  std::chrono::milliseconds timeout;
  int contexts = 0; // made so far, to name each one's store keys
};

/// The address Gloo listens on: the interface GLOO_SOCKET_IFNAME names (as
/// in PyTorch), else this machine's host name, else the loopback address
/// when the rendezvous is on this machine.
std::shared_ptr<gloo::transport::Device>
createDevice(const std::string &masterAddr) {
  gloo::transport::tcp::attr attr;
  if (const char *iface = std::getenv("GLOO_SOCKET_IFNAME")) {
    attr.iface = iface;
    return gloo::transport::tcp::CreateDevice(attr);
  }
  char host[256] = {};
  if (::gethostname(host, sizeof host - 1) == 0) {
    attr.hostname = host;
    try {
      return gloo::transport::tcp::CreateDevice(attr);
    } catch (const std::exception &) {
      // Not resolvable here: fall through.
    }
  }
  LMC_CHECK(masterAddr == "localhost" || masterAddr.rfind("127.", 0) == 0,
            "cannot find this machine's address for Gloo (host name '", host,
            "' does not resolve); set GLOO_SOCKET_IFNAME to the network "
            "interface to use");
  attr.hostname = "127.0.0.1";
  return gloo::transport::tcp::CreateDevice(attr);
}

class GlooCommunicator final : public Communicator {
public:
  /// Connects process `rank` of `size` (every one of them calls this with
  /// the same `job.contexts`).
  GlooCommunicator(std::shared_ptr<GlooJob> job, int rank, int size)
      : job_(std::move(job)), rank_(rank), size_(size) {
    auto context = std::make_shared<gloo::rendezvous::Context>(rank, size);
    context->setTimeout(job_->timeout);
    gloo::rendezvous::PrefixStore store(
        concat("context", job_->contexts++), *job_->attempt);
    guard("rendezvous", 0, [&] { context->connectFullMesh(store, job_->device); });
    context_ = std::move(context);
  }

  int rank() const override { return rank_; }
  int size() const override { return size_; }

  void allReduceSum(float *data, size_t count) override {
    allReduce(data, count, &gloo::sum<float>);
  }
  void allReduceMax(float *data, size_t count) override {
    allReduce(data, count, &gloo::max<float>);
  }

  void broadcast(void *data, size_t bytes) override {
    guard("broadcast", bytes, [&] {
      gloo::BroadcastOptions options(context_);
      options.setOutput(static_cast<uint8_t *>(data), bytes);
      options.setRoot(0);
      gloo::broadcast(options);
    });
  }

  void allGather(const void *in, void *out, size_t bytes) override {
    guard("all-gather", bytes * size_t(size_), [&] {
      gloo::AllgatherOptions options(context_);
      options.setInput(const_cast<uint8_t *>(static_cast<const uint8_t *>(in)),
                       bytes);
      options.setOutput(static_cast<uint8_t *>(out), bytes * size_t(size_));
      gloo::allgather(options);
    });
  }

  // Gloo's reduce-scatter is an algorithm of its older interface; an
  // all-reduce moves twice the bytes but gives each process its part.
  void reduceScatterSum(float *data,
                        const std::vector<size_t> &counts) override {
    size_t offset = 0, total = 0;
    for (size_t r = 0; r < counts.size(); ++r) {
      if (int(r) < rank_)
        offset += counts[r];
      total += counts[r];
    }
    allReduceSum(data, total);
    std::memmove(data, data + offset, counts[size_t(rank_)] * sizeof(float));
  }

  void allGatherParts(float *data, const std::vector<size_t> &counts) override {
    size_t offset = 0, total = 0;
    for (size_t r = 0; r < counts.size(); ++r) {
      if (int(r) < rank_)
        offset += counts[r];
      total += counts[r];
    }
    // Gloo copies the input into the output: not from the same place.
    std::vector<float> own(data + offset, data + offset + counts[size_t(rank_)]);
    guard("all-gather", total * sizeof(float), [&] {
      gloo::AllgathervOptions options(context_);
      options.setInput(own.data(), own.size());
      options.setOutput(data, counts);
      gloo::allgatherv(options);
    });
  }

  std::unique_ptr<Communicator> split(int color, int key) override {
    // Every process learns every (color, key); a group ranks its members
    // by key, then by rank.
    int mine[2] = {color, key};
    std::vector<int> all(2 * size_t(size_));
    allGather(mine, all.data(), sizeof mine);
    std::vector<std::pair<int, int>> members; // (key, rank)
    for (int r = 0; r < size_; ++r)
      if (all[2 * size_t(r)] == color)
        members.push_back({all[2 * size_t(r) + 1], r});
    std::sort(members.begin(), members.end());
    const int groupRank = int(
        std::find(members.begin(), members.end(), std::make_pair(key, rank_)) -
        members.begin());
    // Every process makes one context per split, in the same order, so the
    // groups' store keys differ by color only.
    auto job = job_;
    const int first = job->contexts;
    job->contexts = first + 1;
    gloo::rendezvous::PrefixStore store(concat("split", first, "/", color),
                                        *job->attempt);
    auto context = std::make_shared<gloo::rendezvous::Context>(
        groupRank, int(members.size()));
    context->setTimeout(job->timeout);
    guard("rendezvous", 0,
          [&] { context->connectFullMesh(store, job->device); });
    return std::unique_ptr<Communicator>(
        new GlooCommunicator(job, groupRank, int(members.size()),
                             std::move(context)));
  }

  [[noreturn]] void abort(int exitCode) override {
    // torchrun ends the other workers when one exits with an error; without
    // it they fail on the closed connections.
    std::fflush(nullptr);
    std::_Exit(exitCode);
  }

private:
  GlooCommunicator(std::shared_ptr<GlooJob> job, int rank, int size,
                   std::shared_ptr<gloo::Context> context)
      : job_(std::move(job)), context_(std::move(context)), rank_(rank),
        size_(size) {}

  void allReduce(float *data, size_t count,
                 void (*reduce)(void *, const void *, const void *, size_t)) {
    if (count == 0)
      return;
    guard("all-reduce", count * sizeof(float), [&] {
      gloo::AllreduceOptions options(context_);
      options.setOutput(data, count);
      options.setReduceFunction(reduce);
      gloo::allreduce(options);
    });
  }

  /// Runs a Gloo operation; its exceptions (a timeout, a lost peer) become
  /// lmc errors naming the collective.
  template <typename Op>
  void guard(const char *collective, size_t bytes, Op &&op) {
    try {
      op();
    } catch (const Error &) {
      throw;
    } catch (const std::exception &e) {
      throw Error(concat(collective, " of ", bytes, " bytes failed: ",
                         e.what(), " (another process died, or it waited "
                         "more than --collective-timeout)"));
    }
  }

  std::shared_ptr<GlooJob> job_;
  std::shared_ptr<gloo::Context> context_;
  int rank_, size_;
};

std::string randomHex() {
  std::random_device entropy;
  const uint64_t bits = (uint64_t(entropy()) << 32) ^ entropy();
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", (unsigned long long)bits);
  return hex;
}

std::string text(const std::vector<char> &bytes) {
  return std::string(bytes.begin(), bytes.end());
}

/// The key prefix of this attempt in a store that outlives attempts.
/// torchrun's agent keeps one store for every restart of the job, and the
/// restart counts of two nodes need not agree (a node restarted by the
/// other's failure does not count it), so the keys of a dead attempt
/// (its processes' Gloo addresses) would be read as this one's. Rank 0
/// names a random generation; every other rank asks rank 0 of the
/// generation it reads whether it is alive (under a random nonce of its
/// own, which no dead process can have answered), reading the generation
/// again while no answer comes.
std::string agreeOnAttempt(TcpStore &store, int rank, int size,
                           std::chrono::milliseconds timeout) {
  const std::string latest = "lmc/generation";
  auto ask = [](const std::string &generation, int r) {
    return concat("lmc/", generation, "/ask/", r);
  };
  auto answer = [](const std::string &generation, const std::string &nonce) {
    return concat("lmc/", generation, "/answer/", nonce);
  };
  if (rank == 0) {
    const std::string generation = randomHex();
    store.set(latest, std::vector<char>(generation.begin(), generation.end()));
    for (int r = 1; r < size; ++r)
      store.set(answer(generation, text(store.get(ask(generation, r)))),
                {'1'});
    return concat("lmc/", generation);
  }
  const std::string nonce = randomHex();
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  std::string generation = text(store.get(latest));
  const std::vector<char> nonceBytes(nonce.begin(), nonce.end());
  store.set(ask(generation, rank), nonceBytes);
  while (!store.waitAtMost({answer(generation, nonce)},
                           std::chrono::milliseconds(500))) {
    LMC_CHECK(std::chrono::steady_clock::now() < deadline,
              "rendezvous: rank 0 did not answer at ", store.where(),
              " within ", timeout.count() / 1000,
              " s (it did not start, or ended)");
    const std::string newer = text(store.get(latest));
    if (newer != generation) { // a rank 0 that started after the first read
      generation = newer;
      store.set(ask(generation, rank), nonceBytes);
    }
  }
  return concat("lmc/", generation);
}

} // namespace

std::unique_ptr<Communicator> connectGloo(const LaunchInfo &launch,
                                          double timeoutSeconds) {
  // A peer that died closes its sockets: writing to them must fail the
  // collective with a message, not end this process with SIGPIPE.
  std::signal(SIGPIPE, SIG_IGN);
  auto job = std::make_shared<GlooJob>();
  // 0 waits "forever": a year.
  job->timeout = std::chrono::milliseconds(
      timeoutSeconds > 0 ? int64_t(timeoutSeconds * 1000)
                         : int64_t(365) * 24 * 3600 * 1000);
  job->store = std::make_unique<TcpStore>(launch.masterAddr, launch.masterPort,
                                          /*serve=*/launch.rank == 0 &&
                                              !launch.agentStore,
                                          job->timeout);
  const std::string prefix =
      launch.agentStore ? agreeOnAttempt(*job->store, launch.rank,
                                         launch.size, job->timeout)
                        : "lmc";
  job->attempt =
      std::make_unique<gloo::rendezvous::PrefixStore>(prefix, *job->store);
  job->device = createDevice(launch.masterAddr);
  return std::make_unique<GlooCommunicator>(job, launch.rank, launch.size);
}

} // namespace lmc::rt
