#!/usr/bin/env python3
"""check_option_tables.py -- README's option tables against `--help`.

    check_option_tables.py LGUEST-KVM README.md

Each command's options are described once, in the program (common/opt_table.h),
and `lguest-kvm CMD --help` prints that description.  README.md says them again
for readers, under "### `CMD` options".  Where that section has a table
("| `--name ARG` | meaning (default) |"), its rows must be exactly the options
--help lists, with the same argument, and a row must state the default --help
states.  Where the section is prose, every option --help lists must appear in it.
One line per check, "N passed, M failed", exit 1 on any failure.
"""
import re
import subprocess
import sys

OPTION = re.compile(r"^  (--[a-z][a-z0-9-]*)(?: ([^ ]+))?(?:  +| *$)(.*)$")


def help_options(lkvm, cmd):
    """{'--name': (arg or None, default or None)} from `lkvm CMD --help`."""
    out = subprocess.run([lkvm, cmd, "--help"], capture_output=True, text=True, check=True).stdout
    entries, name = {}, None
    for line in out.splitlines():
        m = OPTION.match(line)
        if m and not line.startswith("  -h") and not line.startswith("  -V"):
            name = m.group(1)
            entries[name] = [m.group(2), m.group(3).strip()]
        elif name and line.startswith(" " * 23) and line.strip():
            entries[name][1] += " " + line.strip()
        else:
            name = None
    result = {}
    for opt, (arg, text) in entries.items():
        d = re.search(r"default (.*)\)$", text)
        result[opt] = (arg, d.group(1) if d else None)
    return result


def readme_sections(path):
    """{'cmd': text} for each "### `cmd` options" section."""
    sections, cmd = {}, None
    for line in open(path, encoding="utf-8"):
        m = re.match(r"^### `([a-z]+)` options", line)
        if m:
            cmd = m.group(1)
            sections[cmd] = ""
        elif line.startswith("#"):
            cmd = None
        elif cmd:
            sections[cmd] += line
    return sections


def main():
    lkvm, readme = sys.argv[1], sys.argv[2]
    passed = failed = 0

    def check(ok, what):
        nonlocal passed, failed
        print(("ok   " if ok else "FAIL ") + what)
        passed, failed = passed + bool(ok), failed + (not ok)

    for cmd, text in readme_sections(readme).items():
        opts = help_options(lkvm, cmd)
        rows = {}
        for line in text.splitlines():
            m = re.match(r"^\| `(--[a-z][a-z0-9-]*)(?: ([^`]+))?` \|(.*)\|$", line)
            if m:
                rows[m.group(1)] = (m.group(2).replace("\\|", "|") if m.group(2) else None, m.group(3))
        if not rows:
            for opt in opts:
                check(opt in text, f"README's {cmd} section names {opt}")
            continue
        check(set(rows) == set(opts),
              f"README's {cmd} table has --help's options (only in README: {sorted(set(rows) - set(opts))}; "
              f"only in --help: {sorted(set(opts) - set(rows))})")
        for opt in sorted(set(rows) & set(opts)):
            arg, default = opts[opt]
            check(rows[opt][0] == arg, f"{cmd} {opt}: README's argument {rows[opt][0]!r} is --help's {arg!r}")
            if default:
                check(f"({default})" in rows[opt][1],
                      f"{cmd} {opt}: README states --help's default ({default})")
    print(f"{passed} passed, {failed} failed")
    sys.exit(1 if failed or not passed else 0)


if __name__ == "__main__":
    main()
