"""Stream clients that never read, for the back-pressure tests (test/integration/stream-backpressure.test.ts).

usage: python3 slow-stream-clients.py <host> <port> <path with query>

Commands on stdin, one a line; each answers one line on stdout:
  open N   opens N connections that send the GET and then read nothing -> "opened N"
  close    closes them all                                             -> "closed N"
EOF ends the program (and closes what is open).

A loopback socket holds megabytes before the sender notices anything
(Linux sizes the send buffer from the 64 KiB loopback MSS). A tiny receive
buffer and a tiny MSS, set before connect, make the server's socket fill
after about 13 KB, so the server's own bound is reached within a second.
"""
import socket
import sys

host, port, path = sys.argv[1], int(sys.argv[2]), sys.argv[3]
request = f"GET {path} HTTP/1.1\r\nHost: {host}\r\nAccept: text/event-stream\r\n\r\n".encode()
conns = []

for line in sys.stdin:
    cmd = line.split()
    if not cmd:
        continue
    if cmd[0] == "open":
        n = int(cmd[1])
        for _ in range(n):
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1024)
            s.setsockopt(socket.IPPROTO_TCP, socket.TCP_MAXSEG, 88)
            s.connect((host, port))
            s.sendall(request)
            conns.append(s)
        print(f"opened {n}", flush=True)
    elif cmd[0] == "close":
        n = len(conns)
        for s in conns:
            s.close()
        conns = []
        print(f"closed {n}", flush=True)

for s in conns:
    s.close()
