#!/usr/bin/env python3
"""extract_cmdlines.py -- every lguest-kvm command line the docs and tests
contain, as seed inputs for the command-line fuzzer (fuzz_cmdline.c).

    extract_cmdlines.py SOURCE_DIR OUT_DIR

Reads README.md, docs/*.md (their fenced code and code spans: not the
prose) and every text file under tests/ (scripts, Python), joins
backslash-continued lines, splits each line as the
shell would (shlex), and takes as a command line:
  - lguest-kvm, ./build/lguest-kvm, "$LKVM" (anything naming lguest-kvm or
    LKVM) followed by a command (run, table, receive, send, trace), and
    the test helper `run_lkvm NAME COMMAND ...`;
  - a quoted string or a `code span` that itself starts with a command and
    an option ("run --ring 100": the usage-error lists of test_cli.sh).
A command line ends at the shell's next operator or redirection.  Variables
and substitutions stay as written ("$TMP/x.json"): to the parser they are
words like any other.

Each line is written to OUT_DIR/cmd-COMMAND/seed-SHA1 as the fuzzer reads
it: the words after the command, NUL-separated.  Files named seed-* that
are no longer extracted are removed; others (regress-*: findings) are
left alone.  Prints how many lines per command.
"""
import hashlib
import os
import re
import shlex
import sys

COMMANDS = ("run", "table", "receive", "send", "trace")
OPERATORS = {"|", "||", "&&", ";", "&", ")", "(", "{", "}", "then", "do", "done", "fi"}
TEXT_SUFFIXES = (".sh", ".py", ".md", ".txt", "")


def sources(root):
    yield os.path.join(root, "README.md")
    docs = os.path.join(root, "docs")
    for name in sorted(os.listdir(docs)):
        if name.endswith(".md"):
            yield os.path.join(docs, name)
    for base, dirs, files in os.walk(os.path.join(root, "tests")):
        dirs[:] = sorted(d for d in dirs if d != "corpus")
        for name in sorted(files):
            if os.path.splitext(name)[1] in TEXT_SUFFIXES:
                yield os.path.join(base, name)


def logical_lines(text):
    """Lines with backslash continuations joined."""
    line = ""
    for raw in text.splitlines():
        if raw.endswith("\\"):
            line += raw[:-1] + " "
            continue
        yield line + raw
        line = ""
    if line:
        yield line


def split(line):
    try:
        lex = shlex.shlex(line, posix=True, punctuation_chars=";&|()<>")
        lex.whitespace_split = True
        lex.commenters = ""
        return list(lex)
    except ValueError:   # an unbalanced quote: Markdown prose
        return line.split()


def markdown_code(text):
    """A Markdown file's fenced code lines and its code spans: its prose
    mentions commands ("`lguest-kvm table` without /dev/kvm exits 1")
    without being command lines."""
    fenced = False
    for line in text.splitlines():
        if line.lstrip().startswith("```"):
            fenced = not fenced
            continue
        if fenced:
            yield line
        else:
            for span in re.findall(r"`([^`]+)`", line):
                yield span


def words_until_operator(words):
    out = []
    for w in words:
        if w in OPERATORS or w.startswith("#") or re.match(r"^[0-9]*[<>]", w):
            break
        out.append(w)
    return out


def names_launcher(word):
    return "lguest-kvm" in word or "LKVM" in word


def command_lines(line):
    words = split(line)
    for i, w in enumerate(words):
        if w in COMMANDS and i > 0 and names_launcher(words[i - 1]) and not w.startswith("-"):
            yield w, words_until_operator(words[i + 1:])
        if w == "run_lkvm" and i + 2 < len(words) and words[i + 2] in COMMANDS:
            yield words[i + 2], words_until_operator(words[i + 3:])
    # quoted strings and code spans that are a command line themselves
    for quoted in re.findall(r'"([^"$`]*)"|`([^`]*)`', line):
        text = quoted[0] or quoted[1]
        inner = split(text)
        if len(inner) >= 2 and inner[0] in COMMANDS and inner[1].startswith("-"):
            yield inner[0], words_until_operator(inner[1:])
        for k in range(len(inner) - 1):
            if names_launcher(inner[k]) and inner[k + 1] in COMMANDS:
                yield inner[k + 1], words_until_operator(inner[k + 2:])


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: extract_cmdlines.py SOURCE_DIR OUT_DIR")
    root, out = sys.argv[1], sys.argv[2]
    found = {c: set() for c in COMMANDS}
    for path in sources(root):
        try:
            with open(path, encoding="utf-8") as f:
                text = f.read()
        except (UnicodeDecodeError, FileNotFoundError):
            continue
        if path.endswith(".md"):
            text = "\n".join(markdown_code(text))
        for line in logical_lines(text):
            if not any(c in line for c in COMMANDS):
                continue
            for cmd, words in command_lines(line):
                found[cmd].add("\0".join(words).encode())
    for cmd in COMMANDS:
        d = os.path.join(out, "cmd-" + cmd)
        os.makedirs(d, exist_ok=True)
        keep = set()
        for data in found[cmd]:
            name = "seed-" + hashlib.sha1(data).hexdigest()[:16]
            keep.add(name)
            with open(os.path.join(d, name), "wb") as f:
                f.write(data)
        for name in os.listdir(d):
            if name.startswith("seed-") and name not in keep:
                os.remove(os.path.join(d, name))
        print(f"{cmd}: {len(found[cmd])} command lines")


if __name__ == "__main__":
    main()
