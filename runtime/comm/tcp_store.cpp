//===- tcp_store.cpp - The key-value store of a torchrun-style rendezvous -===//

#include "comm/tcp_store.h"

#include "base/error.h"

#include <algorithm>
#include <cerrno>
#include <condition_variable>
#include <cstring>
#include <map>
#include <mutex>
#include <thread>

#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

namespace lmc::rt {

namespace {

// c10d's QueryType, CheckResponseType and WaitResponseType
// (torch/csrc/distributed/c10d/TCPStoreBackend.hpp): the values are the
// protocol.
enum Query : uint8_t {
  kValidate = 0,
  kSet = 1,
  kGet = 3,
  kWait = 6,
  kCancelWait = 12,
  kPing = 13,
};
enum Answer : uint8_t {
  kStopWaiting = 0,
  kWaitCanceled = 1,
};
constexpr uint32_t kValidationMagic = 0x3C85F7CE;

constexpr uint64_t kMaxKeyBytes = 4096;
constexpr uint64_t kMaxValueBytes = 64u << 20;
constexpr uint64_t kMaxKeys = 1 << 16;

/// Repeats `io(done)` (a recv or send of the bytes after `done`) until
/// `size` bytes moved; false when the peer closed the connection (or a
/// receive timed out).
template <typename Io> bool moveAll(size_t size, Io io) {
  for (size_t done = 0; done < size;) {
    ssize_t n = io(done);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return false;
    done += size_t(n);
  }
  return true;
}

bool readAll(int fd, void *data, size_t size) {
  auto *p = static_cast<char *>(data);
  return moveAll(size, [&](size_t done) {
    return ::recv(fd, p + done, size - done, 0);
  });
}

bool writeAll(int fd, const void *data, size_t size) {
  auto *p = static_cast<const char *>(data);
  return moveAll(size, [&](size_t done) {
    return ::send(fd, p + done, size - done, MSG_NOSIGNAL);
  });
}

/// One query or answer, built whole and sent with one write.
class Message {
public:
  Message &u8(uint8_t v) {
    bytes_.push_back(char(v));
    return *this;
  }
  Message &u32(uint32_t v) { return little(v, 4); }
  Message &u64(uint64_t v) { return little(v, 8); }
  Message &text(const char *data, size_t size) {
    u64(size);
    bytes_.append(data, size);
    return *this;
  }
  Message &text(const std::string &s) { return text(s.data(), s.size()); }
  bool send(int fd) const { return writeAll(fd, bytes_.data(), bytes_.size()); }

private:
  Message &little(uint64_t v, int bytes) {
    for (int i = 0; i < bytes; ++i)
      bytes_.push_back(char(uint8_t(v >> (8 * i))));
    return *this;
  }
  std::string bytes_;
};

bool readLittle(int fd, uint64_t &v, int bytes) {
  unsigned char b[8];
  if (!readAll(fd, b, size_t(bytes)))
    return false;
  v = 0;
  for (int i = 0; i < bytes; ++i)
    v |= uint64_t(b[i]) << (8 * i);
  return true;
}

bool readU32(int fd, uint32_t &v) {
  uint64_t wide = 0;
  bool ok = readLittle(fd, wide, 4);
  v = uint32_t(wide);
  return ok;
}

bool readText(int fd, uint64_t limit, std::string &out) {
  uint64_t length = 0;
  if (!readLittle(fd, length, 8) || length > limit)
    return false;
  out.resize(length);
  return readAll(fd, out.data(), length);
}

bool readKeys(int fd, std::vector<std::string> &keys) {
  uint64_t count = 0;
  if (!readLittle(fd, count, 8) || count > kMaxKeys)
    return false;
  keys.resize(count);
  for (std::string &key : keys)
    if (!readText(fd, kMaxKeyBytes, key))
      return false;
  return true;
}

struct AddressList {
  addrinfo *list = nullptr;
  ~AddressList() {
    if (list)
      ::freeaddrinfo(list);
  }
};

} // namespace

/// Rank 0's side when no launcher hosts the store: one thread accepts
/// connections, one thread per connection answers its queries.
class TcpStore::Server {
public:
  explicit Server(int port) {
    addrinfo hints{};
    hints.ai_family = AF_INET;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_PASSIVE;
    AddressList addresses;
    int rc = ::getaddrinfo(nullptr, std::to_string(port).c_str(), &hints,
                           &addresses.list);
    LMC_CHECK(rc == 0, "rendezvous: cannot listen on port ", port, ": ",
              ::gai_strerror(rc));
    listener_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    LMC_CHECK_SYS(listener_ >= 0, "rendezvous: cannot create a socket");
    int on = 1;
    ::setsockopt(listener_, SOL_SOCKET, SO_REUSEADDR, &on, sizeof on);
    LMC_CHECK_SYS(::bind(listener_, addresses.list->ai_addr,
                         addresses.list->ai_addrlen) == 0 &&
                      ::listen(listener_, 128) == 0,
                  "rendezvous: cannot listen on MASTER_PORT ", port,
                  " (if torchrun hosts a store there, it tells its workers "
                  "with TORCHELASTIC_USE_AGENT_STORE=True)");
    acceptor_ = std::thread([this] { acceptLoop(); });
  }

  ~Server() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stopping_ = true;
      for (int fd : connections_)
        ::shutdown(fd, SHUT_RDWR);
    }
    setChanged_.notify_all();
    ::shutdown(listener_, SHUT_RDWR);
    ::close(listener_);
    acceptor_.join();
    for (std::thread &t : handlers_)
      t.join();
    for (int fd : connections_)
      ::close(fd);
  }

private:
  void acceptLoop() {
    while (true) {
      int fd = ::accept4(listener_, nullptr, nullptr, SOCK_CLOEXEC);
      std::lock_guard<std::mutex> lock(mutex_);
      if (fd < 0) {
        if (errno == EINTR && !stopping_)
          continue;
        return; // shut down
      }
      if (stopping_) {
        ::close(fd);
        return;
      }
      connections_.push_back(fd);
      handlers_.emplace_back([this, fd] { serve(fd); });
    }
  }

  /// Answers the connection's queries until it closes or sends one this
  /// server does not know.
  void serve(int fd) {
    while (answer(fd)) {
    }
  }

  bool answer(int fd) {
    uint8_t query = 0;
    if (!readAll(fd, &query, 1))
      return false;
    std::string key;
    switch (query) {
    case kValidate: {
      uint32_t magic = 0;
      return readU32(fd, magic) && magic == kValidationMagic;
    }
    case kPing: {
      uint32_t nonce = 0;
      return readU32(fd, nonce) && Message().u32(nonce).send(fd);
    }
    case kSet: {
      std::string value;
      if (!readText(fd, kMaxKeyBytes, key) ||
          !readText(fd, kMaxValueBytes, value))
        return false;
      {
        std::lock_guard<std::mutex> lock(mutex_);
        values_[key] = std::move(value);
      }
      setChanged_.notify_all();
      return true;
    }
    case kGet: {
      if (!readText(fd, kMaxKeyBytes, key))
        return false;
      std::string value;
      {
        std::lock_guard<std::mutex> lock(mutex_);
        if (auto it = values_.find(key); it != values_.end())
          value = it->second;
      }
      return Message().text(value).send(fd);
    }
    case kWait: {
      std::vector<std::string> keys;
      return readKeys(fd, keys) && answerWait(fd, keys);
    }
    case kCancelWait: // the wait it cancels was answered already
      return Message().u8(kWaitCanceled).send(fd);
    default:
      return false; // not a client of the protocol: close
    }
  }

  bool allSet(const std::vector<std::string> &keys) const {
    return std::all_of(keys.begin(), keys.end(),
                       [&](const std::string &k) { return values_.count(k); });
  }

  /// Answers STOP_WAITING once every key is set, or WAIT_CANCELED when the
  /// client gives up first (it sends CANCEL_WAIT on the same connection).
  bool answerWait(int fd, const std::vector<std::string> &keys) {
    std::unique_lock<std::mutex> lock(mutex_);
    while (true) {
      if (stopping_)
        return false;
      if (allSet(keys)) {
        lock.unlock();
        return Message().u8(kStopWaiting).send(fd);
      }
      setChanged_.wait_for(lock, std::chrono::milliseconds(50));
      if (allSet(keys) || stopping_)
        continue;
      lock.unlock();
      pollfd pending{fd, POLLIN, 0};
      if (::poll(&pending, 1, 0) > 0) {
        uint8_t query = 0;
        return readAll(fd, &query, 1) && query == kCancelWait &&
               Message().u8(kWaitCanceled).send(fd);
      }
      lock.lock();
    }
  }

  int listener_ = -1;
  std::thread acceptor_;
  std::mutex mutex_;
  std::condition_variable setChanged_;
  std::map<std::string, std::string> values_;
  std::vector<int> connections_;
  std::vector<std::thread> handlers_;
  bool stopping_ = false;
};

TcpStore::TcpStore(const std::string &host, int port, bool serve,
                   std::chrono::milliseconds timeout)
    : where_(concat(host, ":", port)), timeout_(timeout) {
  if (serve)
    server_ = std::make_unique<Server>(port);
  addrinfo hints{};
  hints.ai_family = AF_INET;
  hints.ai_socktype = SOCK_STREAM;
  AddressList addresses;
  int rc = ::getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints,
                         &addresses.list);
  LMC_CHECK(rc == 0, "rendezvous: cannot resolve MASTER_ADDR '", host,
            "': ", ::gai_strerror(rc));
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (true) {
    fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    LMC_CHECK_SYS(fd_ >= 0, "rendezvous: cannot create a socket");
    if (::connect(fd_, addresses.list->ai_addr, addresses.list->ai_addrlen) ==
        0)
      break;
    const int error = errno;
    ::close(fd_);
    fd_ = -1;
    LMC_CHECK(std::chrono::steady_clock::now() < deadline,
              "rendezvous: cannot connect to ", where_, " (MASTER_ADDR:"
              "MASTER_PORT) within ", timeout.count() / 1000, " s: ",
              std::strerror(error));
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  int on = 1;
  ::setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &on, sizeof on);
  // Answers that come at once (all but a wait's) come within the timeout.
  timeval limit{};
  limit.tv_sec = timeout.count() / 1000;
  limit.tv_usec = (timeout.count() % 1000) * 1000;
  ::setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &limit, sizeof limit);
  // As PyTorch's client: validate, then check that the store answers.
  const uint32_t nonce = uint32_t(::getpid());
  uint32_t echoed = 0;
  LMC_CHECK(Message().u8(kValidate).u32(kValidationMagic).send(fd_) &&
                Message().u8(kPing).u32(nonce).send(fd_) &&
                readU32(fd_, echoed) && echoed == nonce,
            "rendezvous: ", where_, " (MASTER_ADDR:MASTER_PORT) does not "
            "answer as a PyTorch TCPStore does (another program on that "
            "port?)");
}

TcpStore::~TcpStore() {
  if (fd_ >= 0)
    ::close(fd_);
  server_.reset();
}

void TcpStore::set(const std::string &key, const std::vector<char> &data) {
  LMC_CHECK(key.size() <= kMaxKeyBytes && data.size() <= kMaxValueBytes,
            "rendezvous: key '", key, "' or its value is too long");
  Message query;
  query.u8(kSet).text(key).text(data.data(), data.size());
  LMC_CHECK(query.send(fd_), "rendezvous: lost the connection to ", where_);
}

std::vector<char> TcpStore::get(const std::string &key) {
  wait({key});
  std::string value;
  LMC_CHECK(Message().u8(kGet).text(key).send(fd_) &&
                readText(fd_, kMaxValueBytes, value),
            "rendezvous: lost the connection to ", where_, " reading '", key,
            "'");
  return std::vector<char>(value.begin(), value.end());
}

bool TcpStore::waitAtMost(const std::vector<std::string> &keys,
                          std::chrono::milliseconds timeout) {
  Message query;
  query.u8(kWait);
  query.u64(keys.size());
  for (const std::string &key : keys) {
    LMC_CHECK(key.size() <= kMaxKeyBytes, "rendezvous: key '", key,
              "' is too long");
    query.text(key);
  }
  const std::string lost = concat("rendezvous: lost the connection to ",
                                  where_, " (the store's process ended)");
  LMC_CHECK(query.send(fd_), lost);
  // The answer may take as long as the others take to start: poll in
  // slices (poll's timeout is an int of milliseconds).
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (true) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    pollfd answer{fd_, POLLIN, 0};
    const int ready = ::poll(
        &answer, 1,
        int(std::clamp<int64_t>(left.count(), 0, 3600 * 1000)));
    if (ready < 0 && errno == EINTR)
      continue;
    LMC_CHECK_SYS(ready >= 0, "rendezvous: cannot wait for ", where_);
    if (ready > 0) {
      uint8_t reply = 0xff;
      LMC_CHECK(readAll(fd_, &reply, 1) && reply == kStopWaiting, lost);
      return true;
    }
    if (left.count() <= 0)
      break;
  }
  // Time is up: cancel, and take the answer that may have crossed it.
  uint8_t reply = 0xff;
  LMC_CHECK(Message().u8(kCancelWait).send(fd_) && readAll(fd_, &reply, 1),
            lost);
  if (reply == kStopWaiting)
    LMC_CHECK(readAll(fd_, &reply, 1), lost);
  LMC_CHECK(reply == kWaitCanceled, "rendezvous: ", where_,
            " answered a cancelled wait with ", int(reply));
  return false;
}

void TcpStore::wait(const std::vector<std::string> &keys,
                    const std::chrono::milliseconds &timeout) {
  LMC_CHECK(waitAtMost(keys, timeout), "rendezvous: no answer from ", where_,
            " for '", keys.empty() ? std::string() : keys.front(),
            "' within ", timeout.count() / 1000,
            " s (a process did not start, or rank 0 ended)");
}

void TcpStore::wait(const std::vector<std::string> &keys) {
  wait(keys, timeout_);
}

} // namespace lmc::rt
