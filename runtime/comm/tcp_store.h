//===- tcp_store.h - The key-value store of a torchrun-style rendezvous ---===//
//
// Processes started by torchrun (or any launcher that sets RANK, WORLD_SIZE,
// MASTER_ADDR and MASTER_PORT) find each other through a small key-value
// store at MASTER_ADDR:MASTER_PORT: each process publishes its Gloo address
// there and reads the others' (gloo::rendezvous::Context::connectFullMesh).
//
// The store speaks PyTorch's c10d TCPStore protocol, so that the store
// torchrun 2.x's agent hosts (TORCHELASTIC_USE_AGENT_STORE=True) serves
// lmc's processes as it serves PyTorch's. Without an agent's store, rank 0
// serves one itself (the same protocol, the queries lmc sends).
//
// Wire format (torch/csrc/distributed/c10d/TCPStore.cpp and
// TCPStoreBackend.hpp; integers little-endian): every query is one byte of
// QueryType followed by its arguments; a string or byte vector is a u64
// length and the bytes, a key list a u64 count and the strings.
//   VALIDATE (0) u32 magic 0x3C85F7CE      -> nothing (a wrong one: closed)
//   PING (13) u32 nonce                    -> u32 nonce
//   SET (1) key value                      -> nothing
//   GET (3) key                            -> value ("" when unset)
//   WAIT (6) keys                          -> u8 STOP_WAITING 0 once all set
//   CANCEL_WAIT (12), during a WAIT        -> u8 WAIT_CANCELED 1 (possibly
//                                             after the STOP_WAITING)
// An unknown query closes the connection, as PyTorch's server does.
//
//===----------------------------------------------------------------------===//
#ifndef LMC_RUNTIME_TCP_STORE_H
#define LMC_RUNTIME_TCP_STORE_H

#include <gloo/rendezvous/store.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace lmc::rt {

class TcpStore final : public gloo::rendezvous::Store {
public:
  /// With `serve` listens on `port` first; then connects to `host:port`,
  /// retrying until `timeout` (the server may start later), and checks
  /// that a c10d store answers. Every get and wait waits at most `timeout`
  /// for its keys.
  TcpStore(const std::string &host, int port, bool serve,
           std::chrono::milliseconds timeout);
  ~TcpStore() override;

  void set(const std::string &key, const std::vector<char> &data) override;
  /// Waits for the key, then returns its value.
  std::vector<char> get(const std::string &key) override;
  void wait(const std::vector<std::string> &keys) override;
  void wait(const std::vector<std::string> &keys,
            const std::chrono::milliseconds &timeout) override;
  /// Like wait(keys, timeout), but false instead of an error when the
  /// time is up.
  bool waitAtMost(const std::vector<std::string> &keys,
                  std::chrono::milliseconds timeout);

  /// host:port, for messages.
  const std::string &where() const { return where_; }

private:
  class Server;
  std::unique_ptr<Server> server_;
  int fd_ = -1;
  std::string where_;
  std::chrono::milliseconds timeout_;
};

} // namespace lmc::rt

#endif // LMC_RUNTIME_TCP_STORE_H
