#!/usr/bin/env python3
"""stdio_matrix.py -- run one command with its standard streams on every
kind of file a user puts there, and say which combinations failed.

Why: glibc's stdio and the launcher's console input ask the kernel
different questions depending on what a stream is (fstat, TCGETS on a
character device, read on a terminal from a background job), and the
launcher runs under a seccomp allow-list that kills the whole process for a
call outside it (launcher/sandbox.c).  `run --model thread >/dev/null` once
died by SIGSYS that way.  This harness is what proves, per command, that
none of those paths is left (issue 27, item 6).

How: each combination gets its own streams -- a pty (the session's
controlling terminal, as in a shell), a regular file, a pipe drained while
the command runs, /dev/null -- for stdin, stdout and stderr.  The command
(and a peer, such as `lguest-kvm receive` for a tcp run, under the same
kinds of streams) runs to its end, and the combination passes when:
  - it exited with the expected status: a signal death (SIGSYS above all)
    or a stop (SIGTTIN, SIGTTOU) fails it, and so does a hang (the limit);
  - every --out pattern is in what it wrote to stdout, every --err pattern
    in what it wrote to stderr, wherever those went (skipped for /dev/null
    and closed streams; streams that share the pty are checked together);
  - every --then command (a check of a file it wrote) exits 0.
--matrix full runs every stdout kind against every stderr kind (16) with
stdin taking each kind in turn; --matrix same runs one combination per kind
with all three streams on it (for the slow emulator VM).  Both add runs
with streams closed (`cmd >&-`: full closes each in turn, same closes
stdin and stdout together), and one run as a background job of its
terminal (`cmd &` in an interactive shell): all three streams on the pty,
the command in a process group that is not the terminal's foreground
group.  Several commands can share one interpreter start: separate their
cases with --and.

It prints one line per combination and exits 0 only if all passed.
"""
import argparse
import fcntl
import json
import os
import re
import select
import signal
import subprocess
import sys
import tempfile
import termios
import time

KINDS = ('tty', 'file', 'pipe', 'null')   # 'closed' comes in runs of its own
ROLES = ('in', 'out', 'err')


def signame(n):
    try:
        return signal.Signals(n).name
    except ValueError:
        return 'signal %d' % n


class Streams:
    """One process's three streams: what to hand the child, and how to
    collect what it wrote once it is done."""

    def __init__(self, kinds, stdin_data, tmpdir, tag):
        self.kinds = kinds
        self.child = {}          # 0, 1, 2 -> descriptor the child gets
        self.readers = {}        # our read end -> 'tty' | 'out' | 'err'
        self.text = {'tty': b'', 'out': b'', 'err': b''}
        self.files = {}          # 'out' | 'err' -> path of a regular file
        self.ours = []           # descriptors we close after the spawn
        self.feed = None         # (fd, bytes): written into stdin after the spawn
        self.master = None
        if 'tty' in kinds.values():
            self.master, slave = os.openpty()
            self.readers[self.master] = 'tty'
            self.ours.append(slave)
            self.slave = slave
        null = None
        for fd, role in enumerate(ROLES):
            kind = kinds[role]
            if kind == 'tty':
                self.child[fd] = self.slave
            elif kind == 'closed':
                self.child[fd] = None
            elif kind == 'null':
                if null is None:
                    null = os.open('/dev/null', os.O_RDWR)
                    self.ours.append(null)
                self.child[fd] = null
            elif kind == 'file':
                path = os.path.join(tmpdir, '%s.%s' % (tag, role))
                if role == 'in':
                    with open(path, 'wb') as f:
                        f.write(stdin_data)
                    d = os.open(path, os.O_RDONLY)
                else:
                    d = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
                    self.files[role] = path
                self.ours.append(d)
                self.child[fd] = d
            elif kind == 'pipe':
                r, w = os.pipe()
                if role == 'in':
                    self.child[fd] = r
                    self.ours.append(r)
                    self.feed = (w, stdin_data)
                else:
                    self.child[fd] = w
                    self.ours.append(w)
                    self.readers[r] = role
        if kinds['in'] == 'tty' and stdin_data:
            self.feed = (self.master, stdin_data)

    def after_spawn(self):
        for d in self.ours:
            os.close(d)
        self.ours = []
        if self.feed:
            fd, data = self.feed
            os.write(fd, data)   # small: fits a pipe's or a pty's buffer
            if fd != self.master:
                os.close(fd)

    def pump(self, fd):
        """Read what is there; False at end of stream."""
        try:
            data = os.read(fd, 65536)
        except OSError:
            data = b''      # EIO: every holder of the pty's slave has closed it
        if not data:
            os.close(fd)
            del self.readers[fd]
            return False
        self.text[self.readers[fd]] += data
        return True

    def wrote(self, role):
        """What the process wrote to stdout ('out') or stderr ('err'), or
        None where that cannot be seen (/dev/null)."""
        kind = self.kinds[role]
        if kind in ('null', 'closed'):
            return None
        if kind == 'file':
            with open(self.files[role], 'rb') as f:
                data = f.read()
        elif kind == 'pipe':
            data = self.text[role]
        else:
            data = self.text['tty']
        return data.decode('utf-8', 'replace').replace('\r\n', '\n')

    def close(self):
        for d in self.ours + list(self.readers):
            try:
                os.close(d)
            except OSError:
                pass


def default_signals():
    """Python ignores SIGPIPE and SIGXFSZ, and an ignored signal stays
    ignored across exec: give the command the defaults a shell would."""
    for sig in (signal.SIGPIPE, signal.SIGXFSZ):
        signal.signal(sig, signal.SIG_DFL)


def spawn(argv, streams, background, status_file):
    """fork + exec with the streams; the pty, if any, becomes the new
    session's controlling terminal.  background: a wrapper holds the
    terminal's foreground group and the command runs in a group of its own,
    as a shell runs `cmd &`; the wrapper writes the command's wait status,
    stops included, to status_file."""
    pid = os.fork()
    if pid:
        return pid
    try:
        for fd in (0, 1, 2):
            if streams.child[fd] is not None:
                os.dup2(streams.child[fd], fd)
        for fd in (0, 1, 2):
            if streams.child[fd] is None:
                os.close(fd)
        os.setsid()
        for fd in (0, 1, 2):
            if os.isatty(fd):
                fcntl.ioctl(fd, termios.TIOCSCTTY, 0)
                break
        os.closerange(3, 4096)
        default_signals()
        if background:
            background_wrapper(status_file, argv)
        os.execv(argv[0], argv)
    except BaseException as e:
        os.write(2, ('stdio_matrix: cannot start %s: %s\n' % (argv[0], e)).encode())
    os._exit(127)


def background_wrapper(status_file, argv):
    """The session leader and foreground group of the pty; the command
    runs in a background group of the same session, like a shell's job.
    (A fork, not a second interpreter: Python starts in seconds under the
    emulator.)"""
    pid = os.fork()
    if pid == 0:
        os.setpgid(0, 0)
        default_signals()
        os.execv(argv[0], argv)
    os.setpgid(pid, pid)
    with open(status_file + '.pid', 'w') as f:
        f.write('%d\n' % pid)
    _, st = os.waitpid(pid, os.WUNTRACED)
    with open(status_file, 'w') as f:
        f.write('%d\n' % st)
    if os.WIFSTOPPED(st):
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
    os._exit(0)


class Proc:
    def __init__(self, argv, kinds, stdin_data, tmpdir, tag, background):
        self.argv = argv
        self.streams = Streams(kinds, stdin_data, tmpdir, tag)
        self.status_file = os.path.join(tmpdir, tag + '.bgstatus') if background else None
        self.pid = spawn(argv, self.streams, background, self.status_file)
        self.streams.after_spawn()
        self.status = None      # os.waitpid's status, once reaped

    def poll(self):
        if self.status is None:
            pid, st = os.waitpid(self.pid, os.WNOHANG)
            if pid:
                self.status = st
        return self.status is not None

    def kill(self):
        groups = [self.pid]
        if self.status_file:
            try:
                with open(self.status_file + '.pid') as f:
                    groups.append(int(f.read()))   # the job's own group
            except (OSError, ValueError):
                pass
        for g in groups:
            try:
                os.killpg(g, signal.SIGKILL)
            except OSError:
                pass

    def verdict(self):
        """(exit status or None, why not an exit)"""
        st = self.status
        if self.status_file:
            try:
                with open(self.status_file) as f:
                    st = int(f.read())
            except (OSError, ValueError):
                return None, 'the background wrapper left no status'
        if os.WIFSTOPPED(st):
            return None, 'stopped by %s' % signame(os.WSTOPSIG(st))
        if os.WIFSIGNALED(st):
            return None, 'killed by %s' % signame(os.WTERMSIG(st))
        return os.WEXITSTATUS(st), ''


def drive(procs, deadline):
    """Collect every stream until each process has exited and its streams
    are at an end; kill everything at the deadline.  True if in time."""
    while True:
        fds = {fd: p for p in procs for fd in p.streams.readers}
        done = all(p.poll() for p in procs)
        if done and not fds:
            return True
        if time.monotonic() > deadline:
            for p in procs:
                p.kill()
            for p in procs:
                if p.status is None:
                    _, p.status = os.waitpid(p.pid, 0)
            return False
        ready, _, _ = select.select(list(fds), [], [], 0.01)
        for fd in ready:
            fds[fd].streams.pump(fd)
        if done and not ready:
            # Exited, and a descendant still holds a stream open (a
            # pty is at its end once the last holder closes it).
            time.sleep(0.01)


def wait_ready(path, peer, deadline):
    while time.monotonic() < deadline:
        if os.path.exists(path) and os.path.getsize(path) > 0:
            with open(path) as f:
                return f.read().strip()
        if peer.poll():
            return None
        # Keep its pipes drained while it starts.
        ready, _, _ = select.select(list(peer.streams.readers), [], [], 0.02)
        for fd in ready:
            peer.streams.pump(fd)
    return None


def check(label, proc, want_status, outs, errs, problems):
    status, why = proc.verdict()
    if status is None:
        problems.append('%s %s' % (label, why))
    elif status != want_status:
        problems.append('%s exited %d, not %d' % (label, status, want_status))
    for role, patterns in (('out', outs), ('err', errs)):
        text = proc.streams.wrote(role)
        if text is None:
            continue
        for pat in patterns:
            if not re.search(pat, text, re.M):
                problems.append("%s: no /%s/ on std%s (%s)" % (label, pat, role, proc.streams.kinds[role]))


def tail(proc):
    for role in ('err', 'out'):
        text = proc.streams.wrote(role)
        if text and text.strip():
            return ' | '.join(text.strip().splitlines()[-3:])[-300:]
    return ''


def combinations(matrix, kinds, stdin_kinds, closed, background):
    """[({'in', 'out', 'err'} -> kind, as a background job?)]"""
    runs = []
    if matrix == 'full':
        # stdin's kind: a Latin square over the other two, so that each
        # stdin kind meets each stdout kind and each stderr kind once.
        for i, out in enumerate(kinds):
            for j, err in enumerate(kinds):
                runs.append(({'in': stdin_kinds[(i + j) % len(stdin_kinds)], 'out': out, 'err': err}, False))
    else:
        for k in kinds:
            runs.append(({'in': k if k in stdin_kinds else stdin_kinds[0], 'out': k, 'err': k}, False))
    if background and 'tty' in stdin_kinds:
        runs.append(({'in': 'tty', 'out': 'tty', 'err': 'tty'}, True))
    # Closed by the caller (`cmd >&-`): the first file the command opens
    # must not become its stdout.
    first = 'file' if 'file' in stdin_kinds else stdin_kinds[0]
    no_stdin = 'closed' if 'null' in stdin_kinds else first
    if closed and matrix == 'full':
        runs += [({'in': no_stdin, 'out': 'file', 'err': 'file'}, False),
                 ({'in': first, 'out': 'closed', 'err': 'file'}, False),
                 ({'in': first, 'out': 'file', 'err': 'closed'}, False)]
    elif closed:
        runs.append(({'in': no_stdin, 'out': 'closed', 'err': 'file'}, False))
    return runs


def parser():
    ap = argparse.ArgumentParser(description=__doc__.split('\n\n')[0],
                                 usage='%(prog)s [options] -- CMD [ARG...] [--and [options] -- CMD [ARG...]]...')
    ap.add_argument('--name', required=True)
    ap.add_argument('--matrix', choices=('full', 'same'), default='full')
    ap.add_argument('--status', type=int, default=0)
    ap.add_argument('--out', action='append', default=[], help='a regex stdout must hold')
    ap.add_argument('--err', action='append', default=[], help='a regex stderr must hold')
    ap.add_argument('--stdin', default='', help='what stdin holds (a file, a pipe, typed on the pty)')
    ap.add_argument('--stdin-kinds', default=','.join(KINDS))
    ap.add_argument('--kinds', default=','.join(KINDS), help='the kinds stdout and stderr take')
    ap.add_argument('--no-background', action='store_true',
                    help='no background-job run (for a command that waits for input it cannot get there)')
    ap.add_argument('--no-closed', action='store_true', help='no runs with closed streams')
    ap.add_argument('--json-file', action='append', default=[],
                    help='a file that must hold valid JSON after each combination ({dir}: its folder)')
    ap.add_argument('--peer', help='a command line (split on spaces) started first, under the same '
                    'kinds of streams; {ready} in it is a file it writes ADDR:PORT to once listening, '
                    'and {port} in the command becomes that port')
    ap.add_argument('--peer-status', type=int, default=0)
    ap.add_argument('--peer-out', action='append', default=[])
    ap.add_argument('--peer-err', action='append', default=[])
    ap.add_argument('--then', action='append', default=[],
                    help='a command line (split on spaces) that must exit 0 after each combination, '
                    'e.g. a check of a file the command wrote; {dir} is the combination\'s own folder')
    ap.add_argument('--timeout', type=float, default=60, help='seconds per combination')
    ap.add_argument('cmd', nargs='+')
    return ap


def run_case(a, tmp):
    """Every combination for one command; True if all passed."""
    stdin_kinds = a.stdin_kinds.split(',')
    stdin_data = a.stdin.encode().decode('unicode_escape').encode()
    failed = 0
    runs = combinations(a.matrix, a.kinds.split(','), stdin_kinds, not a.no_closed, not a.no_background)
    for n, (kinds, bg) in enumerate(runs):
        label = 'in=%s out=%s err=%s%s' % (kinds['in'], kinds['out'], kinds['err'], ' (background job)' if bg else '')
        tag = '%s.c%d' % (re.sub(r'[^\w.-]', '_', a.name), n)
        # {dir}: a folder of this combination's own, for the files it writes
        cdir = os.path.join(tmp, tag + '.d')
        os.mkdir(cdir)
        deadline = time.monotonic() + a.timeout
        procs, problems = [], []
        cmd = [w.replace('{dir}', cdir) for w in a.cmd]
        peer = None
        if a.peer:
            ready = os.path.join(tmp, tag + '.ready')
            peer = Proc([w.replace('{ready}', ready).replace('{dir}', cdir) for w in a.peer.split()],
                        kinds, stdin_data, tmp, tag + '.peer', bg)
            procs.append(peer)
            addr = wait_ready(ready, peer, deadline)
            if addr is None:
                peer.kill()
                problems.append('the peer never got ready')
            else:
                cmd = [w.replace('{port}', addr.rsplit(':', 1)[1]) for w in cmd]
        if not problems:
            procs.append(Proc(cmd, kinds, stdin_data, tmp, tag, bg))
        if not drive(procs, deadline):
            problems.append('still running after %g s' % a.timeout)
        else:
            if not peer or len(procs) == 2:
                check('command', procs[-1], a.status, a.out, a.err, problems)
            if peer:
                check('peer', peer, a.peer_status, a.peer_out, a.peer_err, problems)
            for path in a.json_file:
                path = path.replace('{dir}', cdir)
                try:
                    with open(path) as f:
                        json.load(f)
                except (OSError, ValueError) as e:
                    problems.append('%s: not JSON: %s' % (path, e))
            for then in a.then:
                argv = [w.replace('{dir}', cdir) for w in then.split()]
                r = subprocess.run(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                   stderr=subprocess.STDOUT, timeout=a.timeout)
                if r.returncode:
                    problems.append('`%s` exited %d: %s' % (' '.join(argv), r.returncode,
                                    r.stdout.decode('utf-8', 'replace').strip()[-200:]))
        for p in procs:
            p.streams.close()
        if problems:
            failed += 1
            print('FAIL - %s: %s: %s%s' % (a.name, label, '; '.join(problems),
                                           (' -- ' + tail(procs[-1])) if procs else ''))
        else:
            print('ok   - %s: %s' % (a.name, label))
        sys.stdout.flush()
    print('%s: %d of %d combinations failed' % (a.name, failed, len(runs)) if failed
          else '%s: all %d combinations passed' % (a.name, len(runs)))
    return not failed


def main():
    # Several commands in one go (one interpreter start): cases split at --and.
    cases, cur = [], []
    for w in sys.argv[1:]:
        if w == '--and':
            cases.append(cur)
            cur = []
        else:
            cur.append(w)
    cases.append(cur)
    ap = parser()
    parsed = [ap.parse_args(c) for c in cases]
    with tempfile.TemporaryDirectory(prefix='stdio-matrix.') as tmp:
        ok = [run_case(a, tmp) for a in parsed]
    return 0 if all(ok) else 1


if __name__ == '__main__':
    sys.exit(main())
