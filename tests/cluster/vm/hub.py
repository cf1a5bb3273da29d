#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""The Ethernet segment of a soft-RoCE VM cluster (rxe-vm.sh run --vms N).

    hub.py PORTFILE

Listens on 127.0.0.1 (a port the kernel picks, written to PORTFILE once
listening) for qemu's `-netdev socket,connect=...` NICs, and repeats every
frame a VM sends to every other VM: a hub, the smallest switch there is, on
local sockets only. qemu frames each packet on the stream with its length,
4 bytes in network byte order. Runs until killed.
"""
import os
import selectors
import socket
import struct
import sys


class Port:
    def __init__(self, conn: socket.socket):
        self.conn = conn
        self.inbuf = b""


def frames(port: Port):
    """The whole frames received so far on port, with their length prefix."""
    while len(port.inbuf) >= 4:
        (n,) = struct.unpack("!I", port.inbuf[:4])
        if len(port.inbuf) < 4 + n:
            return
        frame, port.inbuf = port.inbuf[:4 + n], port.inbuf[4 + n:]
        yield frame


def main() -> int:
    if len(sys.argv) != 2:
        print("usage: hub.py PORTFILE", file=sys.stderr)
        return 2
    lsock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    lsock.bind(("127.0.0.1", 0))
    lsock.listen(16)
    tmp = sys.argv[1] + ".tmp"
    with open(tmp, "w") as f:
        f.write("%d\n" % lsock.getsockname()[1])
    os.rename(tmp, sys.argv[1])
    sel = selectors.DefaultSelector()
    sel.register(lsock, selectors.EVENT_READ)
    ports = {}
    while True:
        for key, _ in sel.select():
            if key.fileobj is lsock:
                conn, _ = lsock.accept()
                conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                ports[conn] = Port(conn)
                sel.register(conn, selectors.EVENT_READ)
                continue
            port = ports[key.fileobj]
            data = port.conn.recv(1 << 16)
            if not data:
                sel.unregister(port.conn)
                del ports[port.conn]
                port.conn.close()
                continue
            port.inbuf += data
            for frame in frames(port):
                for other in list(ports.values()):
                    if other is port:
                        continue
                    try:
                        # Blocking: a VM that does not read stalls the segment, as a full link would.
                        other.conn.sendall(frame)
                    except OSError:
                        pass


if __name__ == "__main__":
    sys.exit(main())
