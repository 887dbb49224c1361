"""Adds a transformation property (irot, imir, clap) to the primary item of a HEIF file.

Encoders at hand (heif-enc, pillow-heif) write no transformation, but iPhones do (a
portrait photo is stored landscape with `irot`). The tests make such files by editing
the boxes: the property is appended to `ipco`, associated with the primary item in
`ipma`, the sizes of the enclosing boxes grow, and `iloc`'s file offsets move by as much.
"""

import struct

CONTAINERS = {b"meta": 4, b"iprp": 0}  # box type -> header bytes after size/type (full box)


def boxes(data, start, end):
    """(type, box start, payload start, box end) of the boxes between start and end."""
    pos = start
    while pos + 8 <= end:
        size, kind = struct.unpack(">I4s", data[pos:pos + 8])
        header = 8
        if size == 1:
            size = struct.unpack(">Q", data[pos + 8:pos + 16])[0]
            header = 16
        elif size == 0:
            size = end - pos
        yield kind, pos, pos + header, pos + size
        pos += size


def find(data, start, end, kind):
    """(box start, payload start, box end) of the first box of type `kind` between start and end."""
    for k, box, payload, box_end in boxes(data, start, end):
        if k == kind:
            return box, payload, box_end
    raise ValueError(f"no {kind!r} box")


def irot(quarter_turns_counterclockwise):
    return struct.pack(">I4sB", 9, b"irot", quarter_turns_counterclockwise & 3)


def imir(axis):
    return struct.pack(">I4sB", 9, b"imir", axis & 1)


def clap(width, height, offset_x=0, offset_y=0):
    """A clean aperture of width x height centered offset pixels from the image center."""
    return struct.pack(">I4s8I", 40, b"clap", width, 1, height, 1, offset_x, 1, offset_y, 1)


def add_property(data: bytes, prop: bytes) -> bytes:
    """The HEIF file `data` with `prop` (a whole box) applied to its primary item."""
    data = bytearray(data)
    meta, meta_payload, meta_end = find(data, 0, len(data), b"meta")
    children = meta_payload + 4  # full box: version and flags
    _, pitm_payload, _ = find(data, children, meta_end, b"pitm")
    pitm_version = data[pitm_payload]
    primary = (struct.unpack(">H", data[pitm_payload + 4:pitm_payload + 6])[0] if pitm_version == 0
               else struct.unpack(">I", data[pitm_payload + 4:pitm_payload + 8])[0])
    iprp, iprp_payload, iprp_end = find(data, children, meta_end, b"iprp")
    ipco, ipco_payload, ipco_end = find(data, iprp_payload, iprp_end, b"ipco")
    index = sum(1 for _ in boxes(data, ipco_payload, ipco_end)) + 1
    ipma, ipma_payload, ipma_end = find(data, iprp_payload, iprp_end, b"ipma")

    # The new ipma, with the association added to the primary item.
    version, flags = data[ipma_payload], int.from_bytes(data[ipma_payload + 1:ipma_payload + 4], "big")
    wide_index = flags & 1
    pos = ipma_payload + 4
    count = struct.unpack(">I", data[pos:pos + 4])[0]
    pos += 4
    out = bytearray(data[ipma_payload:ipma_payload + 8])
    found = False
    for _ in range(count):
        id_size = 2 if version < 1 else 4
        item = int.from_bytes(data[pos:pos + id_size], "big")
        associations = data[pos + id_size]
        entry_size = id_size + 1 + associations * (2 if wide_index else 1)
        entry = bytearray(data[pos:pos + entry_size])
        if item == primary:
            found = True
            if not wide_index and index > 127:
                raise ValueError("property index needs the wide ipma form")
            entry[id_size] = associations + 1
            entry += struct.pack(">H", 0x8000 | index) if wide_index else bytes([0x80 | index])
        out += entry
        pos += entry_size
    if not found:
        raise ValueError("the primary item has no ipma entry")
    new_ipma = struct.pack(">I4s", 8 + len(out), b"ipma") + out
    grown = len(prop) + len(new_ipma) - (ipma_end - ipma)

    # iloc file offsets (construction method 0) past the meta box move by `grown`.
    _, iloc_payload, _ = find(data, children, meta_end, b"iloc")
    _shift_iloc(data, iloc_payload, meta_end, grown)

    result = (data[:ipco_end] + prop + data[ipco_end:ipma] + new_ipma + data[ipma_end:])
    for box in (meta, iprp, ipco):
        size = struct.unpack(">I", result[box:box + 4])[0]
        result[box:box + 4] = struct.pack(">I", size + (len(prop) if box == ipco else grown))
    return bytes(result)


def _shift_iloc(data, payload, threshold, delta):
    version = data[payload]
    pos = payload + 4
    sizes = data[pos] >> 4, data[pos] & 15, data[pos + 1] >> 4, data[pos + 1] & 15
    offset_size, length_size, base_size, index_size = sizes
    if version == 0:
        index_size = 0
    pos += 2
    count_size = 2 if version < 2 else 4
    count = int.from_bytes(data[pos:pos + count_size], "big")
    pos += count_size

    def read(n):
        nonlocal pos
        value = int.from_bytes(data[pos:pos + n], "big") if n else 0
        pos += n
        return value

    def shift(n, base):
        nonlocal pos
        if n:
            value = int.from_bytes(data[pos:pos + n], "big")
            if base + value >= threshold:
                data[pos:pos + n] = (value + delta).to_bytes(n, "big")
        pos += n

    for _ in range(count):
        read(2 if version < 2 else 4)  # item id
        method = read(2) & 15 if version in (1, 2) else 0
        read(2)  # data reference index
        base_at = pos
        base = read(base_size)
        extents = read(2)
        moved_base = method == 0 and base_size and base >= threshold
        if moved_base:
            data[base_at:base_at + base_size] = (base + delta).to_bytes(base_size, "big")
        for _ in range(extents):
            read(index_size)
            if method == 0 and not moved_base:
                shift(offset_size, base)
            else:
                read(offset_size)
            read(length_size)
