"""not_a_store.py COMMAND...: runs COMMAND with MASTER_PORT set to a port
where a program that is no c10d store listens (it reads what it is sent and
answers every read with a line of text, as an HTTP server might)."""
import os
import socket
import subprocess
import sys
import threading


def serve(listener):
    while True:
        conn, _ = listener.accept()
        conn.settimeout(1)
        try:
            while conn.recv(4096):
                conn.sendall(b"HTTP/1.0 400 Bad Request\r\n")
        except OSError:
            pass
        conn.close()


listener = socket.socket()
listener.bind(("127.0.0.1", 0))
listener.listen(8)
threading.Thread(target=serve, args=(listener,), daemon=True).start()
env = dict(os.environ, MASTER_PORT=str(listener.getsockname()[1]))
sys.exit(subprocess.run(sys.argv[1:], env=env).returncode)
