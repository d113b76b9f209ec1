#!/usr/bin/env python3
"""check_doc_names.py -- every code name a document mentions exists.

docs/architecture.md tells the story of the code and names files,
functions, types, constants and options in `backticks` as it goes.  When
the code moves on, the story must follow; this test is what notices.  For
each backticked span it decides what kind of name it is and looks it up:

  a path (has a '/' or a source suffix)  a file in the tree, by path or by
                                         its last component
  an option (--name)                     the literal text in the launcher
                                         or the guest stub's sources
  an identifier, or name()               a whole word in the project's C,
                                         assembly, Meson or shell sources,
                                         or in the system's headers (the
                                         kernel's KVM_*, VRING_*; libc's)

Spans that are none of these (command lines, values, prose in code font)
are left alone.  One line per missing name, then a count; exit 1 if any.

usage: check_doc_names.py SOURCE_ROOT DOC.md...
"""
import os
import re
import sys

SOURCE_SUFFIXES = ('.c', '.h', '.S', '.ld', '.sh', '.py', '.build', '.txt', '.md')
SKIP_DIRS = {'.git', 'results'}
# System names a document may use: the kernel's uapi (KVM_*, VRING_*) and
# libc's (close_range, prctl, ...).
SYSTEM_DIRS = ['/usr/include', '/usr/include/linux', '/usr/include/x86_64-linux-gnu/asm',
               '/usr/include/asm-generic', '/usr/include/x86_64-linux-gnu/bits',
               '/usr/include/x86_64-linux-gnu/sys']
# What the build and the commands make, which a fresh tree does not hold.
GENERATED = ('build/', 'results/', 'guest-stub/lguest-stub.elf')


def tree_files(root):
    for top, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if d not in SKIP_DIRS and not d.startswith('build')]
        for f in files:
            yield os.path.relpath(os.path.join(top, f), root)


def words_of(paths):
    words = set()
    for p in paths:
        try:
            with open(p, errors='replace') as f:
                words.update(re.findall(r'[A-Za-z_][A-Za-z0-9_]*', f.read()))
        except OSError:
            pass
    return words


def main():
    if len(sys.argv) < 3:
        print(__doc__.strip().splitlines()[-1])
        return 2
    root, docs = sys.argv[1], sys.argv[2:]
    files = sorted(tree_files(root))
    basenames = {os.path.basename(f) for f in files}
    dirs = {os.path.dirname(f) for f in files}
    code = [os.path.join(root, f) for f in files if f.endswith(('.c', '.h', '.S', '.ld', '.build', '.sh', '.py'))
            or os.path.basename(f) in ('run', 'lkvm-vm', 'quickstart.sh', 'meson_options.txt')]
    words = words_of(code)
    system = words_of(os.path.join(d, f) for d in SYSTEM_DIRS if os.path.isdir(d)
                      for f in os.listdir(d) if f.endswith('.h'))
    texts = ''.join(open(p, errors='replace').read() for p in code)

    missing = checked = 0
    for doc in docs:
        text = open(doc).read()
        # fenced blocks are pictures and transcripts, not names
        text = re.sub(r'```.*?```', '', text, flags=re.S)
        for span in sorted(set(re.findall(r'`([^`\n]+)`', text))):
            name = span.strip()
            if name.startswith('struct ') or name.startswith('enum '):
                name = name.split(None, 1)[1]
            if name.endswith('()'):
                name = name[:-2]
            if re.fullmatch(r'--[a-z][a-z0-9-]*', name):
                found = name in texts
            elif ' ' in name or not name:
                continue
            elif '/' in name or name.endswith(SOURCE_SUFFIXES):
                path = name.rstrip('/')
                if (any(c in path for c in '*{}<>[]$') or re.match(r'^[a-z]+://', path) or path.startswith('/')
                        or name.startswith(GENERATED)):
                    continue
                found = (path in files or path in dirs or os.path.basename(path) in basenames
                         or any(d.endswith(path) for d in dirs))
            elif re.fullmatch(r'[A-Za-z_][A-Za-z0-9_]*', name) and ('_' in name or re.search(r'[a-z][A-Z]|^[A-Z]{3,}', name)):
                found = name in words or name in system
            else:
                continue
            checked += 1
            if not found:
                missing += 1
                print(f'{doc}: `{span}` names nothing in the tree')
    print(f'{checked} names checked, {missing} missing')
    return 1 if missing else 0


if __name__ == '__main__':
    sys.exit(main())
