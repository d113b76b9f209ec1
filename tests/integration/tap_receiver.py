"""tap_receiver.py -- the other end of a tap: read the raw workload's frames
from a packet socket and verify every one (sequence order and payload
pattern, the same rule as include/lkvm_frame.h).

usage: tap_receiver.py IFNAME FRAMES READY_FILE
Prints "received N frames, M bad" and exits 0 only if N == FRAMES and M == 0.
"""
import socket
import struct
import sys

ETHERTYPE = 0x88B5
MASK = (1 << 64) - 1


def pattern(seq, word):
    return ((seq * 0x9E3779B97F4A7C15) ^ (word * 0xD1B54A32D192ED03) ^ 0x5BD1E995) & MASK


def main():
    ifname, want, ready = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETHERTYPE))
    s.setsockopt(socket.SOL_SOCKET, 33, 64 << 20)  # SO_RCVBUFFORCE: never drop here
    s.bind((ifname, ETHERTYPE))
    s.settimeout(20)
    open(ready, "w").close()
    got = bad = 0
    try:
        while got < want:
            frame = s.recv(70000)
            seq, = struct.unpack_from("<Q", frame, 14)
            body = frame[22:]
            words = (len(body) + 7) // 8
            expect = b"".join(struct.pack("<Q", pattern(seq, j)) for j in range(words))[:len(body)]
            if seq != got or body != expect:
                bad += 1
            got += 1
    except socket.timeout:
        pass
    print(f"received {got} frames, {bad} bad")
    return 0 if got == want and bad == 0 else 1


sys.exit(main())
