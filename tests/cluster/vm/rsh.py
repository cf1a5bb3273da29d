#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""A remote shell between the VMs of a soft-RoCE cluster (rxe-vm.sh run --vms N).

    rsh.py [ssh options] HOST COMMAND...   run COMMAND (joined into one line, as ssh
                                           does) with bash -c on HOST; its stdout and
                                           stderr come back, its exit status is ours
    rsh.py --serve PORT                    the server every VM runs
    rsh.py --wait SEC HOST...              wait until every HOST's server answers

What Open MPI's plm_rsh_agent needs, and no more: no stdin (the command's is
/dev/null), no authentication (the VMs reach nothing but each other). When
the client goes away (mpirun kills its agent) the command's process group
is killed. Exit 255 when HOST cannot be reached, as ssh.
"""
import json
import os
import signal
import socket
import struct
import subprocess
import sys
import threading
import time

PORT = 7070
OUT, ERR, RC = 1, 2, 3


def send_msg(sock: socket.socket, lock: threading.Lock, chan: int, data: bytes) -> None:
    with lock:
        sock.sendall(struct.pack("!BI", chan, len(data)) + data)


def recv_exact(sock: socket.socket, n: int) -> bytes:
    buf = b""
    while len(buf) < n:
        part = sock.recv(n - len(buf))
        if not part:
            raise EOFError
        buf += part
    return buf


def serve_one(conn: socket.socket) -> None:
    lock = threading.Lock()
    f = conn.makefile("rb")
    try:
        req = json.loads(f.readline().decode())
    except (ValueError, OSError):
        conn.close()
        return
    if req.get("ping"):
        send_msg(conn, lock, RC, b"0")
        conn.close()
        return
    proc = subprocess.Popen(["bash", "-c", req["cmd"]], stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)

    def pump(pipe, chan):
        for chunk in iter(lambda: os.read(pipe.fileno(), 1 << 16), b""):
            try:
                send_msg(conn, lock, chan, chunk)
            except OSError:
                break

    def watch_client():
        # The client sends nothing more: EOF or an error means it is gone.
        try:
            conn.recv(1)
        except OSError:
            pass
        if proc.poll() is None:
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except OSError:
                pass

    pumps = [threading.Thread(target=pump, args=(proc.stdout, OUT), daemon=True),
             threading.Thread(target=pump, args=(proc.stderr, ERR), daemon=True)]
    for t in pumps:
        t.start()
    threading.Thread(target=watch_client, daemon=True).start()
    rc = proc.wait()
    for t in pumps:
        t.join()
    try:
        send_msg(conn, lock, RC, str(rc if rc >= 0 else 128 - rc).encode())
        conn.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass
    conn.close()


def serve(port: int) -> int:
    lsock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    lsock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    lsock.bind(("0.0.0.0", port))
    lsock.listen(64)
    while True:
        conn, _ = lsock.accept()
        threading.Thread(target=serve_one, args=(conn,), daemon=True).start()


def connect(host: str) -> socket.socket:
    return socket.create_connection((host, PORT), timeout=30)


def ping(host: str) -> bool:
    try:
        with connect(host) as s:
            s.sendall(json.dumps({"ping": True}).encode() + b"\n")
            chan, n = struct.unpack("!BI", recv_exact(s, 5))
            return chan == RC and recv_exact(s, n) == b"0"
    except (OSError, EOFError):
        return False


def wait(limit: float, hosts) -> int:
    end = time.monotonic() + limit
    for host in hosts:
        while not ping(host):
            if time.monotonic() > end:
                print("rsh: %s did not answer within %g s" % (host, limit), file=sys.stderr)
                return 1
            time.sleep(0.5)
    return 0


def run(host: str, cmd: str) -> int:
    try:
        s = connect(host)
        s.settimeout(None)
        s.sendall(json.dumps({"cmd": cmd}).encode() + b"\n")
    except OSError as e:
        print("rsh: %s: %s" % (host, e), file=sys.stderr)
        return 255
    outs = {OUT: sys.stdout.buffer, ERR: sys.stderr.buffer}
    try:
        while True:
            chan, n = struct.unpack("!BI", recv_exact(s, 5))
            data = recv_exact(s, n)
            if chan == RC:
                return int(data)
            outs[chan].write(data)
            outs[chan].flush()
    except (EOFError, OSError):
        print("rsh: %s: connection lost" % host, file=sys.stderr)
        return 255


def main(argv) -> int:
    if argv[:1] == ["--serve"] and len(argv) == 2:
        return serve(int(argv[1]))
    if argv[:1] == ["--wait"] and len(argv) >= 3:
        return wait(float(argv[1]), argv[2:])
    # ssh options Open MPI may pass (-x, -o X, ...): none apply here.
    while argv and argv[0].startswith("-"):
        argv = argv[2:] if argv[0] in ("-o", "-l", "-p", "-i") else argv[1:]
    if len(argv) < 2:
        print("usage: rsh.py HOST COMMAND... | --serve PORT | --wait SEC HOST...", file=sys.stderr)
        return 255
    return run(argv[0], " ".join(argv[1:]))


if __name__ == "__main__":
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    sys.exit(main(sys.argv[1:]))
