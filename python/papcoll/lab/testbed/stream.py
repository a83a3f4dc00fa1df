"""A TCP stream from one testbed host to another, each end run inside its host's namespace by
measure.stream_bandwidth. Run by path with the standard library only (the namespaces see this
file, not necessarily the package on sys.path):

    python stream.py receive ADDRESS           listens on ADDRESS; prints "listening", then,
                                               once the sender is done, "BYTES END"
    python stream.py send ADDRESS MEBIBYTES    sends MEBIBYTES MiB to the receiver at ADDRESS;
                                               prints "START"

START is when the connection is up and the sender starts sending, END when the receiver has
the last byte, both on CLOCK_MONOTONIC (time.monotonic), which every network namespace of
the machine shares: END - START is the stream's time without the connection's set-up. It is
never shorter than the transfer took, however busy the machine: a receiver that starts
reading late finds bytes that arrived while it waited (a receiver timing its own first byte
to its last once found a rate above the link's), and a late process only adds time.
"""

from __future__ import annotations

import socket
import sys
import time

PORT = 5213
BLOCK_BYTES = 1 << 20
TIMEOUT_SECONDS = 30


def receive(address: str) -> None:
    server = socket.socket()
    server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    server.bind((address, PORT))
    server.listen(1)
    print("listening", flush=True)
    server.settimeout(TIMEOUT_SECONDS)
    connection, _ = server.accept()
    connection.settimeout(TIMEOUT_SECONDS)
    received = 0
    while True:
        data = connection.recv(BLOCK_BYTES)
        if not data:
            break
        received += len(data)
    print(received, repr(time.monotonic()), flush=True)


def send(address: str, mebibytes: int) -> None:
    connection = socket.create_connection((address, PORT), timeout=TIMEOUT_SECONDS)
    block = bytes(BLOCK_BYTES)
    start = time.monotonic()
    for _ in range(mebibytes):
        connection.sendall(block)
    connection.close()
    print(repr(start), flush=True)


def main(arguments: list[str]) -> int:
    if len(arguments) == 2 and arguments[0] == "receive":
        receive(arguments[1])
    elif len(arguments) == 3 and arguments[0] == "send":
        send(arguments[1], int(arguments[2]))
    else:
        print("usage: stream.py receive ADDRESS | send ADDRESS MEBIBYTES", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
