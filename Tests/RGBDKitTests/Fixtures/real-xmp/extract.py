"""Extracts the XMP packets of Apple depth data from real Portrait files.

HEIC: walks meta/iinf (infe items of type 'mime') and iloc to read each mime item
exactly as stored; keeps those with the depthData namespace (not the matte's).
JPEG: walks the MPF index and reads each image's APP1 XMP.
"""
import struct, sys
from PIL import Image

def boxes(d, s, e):
    p = s
    while p + 8 <= e:
        size, kind = struct.unpack('>I4s', d[p:p+8]); h = 8
        if size == 1: size = struct.unpack('>Q', d[p+8:p+16])[0]; h = 16
        elif size == 0: size = e - p
        yield kind, p, p + h, p + size
        p += size

def find(d, s, e, k):
    for kk, b, pl, be in boxes(d, s, e):
        if kk == k: return pl, be
    raise KeyError(k)

def heic_mime_items(d):
    mpl, mend = find(d, 0, len(d), b'meta')
    c = mpl + 4
    ipl, iend = find(d, c, mend, b'iinf')
    ver = d[ipl]
    q = ipl + 4 + (2 if ver == 0 else 4)
    items = {}
    for kk, b, pl, be in boxes(d, q, iend):
        assert kk == b'infe'
        v = d[pl]
        assert v >= 2
        p = pl + 4
        if v == 2: iid = struct.unpack('>H', d[p:p+2])[0]; p += 2
        else: iid = struct.unpack('>I', d[p:p+4])[0]; p += 4
        p += 2  # protection index
        itype = d[p:p+4]; p += 4
        name_end = d.index(b'\0', p); p = name_end + 1
        ctype = d[p:d.index(b'\0', p)].decode() if itype == b'mime' else None
        items[iid] = (itype, ctype)
    lpl, lend = find(d, c, mend, b'iloc')
    v = d[lpl]; p = lpl + 4
    a, b_ = d[p], d[p+1]; p += 2
    off_size, len_size, base_size = a >> 4, a & 15, b_ >> 4
    idx_size = (b_ & 15) if v in (1, 2) else 0
    def rd(n):
        nonlocal p
        if n == 0: return 0
        val = int.from_bytes(d[p:p+n], 'big'); p += n; return val
    count = rd(2) if v < 2 else rd(4)
    locs = {}
    for _ in range(count):
        iid = rd(2) if v < 2 else rd(4)
        method = (rd(2) & 15) if v in (1, 2) else 0
        rd(2)  # data reference index
        base = rd(base_size)
        ext = []
        for _ in range(rd(2)):
            if idx_size: rd(idx_size)
            eo = rd(off_size); el = rd(len_size)
            ext.append((base + eo, el))
        locs[iid] = (method, ext)
    out = []
    for iid, (itype, ctype) in items.items():
        if itype != b'mime': continue
        method, ext = locs[iid]
        assert method == 0
        data = b''.join(d[o:o+l] for o, l in ext)
        out.append((iid, ctype, data))
    return out

def jpeg_xmps(path):
    d = open(path, 'rb').read()
    im = Image.open(path)
    out = []
    for k, e in enumerate(im.mpinfo[0xB002]):
        if k == 0: continue
        # PIL's MPF offsets are relative to the MPF TIFF header; find it.
        hdr = d.index(b'MPF\0') + 4
        start = hdr + e['DataOffset']
        img = d[start:start + e['Size']]
        p = 2
        while p + 4 <= len(img) and img[p] == 0xFF:
            m = img[p+1]
            if m in (0xDA, 0xD9): break
            ln = struct.unpack('>H', img[p+2:p+4])[0]
            pl = img[p+4:p+2+ln]
            sig = b'http://ns.adobe.com/xap/1.0/\0'
            if m == 0xE1 and pl.startswith(sig): out.append((k + 1, pl[len(sig):]))
            p += 2 + ln
    return out

if __name__ == '__main__':
    for f in sys.argv[1:]:
        d = open(f, 'rb').read()
        print('==', f)
        if d[:3] == b'\xff\xd8\xff':
            for k, x in jpeg_xmps(f): print(' MPF image', k, len(x), b'depthData' in x, x[:0])
        else:
            for iid, ct, x in heic_mime_items(d): print(' item', iid, ct, len(x), b'depthData' in x)
