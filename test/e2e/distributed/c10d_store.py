"""A stand-in for the store torchrun 2.x's agent serves to its workers,
written from PyTorch's c10d TCPStore protocol (torch/csrc/distributed/c10d/
TCPStore.cpp and TCPStoreBackend.hpp) so that tests need no PyTorch.
bench/torchrun.sh runs the same executables under the real torchrun.

Every query is a byte of QueryType and its arguments; a string is a
little-endian u64 length and its bytes, a key list a u64 count and the
strings. SET, GET, ADD, CHECK, WAIT (answered once every key is set, or
cancelled by CANCEL_WAIT), COMPARE_SET, DELETE_KEY, GETNUMKEYS, VALIDATE and
PING; anything else closes the connection, as PyTorch's server does.

    Store().port          a free port on 127.0.0.1, served by a thread
    python3 c10d_store.py  serves until killed, printing its port
"""
import socket
import struct
import sys
import threading

VALIDATE, SET, COMPARE_SET, GET, ADD, CHECK, WAIT, GETNUMKEYS, DELETE_KEY = \
    range(9)
CANCEL_WAIT, PING = 12, 13
MAGIC = 0x3C85F7CE
READY, NOT_READY = 0, 1
STOP_WAITING, WAIT_CANCELED = 0, 1


class Closed(Exception):
    pass


def recv_exact(conn, n):
    data = b""
    while len(data) < n:
        chunk = conn.recv(n - len(data))
        if not chunk:
            raise Closed()
        data += chunk
    return data


def recv_u32(conn):
    return struct.unpack("<I", recv_exact(conn, 4))[0]


def recv_u64(conn):
    return struct.unpack("<Q", recv_exact(conn, 8))[0]


def recv_string(conn):
    return recv_exact(conn, recv_u64(conn))


def recv_keys(conn):
    return [recv_string(conn) for _ in range(recv_u64(conn))]


def string(b):
    return struct.pack("<Q", len(b)) + b


class Store:
    def __init__(self, port=0):
        self.values = {}
        self.changed = threading.Condition()
        self.listener = socket.socket()
        self.listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.listener.bind(("127.0.0.1", port))
        self.listener.listen(128)
        self.port = self.listener.getsockname()[1]
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self):
        while True:
            conn, _ = self.listener.accept()
            threading.Thread(target=self._serve, args=(conn,),
                             daemon=True).start()

    def _serve(self, conn):
        try:
            while self._answer(conn):
                pass
        except (Closed, OSError):
            pass
        conn.close()

    def _set(self, key, value):
        with self.changed:
            self.values[key] = value
            self.changed.notify_all()

    def _answer(self, conn):
        query = recv_exact(conn, 1)[0]
        if query == VALIDATE:
            return recv_u32(conn) == MAGIC
        if query == PING:
            conn.sendall(struct.pack("<I", recv_u32(conn)))
        elif query == SET:
            key = recv_string(conn)
            self._set(key, recv_string(conn))
        elif query == GET:
            key = recv_string(conn)
            with self.changed:
                value = self.values.get(key, b"")
            conn.sendall(string(value))
        elif query == ADD:
            key = recv_string(conn)
            delta = struct.unpack("<q", recv_exact(conn, 8))[0]
            with self.changed:
                total = int(self.values.get(key, b"0")) + delta
                self.values[key] = str(total).encode()
                self.changed.notify_all()
            conn.sendall(struct.pack("<q", total))
        elif query == COMPARE_SET:
            key, expected, desired = (recv_string(conn) for _ in range(3))
            with self.changed:
                current = self.values.get(key)
                if current is None and expected == b"":
                    current = self.values[key] = desired
                elif current is None:
                    current = expected
                elif current == expected:
                    current = self.values[key] = desired
                self.changed.notify_all()
            conn.sendall(string(current))
        elif query == CHECK:
            keys = recv_keys(conn)
            with self.changed:
                ready = all(k in self.values for k in keys)
            conn.sendall(bytes([READY if ready else NOT_READY]))
        elif query == WAIT:
            self._wait(conn, recv_keys(conn))
        elif query == CANCEL_WAIT:  # after a wait it already answered
            conn.sendall(bytes([WAIT_CANCELED]))
        elif query == DELETE_KEY:
            key = recv_string(conn)
            with self.changed:
                deleted = self.values.pop(key, None) is not None
            conn.sendall(struct.pack("<q", int(deleted)))
        elif query == GETNUMKEYS:
            with self.changed:
                conn.sendall(struct.pack("<q", len(self.values)))
        else:
            return False
        return True

    def _wait(self, conn, keys):
        while True:
            with self.changed:
                if self.changed.wait_for(
                        lambda: all(k in self.values for k in keys),
                        timeout=0.05):
                    conn.sendall(bytes([STOP_WAITING]))
                    return
            conn.settimeout(0)  # a CANCEL_WAIT waiting to be read?
            try:
                query = conn.recv(1)
            except BlockingIOError:
                continue
            finally:
                conn.settimeout(None)
            if query != bytes([CANCEL_WAIT]):
                raise Closed()
            conn.sendall(bytes([WAIT_CANCELED]))
            return


if __name__ == "__main__":
    store = Store(int(sys.argv[1]) if len(sys.argv) > 1 else 0)
    print(store.port, flush=True)
    threading.Event().wait()
