# test_bad_images.sh -- a guest image is untrusted input: each kind of bad
# file is refused with one line that says what is wrong, and exit status 1.
. "$(dirname "$0")/lib.sh"
need_kvm
STUB=${2:?usage: $0 lguest-kvm guest.elf}

printf 'this is not an ELF file\n' >"$TMP/text.elf"
head -c 100 "$STUB" >"$TMP/trunc.elf"
python3 - "$STUB" "$TMP" <<'PY'
import struct, sys
src, tmp = sys.argv[1], sys.argv[2]
img = bytearray(open(src, "rb").read())
def save(name, data): open(f"{tmp}/{name}.elf", "wb").write(data)
b = bytearray(img); b[4] = 1; save("class32", b)                    # ELFCLASS32
b = bytearray(img); struct.pack_into("<H", b, 18, 183); save("arm", b)  # EM_AARCH64
phoff, = struct.unpack_from("<Q", img, 32)
phnum, = struct.unpack_from("<H", img, 56)
b = bytearray(img)                                                   # first PT_LOAD far away
for i in range(phnum):
    o = phoff + 56 * i
    if struct.unpack_from("<I", b, o)[0] == 1:
        struct.pack_into("<Q", b, o + 24, 0x7fff00000000)
        break
save("outside", b)
b = bytearray(img)                                                   # PT_LOAD past end of file
for i in range(phnum):
    o = phoff + 56 * i
    if struct.unpack_from("<I", b, o)[0] == 1:
        struct.pack_into("<Q", b, o + 32, len(img) * 4)
        break
save("pastend", b)
b = bytearray(img)                                                   # note size that wraps 32 bits
i = b.find(b"Xen\0")
struct.pack_into("<I", b, i - 8, 0xfffffffd)
save("notewrap", b)
b = bytearray(img)                                                   # no PVH note: rename it
i = b.find(b"Xen\0")
b[i:i+4] = b"Nex\0"; save("nonote", b)
PY

expect() {  # NAME PATTERN
	run_lkvm "$1" run "$TMP/$1.elf"
	check "$1: exit status 1" [ "$(rc_of "$1")" = 1 ]
	check "$1: one line" [ "$(wc -l <"$TMP/$1.err")" = 1 ]
	check "$1: says '$2'" grep -q "^lguest-kvm: .*$2" "$TMP/$1.err"
}
expect text "not an ELF file"
expect trunc "truncated"
expect class32 "not an x86-64"
expect arm "not an x86-64"
expect outside "outside guest RAM"
expect pastend "past the end of the file"
expect nonote "no PVH entry note"
expect notewrap "malformed ELF note"
run_lkvm missing run "$TMP/does-not-exist.elf"
check "missing file: exit 1, one line naming it" \
	sh -c "[ $(rc_of missing) = 1 ] && grep -q 'does-not-exist.elf: No such file' $TMP/missing.err"
finish
