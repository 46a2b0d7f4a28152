//===- tcp_store.cpp - The key-value store of a torchrun-style rendezvous -===//

#include "comm/tcp_store.h"

#include "base/error.h"

#include <cerrno>
#include <condition_variable>
#include <cstdint>
#include <cstring>
#include <map>
#include <mutex>
#include <thread>

#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

namespace lmc::rt {

namespace {

constexpr uint32_t kMaxKeyBytes = 4096;
constexpr uint32_t kMaxValueBytes = 64u << 20;

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

bool writeLength(int fd, uint32_t length) {
  unsigned char bytes[4] = {uint8_t(length), uint8_t(length >> 8),
                            uint8_t(length >> 16), uint8_t(length >> 24)};
  return writeAll(fd, bytes, 4);
}

bool readLength(int fd, uint32_t &length) {
  unsigned char bytes[4];
  if (!readAll(fd, bytes, 4))
    return false;
  length = uint32_t(bytes[0]) | uint32_t(bytes[1]) << 8 |
           uint32_t(bytes[2]) << 16 | uint32_t(bytes[3]) << 24;
  return true;
}

bool readBytes(int fd, uint32_t limit, std::string &out) {
  uint32_t length = 0;
  if (!readLength(fd, length) || length > limit)
    return false;
  out.resize(length);
  return readAll(fd, out.data(), length);
}

struct AddressList {
  addrinfo *list = nullptr;
  ~AddressList() {
    if (list)
      ::freeaddrinfo(list);
  }
};

} // namespace

/// Rank 0's side: one thread accepts connections, one thread per
/// connection answers its requests; a get waits until its key is set.
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
                  "rendezvous: cannot listen on MASTER_PORT ", port);
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

  void serve(int fd) {
    while (true) {
      char op = 0;
      std::string key;
      if (!readAll(fd, &op, 1) || !readBytes(fd, kMaxKeyBytes, key))
        return;
      if (op == 'S') {
        std::string value;
        if (!readBytes(fd, kMaxValueBytes, value))
          return;
        {
          std::lock_guard<std::mutex> lock(mutex_);
          values_[key] = std::move(value);
        }
        setChanged_.notify_all();
        if (!writeAll(fd, "K", 1))
          return;
      } else if (op == 'G') {
        std::string value;
        {
          std::unique_lock<std::mutex> lock(mutex_);
          setChanged_.wait(lock,
                           [&] { return stopping_ || values_.count(key); });
          if (stopping_)
            return;
          value = values_[key];
        }
        if (!writeLength(fd, uint32_t(value.size())) ||
            !writeAll(fd, value.data(), value.size()))
          return;
      } else {
        return; // not a client of ours
      }
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
  timeval limit{};
  limit.tv_sec = timeout.count() / 1000;
  limit.tv_usec = (timeout.count() % 1000) * 1000;
  ::setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &limit, sizeof limit);
}

TcpStore::~TcpStore() {
  if (fd_ >= 0)
    ::close(fd_);
  server_.reset();
}

void TcpStore::set(const std::string &key, const std::vector<char> &data) {
  LMC_CHECK(key.size() <= kMaxKeyBytes && data.size() <= kMaxValueBytes,
            "rendezvous: key '", key, "' or its value is too long");
  char ack = 0;
  LMC_CHECK(writeAll(fd_, "S", 1) && writeLength(fd_, uint32_t(key.size())) &&
                writeAll(fd_, key.data(), key.size()) &&
                writeLength(fd_, uint32_t(data.size())) &&
                writeAll(fd_, data.data(), data.size()) &&
                readAll(fd_, &ack, 1) && ack == 'K',
            "rendezvous: lost the connection to ", where_);
}

std::vector<char> TcpStore::get(const std::string &key) {
  LMC_CHECK(key.size() <= kMaxKeyBytes, "rendezvous: key '", key,
            "' is too long");
  std::string value;
  LMC_CHECK(writeAll(fd_, "G", 1) && writeLength(fd_, uint32_t(key.size())) &&
                writeAll(fd_, key.data(), key.size()) &&
                readBytes(fd_, kMaxValueBytes, value),
            "rendezvous: no answer from ", where_, " for '", key,
            "' within ", timeout_.count() / 1000,
            " s (a process did not start, or rank 0 ended)");
  return std::vector<char>(value.begin(), value.end());
}

void TcpStore::wait(const std::vector<std::string> &keys) {
  for (const std::string &key : keys)
    get(key);
}

void TcpStore::wait(const std::vector<std::string> &keys,
                    const std::chrono::milliseconds &) {
  wait(keys); // every get already waits at most the store's timeout
}

} // namespace lmc::rt
