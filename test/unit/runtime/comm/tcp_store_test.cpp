#include "comm/tcp_store.h"

#include "test_util.h"

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <thread>

using namespace lmc::rt;
using namespace std::chrono_literals;

namespace {

int freePort() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t size = sizeof address;
  ::bind(fd, reinterpret_cast<sockaddr *>(&address), size);
  ::getsockname(fd, reinterpret_cast<sockaddr *>(&address), &size);
  ::close(fd);
  return ntohs(address.sin_port);
}

std::vector<char> bytes(const std::string &s) {
  return std::vector<char>(s.begin(), s.end());
}

// Rank 0's store and a second process's client, in one process: a value set
// by one is read by the other, a get waits for a key set later.
TEST(TcpStore, ServesSetGetAndWait) {
  const int port = freePort();
  TcpStore server("127.0.0.1", port, /*serve=*/true, 5s);
  TcpStore client("127.0.0.1", port, /*serve=*/false, 5s);
  server.set("a", bytes("first"));
  EXPECT_EQ(client.get("a"), bytes("first"));
  std::thread later([&] {
    std::this_thread::sleep_for(100ms);
    server.set("b", bytes(std::string(100000, 'x')));
  });
  client.wait({"a", "b"});
  EXPECT_EQ(client.get("b").size(), 100000u);
  later.join();
  client.set("empty", {});
  EXPECT_EQ(server.get("empty"), std::vector<char>());
}

// A wait that runs out is cancelled (CANCEL_WAIT) and the connection goes
// on serving; the error names the key and the time.
TEST(TcpStore, AWaitThatRunsOutIsCancelled) {
  const int port = freePort();
  TcpStore server("127.0.0.1", port, /*serve=*/true, 5s);
  TcpStore client("127.0.0.1", port, /*serve=*/false, 1s);
  EXPECT_FALSE(client.waitAtMost({"never"}, 200ms));
  server.set("after", bytes("ok"));
  EXPECT_EQ(client.get("after"), bytes("ok"));
  EXPECT_ERROR_CONTAINS(client.get("never"),
                        "for 'never' within 1 s (a process did not start");
}

TEST(TcpStore, NamesWhatIsNotThere) {
  const int port = freePort();
  EXPECT_ERROR_CONTAINS(TcpStore("127.0.0.1", port, false, 300ms),
                        "rendezvous: cannot connect to 127.0.0.1:" +
                            std::to_string(port) +
                            " (MASTER_ADDR:MASTER_PORT) within 0 s");
  auto server = std::make_unique<TcpStore>("127.0.0.1", port, true, 5s);
  TcpStore client("127.0.0.1", port, false, 5s);
  server.reset(); // rank 0 ended
  EXPECT_ERROR_CONTAINS(client.get("gone"), "rendezvous: lost the connection");
}

} // namespace
