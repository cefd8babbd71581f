#!/usr/bin/env python3
"""
A delay line for the WAN harness (test/netns/wan.ts), run inside one node's network namespace.

The kernel of these machines is built without sch_netem (CONFIG_NET_SCH_NETEM is not set, and
there are no modules), so `tc qdisc ... netem delay` is refused. The delay is done here instead:
iptables in the namespace hands every packet arriving from peer j to NFQUEUE number j, and this
process gives it back to the kernel (NF_ACCEPT) after the delay set for queue j. Packets of one
queue are released in arrival order (jitter never reorders), so one VERDICT_BATCH ("accept every
id up to N") releases all that are due. Loss and partitions are plain iptables DROP rules, in the
kernel; only the delay passes through user space.

Raw netlink (NETLINK_NETFILTER) with the standard library only: no libnetfilter_queue needed.

stdin, one command a line:  `set <queue> <delay_ms> <jitter_ms>`  (queues not set: no delay)
stdout: `ready` once every queue is bound.      argv: the queue numbers to bind.
"""
import os
import random
import select
import socket
import struct
import sys
import time
from collections import deque

NETLINK_NETFILTER = 12
NFNL_SUBSYS_QUEUE = 3
NFQNL_MSG_PACKET = 0
NFQNL_MSG_CONFIG = 2
NFQNL_MSG_VERDICT_BATCH = 3
NFQA_PACKET_HDR = 1
NFQA_VERDICT_HDR = 2
NFQA_CFG_CMD = 1
NFQA_CFG_PARAMS = 2
NFQA_CFG_QUEUE_MAXLEN = 3
NFQNL_CFG_CMD_BIND = 1
NFQNL_COPY_META = 1
NF_ACCEPT = 1
NLM_F_REQUEST = 1
NLM_F_ACK = 4
NLMSG_ERROR = 2
SOL_NETLINK = 270
NETLINK_NO_ENOBUFS = 5


def attr(kind, payload):
    length = 4 + len(payload)
    return struct.pack('=HH', length, kind) + payload + b'\0' * ((4 - length % 4) % 4)


def message(msg_type, queue, attrs, flags=NLM_F_REQUEST, seq=0):
    # nfgenmsg: family AF_UNSPEC, version 0, res_id (the queue number, big-endian)
    body = struct.pack('=BB', 0, 0) + struct.pack('!H', queue) + b''.join(attrs)
    return struct.pack('=IHHII', 16 + len(body), (NFNL_SUBSYS_QUEUE << 8) | msg_type, flags, seq, 0) + body


def main():
    queues = [int(q) for q in sys.argv[1:]]
    sock = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, NETLINK_NETFILTER)
    sock.bind((0, 0))
    try:
        sock.setsockopt(socket.SOL_SOCKET, 33, 16 << 20)  # SO_RCVBUFFORCE (root): bursts of gossip
    except OSError:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 16 << 20)
    # a full socket buffer loses notifications, not packets: a later batch verdict releases them
    sock.setsockopt(SOL_NETLINK, NETLINK_NO_ENOBUFS, 1)
    for seq, q in enumerate(queues, start=1):
        sock.send(message(NFQNL_MSG_CONFIG, q, [attr(NFQA_CFG_CMD, struct.pack('=BB', NFQNL_CFG_CMD_BIND, 0) + struct.pack('!H', 0))], NLM_F_REQUEST | NLM_F_ACK, seq))
        expect_ack(sock)
        sock.send(message(NFQNL_MSG_CONFIG, q, [
            attr(NFQA_CFG_PARAMS, struct.pack('!IB', 0, NFQNL_COPY_META)),
            attr(NFQA_CFG_QUEUE_MAXLEN, struct.pack('!I', 200_000))
        ], NLM_F_REQUEST | NLM_F_ACK, seq + 1000))
        expect_ack(sock)
    delay = {q: (0.0, 0.0) for q in queues}
    pending = {q: deque() for q in queues}  # (release time, packet id), release times non-decreasing
    last_release = {q: 0.0 for q in queues}
    sys.stdout.write('ready\n')
    sys.stdout.flush()
    stdin = sys.stdin.fileno()
    os.set_blocking(stdin, False)
    line_buf = b''
    while True:
        now = time.monotonic()
        next_due = min((p[0][0] for p in pending.values() if p), default=None)
        timeout = None if next_due is None else max(0.0, next_due - now)
        readable, _, _ = select.select([sock, stdin], [], [], timeout)
        if stdin in readable:
            chunk = os.read(stdin, 4096)
            if chunk == b'':
                return  # the harness is gone: the namespace goes with it
            line_buf += chunk
            *lines, line_buf = line_buf.split(b'\n')
            for line in lines:
                parts = line.split()
                if len(parts) == 4 and parts[0] == b'set' and int(parts[1]) in delay:
                    delay[int(parts[1])] = (float(parts[2]) / 1000, float(parts[3]) / 1000)
        if sock in readable:
            receive(sock, delay, pending, last_release)
        now = time.monotonic()
        for q, p in pending.items():
            top = None
            while p and p[0][0] <= now:
                top = p.popleft()[1]
            if top is not None:
                sock.send(message(NFQNL_MSG_VERDICT_BATCH, q, [attr(NFQA_VERDICT_HDR, struct.pack('!II', NF_ACCEPT, top))]))


def expect_ack(sock):
    data = sock.recv(65536)
    _, kind = struct.unpack_from('=IH', data, 0)
    if kind == NLMSG_ERROR:
        (err,) = struct.unpack_from('=i', data, 16)
        if err != 0:
            raise OSError(-err, 'nfqueue config refused: ' + os.strerror(-err))


def receive(sock, delay, pending, last_release):
    # drain what is there without blocking
    while True:
        try:
            data = sock.recv(1 << 20, socket.MSG_DONTWAIT)
        except BlockingIOError:
            return
        now = time.monotonic()
        off = 0
        while off + 16 <= len(data):
            length, kind = struct.unpack_from('=IH', data, off)
            if length < 16:
                break
            if kind == (NFNL_SUBSYS_QUEUE << 8) | NFQNL_MSG_PACKET:
                (queue,) = struct.unpack_from('!H', data, off + 18)
                a = off + 20
                while a + 4 <= off + length:
                    alen, akind = struct.unpack_from('=HH', data, a)
                    if alen < 4:
                        break
                    if (akind & 0x3fff) == NFQA_PACKET_HDR:
                        (pid,) = struct.unpack_from('!I', data, a + 4)
                        d, j = delay.get(queue, (0.0, 0.0))
                        at = max(last_release.get(queue, 0.0), now + max(0.0, d + (random.uniform(-j, j) if j > 0 else 0.0)))
                        last_release[queue] = at
                        pending.setdefault(queue, deque()).append((at, pid))
                        break
                    a += (alen + 3) & ~3
            off += (length + 3) & ~3


if __name__ == '__main__':
    try:
        main()
    except KeyboardInterrupt:
        pass
