//===- tcp_store.h - The key-value store of a torchrun-style rendezvous ---===//
//
// Processes started by torchrun (or any launcher that sets RANK, WORLD_SIZE,
// MASTER_ADDR and MASTER_PORT) find each other through a small key-value
// store that rank 0 serves on MASTER_PORT, as PyTorch's TCPStore does: each
// process publishes its Gloo address there and reads the others'
// (gloo::rendezvous::Context::connectFullMesh).
//
// Wire format, one request per message: 'S' <u32 key length> <key> <u32
// value length> <value>, answered by 'K'; 'G' <u32 key length> <key>,
// answered by <u32 value length> <value> once the key is set. Lengths are
// little-endian; keys are at most 4 KiB and values 64 MiB.
//
//===----------------------------------------------------------------------===//
#ifndef LMC_RUNTIME_TCP_STORE_H
#define LMC_RUNTIME_TCP_STORE_H

#include <gloo/rendezvous/store.h>

#include <chrono>
#include <memory>
#include <string>
#include <vector>

namespace lmc::rt {

class TcpStore final : public gloo::rendezvous::Store {
public:
  /// With `serve` (rank 0) listens on `port` first; then connects to
  /// `host:port`, retrying until `timeout` (the server may start later).
  /// Every get waits at most `timeout` for its key.
  TcpStore(const std::string &host, int port, bool serve,
           std::chrono::milliseconds timeout);
  ~TcpStore() override;

  void set(const std::string &key, const std::vector<char> &data) override;
  std::vector<char> get(const std::string &key) override;
  void wait(const std::vector<std::string> &keys) override;
  void wait(const std::vector<std::string> &keys,
            const std::chrono::milliseconds &timeout) override;

private:
  class Server;
  std::unique_ptr<Server> server_;
  int fd_ = -1;
  std::string where_; // host:port, for messages
  std::chrono::milliseconds timeout_;
};

} // namespace lmc::rt

#endif // LMC_RUNTIME_TCP_STORE_H
