#!/usr/bin/env python3
"""check_product_unchanged.py -- the race hooks cost the product nothing.

include/race_hooks.h promises that RACE_POINT, RACE_MMIO_WRITE and the
`#if LKVM_MUTANT == ...` blocks leave no trace outside the race harness.
This test holds it to that: each file with hooks is compiled as the product
compiles it (no LKVM_RACE_HOOKS), and again from a copy with every hook line
and every mutant block cut out; the two objects' disassembly must be the same
instruction for instruction.  Then it checks the converse, that the harness's
build (-DLKVM_RACE_HOOKS) really does differ, so the comparison can fail.

usage: check_product_unchanged.py CC SOURCE_ROOT
"""
import os
import re
import subprocess
import sys
import tempfile

FILES = [
    "guest-stub/virtio_drv.c",
    "guest-stub/vring_packed_drv.c",
    "devices/virtqueue.c",
    "devices/vring_split.c",
    "devices/vring_packed.c",
    "devices/net.c",
]
HOOK_LINE = re.compile(r"^\s*RACE_(POINT|MMIO_WRITE)\(.*\);\s*$")


def strip_hooks(text):
    """The file as if the hooks had never been written."""
    out, depth = [], 0
    for line in text.splitlines(keepends=True):
        s = line.strip()
        if depth:
            if s.startswith("#if"):
                depth += 1
            elif s.startswith("#endif"):
                depth -= 1
            continue
        if re.match(r"#if LKVM_MUTANT\b", s):
            depth = 1
            continue
        if HOOK_LINE.match(line):
            continue
        out.append(line)
    return "".join(out)


def disassemble(cc, root, src, tmp, name, extra):
    flags = ["-std=gnu11", "-O2", "-fno-strict-aliasing", "-D_GNU_SOURCE", "-fno-asynchronous-unwind-tables"]
    incs = ["-I" + os.path.join(root, d) for d in ("include", "devices", "common", "guest-stub", "tests/unit")]
    obj = os.path.join(tmp, name + ".o")
    pre = []
    if src.startswith("guest-stub/"):
        # A hosted guest file needs the test's stand-in for lib.h.
        pre = ["-include", os.path.join(root, "tests/unit/guest_lib_hosted.h")]
    # Compile from the file's own directory, so its quoted includes resolve.
    path = os.path.join(tmp, os.path.basename(src)) if name.endswith("stripped") else os.path.join(root, src)
    subprocess.run(cc + flags + extra + pre + incs + ["-I" + os.path.dirname(os.path.join(root, src)),
                                                      "-c", path, "-o", obj], check=True)
    dis = subprocess.run(["objdump", "-d", "--no-show-raw-insn", obj], check=True, capture_output=True,
                         text=True).stdout
    # Drop the header line naming the object file.
    return [l for l in dis.splitlines() if "file format" not in l]


def main():
    cc = sys.argv[1].split()
    root = sys.argv[2]
    failed = 0
    with tempfile.TemporaryDirectory() as tmp:
        for src in FILES:
            text = open(os.path.join(root, src)).read()
            hooks = sum(1 for l in text.splitlines() if HOOK_LINE.match(l))
            mutants = len(re.findall(r"#if LKVM_MUTANT\b", text))
            with open(os.path.join(tmp, os.path.basename(src)), "w") as f:
                f.write(strip_hooks(text))
            base = os.path.basename(src)[:-2]
            product = disassemble(cc, root, src, tmp, base + "-product", [])
            stripped = disassemble(cc, root, src, tmp, base + "-stripped", [])
            harness = disassemble(cc, root, src, tmp, base + "-harness", ["-DLKVM_RACE_HOOKS"])
            same = product == stripped
            differs = product != harness
            print("%s %s: %d hook(s), %d mutant block(s); product == no-hooks copy: %s (%d lines); "
                  "harness build differs: %s" % ("ok  " if same and (differs or not hooks) else "FAIL", src,
                                                  hooks, mutants, same, len(product), differs))
            if not same or (hooks and not differs):
                failed += 1
    print("%d file(s), %d failed" % (len(FILES), failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
