#!/usr/bin/env python3
"""btf_from_image.py IMAGE OUT - copy the kernel's BTF out of a kernel image (vmlinuz, gzip
or not: arm64's Image carries .BTF as raw bytes, found by its header), so that `make vmlinux
ARCH=...` can generate vmlinux/ARCH/vmlinux.h from one of Debian's kernel packages without
booting it. The largest consistent BTF blob in the image is the kernel's."""

import gzip
import struct
import sys

MAGIC = b"\x9f\xeb\x01\x00\x18\x00\x00\x00"  # magic 0xeb9f, version 1, flags 0, hdr_len 24


def main():
    image, out = sys.argv[1], sys.argv[2]
    data = open(image, "rb").read()
    if data[:2] == b"\x1f\x8b":
        data = gzip.decompress(data)
    best = None
    pos = data.find(MAGIC)
    while pos >= 0:
        type_off, type_len, str_off, str_len = struct.unpack_from("<4I", data, pos + 8)
        size = 24 + str_off + str_len
        if type_off == 0 and str_off == type_len and pos + size <= len(data):
            if best is None or size > best[1]:
                best = (pos, size)
        pos = data.find(MAGIC, pos + 1)
    if best is None:
        sys.exit(f"btf_from_image.py: no BTF in {image} (a kernel without CONFIG_DEBUG_INFO_BTF?)")
    with open(out, "wb") as f:
        f.write(data[best[0]:best[0] + best[1]])


if __name__ == "__main__":
    main()
