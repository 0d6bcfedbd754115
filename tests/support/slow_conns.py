#!/usr/bin/python3
"""slow_conns.py ADDR N SECONDS - hold N slow connections to a relish
service (ADDR: a unix socket path or HOST:PORT): each sends one byte of a
request line at once, then one more byte every second for SECONDS, never
finishing its headers.  Prints, as key=value on one line each:
  refused=K        connections answered 429 at once (over a limit)
  held=H           connections the service took
  cut=C cut_s=T    of those, how many it closed, and when the last of them
                   was closed (seconds after connecting; -1: none)
"""
import socket
import sys
import time

addr, n, hold = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])


def connect():
    if addr.startswith("/"):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.connect(addr)
    else:
        host, port = addr.rsplit(":", 1)
        s = socket.create_connection((host, int(port)))
    s.setblocking(False)
    return s


def gone(s):
    """True when the service closed s (end of stream or an error),
    'refused' when it answered 429, False while it is open."""
    try:
        data = s.recv(4096)
    except BlockingIOError:
        return False
    except OSError:
        return True
    if b" 429 " in data[:20]:
        return "refused"
    return True


t0 = time.time()
socks = []
for _ in range(n):
    s = connect()
    try:
        s.send(b"G")
    except OSError:
        pass
    socks.append(s)
time.sleep(1.0)
refused, held = 0, []
for s in socks:
    g = gone(s)
    if g == "refused":
        refused += 1
        s.close()
    else:
        held.append(s)
print("refused=%d" % refused, flush=True)
print("held=%d" % len(held), flush=True)
open_ = list(held)
cut, last_cut = 0, -1.0
while time.time() - t0 < hold and open_:
    for s in list(open_):
        try:
            s.send(b"E")
        except OSError:
            pass
        if gone(s):
            open_.remove(s)
            cut += 1
            last_cut = time.time() - t0
            s.close()
    time.sleep(1.0)
print("cut=%d cut_s=%.1f" % (cut, last_cut), flush=True)
