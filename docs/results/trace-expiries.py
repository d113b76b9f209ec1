#!/usr/bin/env python3
"""trace-expiries.py -- what the lguest host's timer expiries were, from one
`run --trace` file: counts that `lguest-kvm trace` does not print, for
results.md table 7e (why the emulator VM's counts differ from no VM's).

- Expiries by what their drain found (empty or work), and which of them were
  *replaced*: handled (timer_fire) before the latest timer_arm's length was
  up, so a later arm had replaced the arm that expired -- `trace` shows these
  as negative lateness.  For each, where the replaced arm's deadline fell:
  inside a drain (the host was busy when it ran out), or before the drain
  that re-armed (the guest was running, and the kick took it out only after
  its own notify).
- How late the other expiries were handled, the guest's time between two
  notify drains, and how long a notify's drain took.
- Notifies by whether the host's NO_NOTIFY was set (a threshold crossed) or
  clear (the kick after an empty expiry); the TCP sender's waits (nothing to
  send: the window in flight) and the expiries per wait and per window's
  cycle; the timer's length per tenth of the run (the adaptive rule).

usage: trace-expiries.py FILE.bin...   (format: docs/trace.md)"""
import statistics
import struct
import sys

KICK, RING_FULL, WAIT_START, WAIT_END, IRQ_TAKEN = 1, 2, 3, 4, 5
NOTIFY, DRAIN, NN_SET, NN_CLEAR, ARM, FIRE, CANCEL, IRQ_RAISE, SYNC = range(32, 41)
BY_NOTIFY, BY_TIMER = 0, 1        # a drain's cause (drain.c)
NOTIFIED, HOST_NO_NOTIFY = 1, 2   # a kick's flags (kick.d)

def load(path):
    b = open(path, 'rb').read()
    assert b[:8] == b'LKVMTRC1'
    tsc_khz, = struct.unpack_from('<I', b, 16)
    nev, = struct.unpack_from('<Q', b, 48)
    ev = [struct.unpack_from('<QHHIIIII', b, 240 + 32 * i) for i in range(nev)]
    return tsc_khz, ev

def pct(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(p / 100 * len(xs)))] if xs else 0

def main(path):
    khz, ev = load(path)
    us = lambda t: t * 1000.0 / khz
    t0, t1 = ev[0][0], ev[-1][0]
    last_arm = None              # (tsc, length us)
    fires = []                   # (tsc, stale, found)
    pending_fire = None
    in_wait = False
    waits = 0
    fires_in_wait = []           # per wait
    cur = 0
    fires_between_waits = []     # expiries from one wait's end to the next's end
    since = 0
    kicks_notified_nn = kicks_notified_clear = ring_full = 0
    drain_sizes_notify = []
    arms = []
    lateness = []                # per expiry with an arm not yet used by an earlier expiry
    used_arm = None
    drains = []                  # (start, end, cause)
    drain_len = {}               # drain -> buffers taken
    span_drain = []              # replaced in a drain: that drain's duration
    span_guest = []              # replaced before: from the replaced arm to the next drain's start
    stale_where = {'during a drain': 0, 'before the drain that re-armed': 0, 'unknown': 0}
    for (t, ty, q, a, b_, c, d, _r) in ev:
        if ty == ARM:
            last_arm = (t, a); arms.append((t, a))
        elif ty == FIRE:
            stale = last_arm is not None and us(t - last_arm[0]) < last_arm[1]
            if last_arm is not None and last_arm is not used_arm:
                lateness.append(us(t - last_arm[0]) - last_arm[1])
            used_arm = last_arm
            if stale and len(arms) >= 2:
                # the arm that expired is the one before the replacing arm
                a1 = arms[-2]
                due = a1[0] + a1[1] * khz / 1000.0
                d = [x for x in drains if x[0] <= due <= x[1]]
                if d:
                    stale_where['during a drain'] += 1
                    span_drain.append(us(d[-1][1] - d[-1][0]))
                elif due < last_arm[0]:
                    stale_where['before the drain that re-armed'] += 1
                    nxt = [x for x in drains if x[0] > due]
                    if nxt:
                        span_guest.append(us(nxt[0][0] - a1[0]))
                else:
                    stale_where['unknown'] += 1
            pending_fire = [t, stale, None]
            fires.append(pending_fire)
            since += 1
            if in_wait: cur += 1
        elif ty == DRAIN:
            drains.append((t, t + b_, c))
            drain_len[(t, t + b_, c)] = a
            if c == BY_TIMER and pending_fire is not None and pending_fire[2] is None:
                pending_fire[2] = a
            if c == BY_NOTIFY: drain_sizes_notify.append(a)
        elif ty == WAIT_START:
            in_wait = True; cur = 0; waits += 1
        elif ty == WAIT_END:
            in_wait = False; fires_in_wait.append(cur)
            fires_between_waits.append(since); since = 0
        elif ty == KICK and (d & NOTIFIED):
            if d & HOST_NO_NOTIFY: kicks_notified_nn += 1
            else: kicks_notified_clear += 1
        elif ty == RING_FULL:
            ring_full += 1
    n = len(fires)
    empty = sum(1 for f in fires if f[2] == 0)
    stale = sum(1 for f in fires if f[1])
    stale_empty = sum(1 for f in fires if f[1] and f[2] == 0)
    print(f"file {path}: {len(ev)} events over {us(t1 - t0) / 1000:.1f} ms")
    print(f"expiries {n}: found the ring empty {empty}, found work {n - empty}; "
          f"replaced (handled before the latest arm's length was up) {stale}, of them empty {stale_empty}")
    print("replaced expiries, where the replaced arm's deadline fell: " + ", ".join(f"{k} {v}" for k, v in stale_where.items()))
    spans = span_drain + span_guest
    if spans:
        print(f"  of them, ran out in a span (that drain, or that guest run) longer than 2 ms: "
              f"{sum(1 for x in spans if x > 2000)} of {len(spans)}; longer than 10 ms: {sum(1 for x in spans if x > 10000)}")
    if span_drain:
        print(f"  the drains they ran out in took, us: p10 {pct(span_drain,10):.0f} p50 {pct(span_drain,50):.0f} p90 {pct(span_drain,90):.0f}")
    if span_guest:
        print(f"  from the replaced arm to the next drain (the guest's run it ran out in), us: p10 {pct(span_guest,10):.0f} "
              f"p50 {pct(span_guest,50):.0f} p90 {pct(span_guest,90):.0f}")
    nd = [us(e - s0) for (s0, e, c) in drains if c == BY_NOTIFY]
    nds = [(s0, e) for (s0, e, c) in drains if c == BY_NOTIFY]
    gaps = [us(nds[i + 1][0] - nds[i][1]) for i in range(len(nds) - 1)]
    if gaps:
        print(f"from the end of a notify's drain to the next notify's drain (the guest's time, other drains included), us: "
              f"p10 {pct(gaps,10):.0f} p50 {pct(gaps,50):.0f} p90 {pct(gaps,90):.0f}")
    late = [l for l in lateness if l >= 0]
    if late:
        print(f"expiries handled at or after their deadline ({len(late)}): handled late by, us: p10 {pct(late,10):.0f} p50 {pct(late,50):.0f} p90 {pct(late,90):.0f}")
    if nd:
        print(f"a notify's drain, duration us: p10 {pct(nd,10):.0f} p50 {pct(nd,50):.0f} p90 {pct(nd,90):.0f} p99 {pct(nd,99):.0f}")
        big = [us(e - s0) for (s0, e, c) in drains if c == BY_NOTIFY and drain_len[(s0, e, c)] >= 8]
        if big:
            print(f"  of 8 buffers or more: p10 {pct(big,10):.0f} p50 {pct(big,50):.0f} p90 {pct(big,90):.0f}")
    if drains:
        print(f"drains (every cause) longer than 4 ms: {sum(1 for (s0, e, c) in drains if us(e - s0) > 4000)} of {len(drains)}")
    print(f"notifies (guest kicks that wrote QueueNotify): with NO_NOTIFY set (threshold crossed) {kicks_notified_nn}, "
          f"with it clear {kicks_notified_clear}; ring_full {ring_full}")
    if drain_sizes_notify:
        print(f"a notify's drain, buffers: p10 {pct(drain_sizes_notify,10)} p50 {pct(drain_sizes_notify,50)} "
              f"p90 {pct(drain_sizes_notify,90)}; of 1 buffer: {sum(1 for x in drain_sizes_notify if x == 1)}")
    found = [f[2] for f in fires if f[2]]
    if found:
        print(f"an expiry's drain when it found work, buffers: p10 {pct(found,10)} p50 {pct(found,50)} p90 {pct(found,90)} mean {statistics.mean(found):.1f}")
    print(f"waits of the sender (nothing to send: window full or all in flight): {waits}")
    if fires_in_wait:
        print(f"expiries during a wait: mean {statistics.mean(fires_in_wait):.2f}, p50 {pct(fires_in_wait,50)}, p90 {pct(fires_in_wait,90)}, max {max(fires_in_wait)}; "
              f"waits with none {sum(1 for x in fires_in_wait if x == 0)}")
        print(f"expiries from one wait's end to the next's (one window's cycle): mean {statistics.mean(fires_between_waits):.2f}, "
              f"p50 {pct(fires_between_waits,50)}, p90 {pct(fires_between_waits,90)}")
    if arms:
        span = t1 - t0
        row = []
        for k in range(10):
            xs = [a for (t, a) in arms if t0 + span * k / 10 <= t < t0 + span * (k + 1) / 10]
            row.append(str(int(statistics.median(xs))) if xs else '-')
        print("timer length (us) per tenth of the run, median of the arms: " + " ".join(row) + f"; last arm {arms[-1][1]}")

for p in sys.argv[1:]:
    main(p)
