#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
# test/fuzz/seeds.py - writes the seed corpus of each fuzz target into
# test/fuzz/<target>/ (well-formed inputs a frontend or a user would send,
# so the fuzzer starts from the interesting paths).  Run it after changing
# an input layout of a target; the files it writes are committed.
import os
import struct
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
A = 0x10000  # fake guest region A (test/unit/pmd/fake_guest.h); B follows at 0x20000
NEXT, WRITE, INDIRECT = 1, 2, 4
T_IN, T_OUT, T_FLUSH, T_GET_ID, T_DISCARD, T_WZ = 0, 1, 4, 8, 11, 13


def put(target, name, data):
    d = os.path.join(HERE, target)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)


def desc(addr, ln, flags, nxt):
    return struct.pack("<QIHH", addr, ln, flags, nxt)


def pdesc(addr, ln, buf_id, flags):
    """A packed ring descriptor (virtio 1.2, 2.8.13)."""
    return struct.pack("<QIHH", addr, ln, buf_id, flags)


def hdr(t, sector):
    return struct.pack("<IIQ", t, 0, sector)


def guest(items, size=0x400):
    """Region A bytes from 0x10000: items = [(gpa, bytes)]."""
    mem = bytearray(size)
    for gpa, b in items:
        off = gpa - A
        if off + len(b) > len(mem):
            mem.extend(bytes(off + len(b) - len(mem)))
        mem[off:off + len(b)] = b
    return bytes(mem)


def vq_chain_seeds():
    # queue of 4 entries (log2 = 2): table at 0x10000..0x10040
    def chain(name, descs, extra, flags=1, head=0, qlog=2):
        tbl = b"".join(desc(*d) for d in descs)
        put("vq_chain", name, struct.pack("<BHB", qlog, head, flags) + guest([(A, tbl)] + extra))

    H, D, S = 0x10100, 0x10200, 0x10180
    chain("read", [(H, 16, NEXT, 1), (D, 512, WRITE | NEXT, 2), (S, 1, WRITE, 0)],
          [(H, hdr(T_IN, 3))])
    chain("write", [(H, 16, NEXT, 1), (D, 1024, NEXT, 2), (S, 1, WRITE, 0)],
          [(H, hdr(T_OUT, 0))])
    chain("flush", [(H, 16, NEXT, 1), (S, 1, WRITE, 0)], [(H, hdr(T_FLUSH, 0))])
    chain("get_id", [(H, 16, NEXT, 1), (D, 20, WRITE | NEXT, 2), (S, 1, WRITE, 0)],
          [(H, hdr(T_GET_ID, 0))])
    chain("discard", [(H, 16, NEXT, 1), (D, 16, NEXT, 2), (S, 1, WRITE, 0)],
          [(H, hdr(T_DISCARD, 0)), (D, struct.pack("<QII", 8, 8, 0))])
    chain("write_zeroes", [(H, 16, NEXT, 1), (D, 32, NEXT, 2), (S, 1, WRITE, 0)],
          [(H, hdr(T_WZ, 0)), (D, struct.pack("<QII", 0, 4, 1) + struct.pack("<QII", 16, 4, 0))])
    # header and status in one descriptor each way, data crossing region A -> B
    chain("cross_regions", [(H, 16, NEXT, 1), (0x1ff00, 1024, WRITE | NEXT, 2), (S, 1, WRITE, 0)],
          [(H, hdr(T_IN, 0))])
    # header + data in one readable descriptor, data + status in one writable one
    chain("merged", [(H, 16 + 512, NEXT, 1), (D, 1, WRITE, 0)], [(H, hdr(T_OUT, 1))])
    # indirect table of 3 at 0x10300
    ind = desc(H, 16, NEXT, 1) + desc(D, 512, WRITE | NEXT, 2) + desc(S, 1, WRITE, 0)
    chain("indirect", [(0x10300, 48, INDIRECT, 0)], [(H, hdr(T_IN, 0)), (0x10300, ind)])
    # a loop, a head out of range, indirect not negotiated
    chain("loop", [(H, 16, NEXT, 1), (D, 16, NEXT, 0)], [(H, hdr(T_OUT, 0))])
    chain("bad_head", [(H, 16, 0, 0)], [], head=9)
    chain("indirect_off", [(0x10300, 48, INDIRECT, 0)], [(0x10300, ind)], flags=0)

    # packed rings (layout byte bit 7): descriptors at consecutive ring positions
    AV, US = 1 << 7, 1 << 15

    def pchain(name, descs, extra, pos=0, wrap=1, qlog=2, flags=1, buf_id=1):
        n = 1 << qlog
        ring = bytearray(16 * n)
        for k, (addr, ln, fl) in enumerate(descs):
            p = (pos + k) % n
            w = wrap if pos + k < n else 1 - wrap
            ring[16 * p:16 * p + 16] = pdesc(addr, ln, buf_id, fl | (AV if w else US))
        head = pos | (wrap << 15)
        put("vq_chain", name, struct.pack("<BHB", 0x80 | qlog, head, flags) +
            guest([(A, bytes(ring))] + extra))

    pchain("packed_read", [(H, 16, NEXT), (D, 512, WRITE | NEXT), (S, 1, WRITE)],
           [(H, hdr(T_IN, 3))])
    pchain("packed_write_wraps", [(H, 16, NEXT), (D, 1024, NEXT), (S, 1, WRITE)],
           [(H, hdr(T_OUT, 0))], pos=2, wrap=0)
    pind = (pdesc(H, 16, 0, 0) + pdesc(D, 512, 0, WRITE) + pdesc(S, 1, 0, WRITE))
    pchain("packed_indirect", [(0x10300, 48, INDIRECT)], [(H, hdr(T_IN, 0)), (0x10300, pind)])
    pchain("packed_id_out_of_range", [(H, 16, NEXT), (S, 1, WRITE)], [(H, hdr(T_FLUSH, 0))],
           buf_id=9)


def blk_req_seeds():
    # layout byte: bit 0 packed ring, bit 1 through an indirect table, bits 2-7 ring position / 8
    def req(name, t, sector, rd, wr, rd_data=b"", cap=2048, flags=0, layout=0):
        b = struct.pack("<BIB", layout, cap, flags) + hdr(t, sector)
        b += struct.pack("<BB", len(rd), len(wr))
        b += b"".join(struct.pack("<I", n - 1) for n in rd + wr) + rd_data
        put("blk_req", name, b)

    req("read", T_IN, 8, [], [4096])
    req("read_split", T_IN, 0, [], [512, 1024, 512])
    req("write", T_OUT, 2040, [4096], [])
    req("write_ro", T_OUT, 0, [512], [], flags=1)
    req("flush", T_FLUSH, 0, [], [])
    req("get_id", T_GET_ID, 0, [], [20])
    req("discard", T_DISCARD, 0, [32], [], struct.pack("<QII", 0, 8, 0) + struct.pack("<QII", 100, 8, 0))
    req("write_zeroes", T_WZ, 0, [16], [], struct.pack("<QII", 2000, 48, 1))
    req("past_end", T_IN, 2047, [], [1024])
    req("unknown_type", 0x55, 0, [], [])
    req("blk4k", T_IN, 8, [], [4096], flags=2)
    req("packed_read", T_IN, 8, [], [4096], layout=1)
    req("packed_write_wraps", T_OUT, 16, [512, 1024], [], layout=1 | (62 << 2))
    req("packed_indirect", T_IN, 0, [], [512, 512], layout=3)
    req("packed_discard", T_DISCARD, 0, [16], [], struct.pack("<QII", 0, 8, 0), layout=1)


def options_seeds():
    seeds = {
        "nossd": "path=/tmp/f.sock,devsz_mb=1024,queues=8",
        "nossd_all": "path=/tmp/f.sock,devsz_mb=64,femu_mode=2,queues=2,secsz=4096,serial=SER1,readonly=1,sock_mode=0660",
        "bbssd_tutorial": "path=/tmp/b.sock,femu_mode=1,nchs=2,luns_per_ch=4,blks_per_pl=64,op_pcent=25",
        "bbssd_timing": "path=/tmp/b.sock,femu_mode=1,devsz_mb=256,pg_rd_lat=40000,pg_wr_lat=200000,blk_er_lat=2000000,pg_xfer_lat=1000,nand_cell_type=2,pcie_bandwidth_mbps=4000,pcie_prop_delay_ns=500,fw_cpu_ns=100,gc_thres_pcent=75,gc_thres_pcent_high=95",
        "bbssd_geometry": "path=/tmp/b.sock,femu_mode=1,secsz=512,secs_per_pg=8,pgs_per_blk=256,blks_per_pl=256,pls_per_lun=1,luns_per_ch=8,nchs=8",
        "argv": "--lcores\x000@0,1@1\x00--mbe-node\x000\x00--dev\x00path=/tmp/a.sock,devsz_mb=16\x00--dev\x00path=/tmp/b.sock,femu_mode=1,devsz_mb=64\x00--dry-run",
        "argv_misc": "-l\x00auto\x00--log-level\x00lib.vhost.*:debug\x00--no-huge\x00--qemu-pid\x00123\x00-d\x00path=/tmp/c.sock",
        "help": "--help",
    }
    for name, s in seeds.items():
        put("options", name, s.encode())


# ---- vhu_msg: vhost-user sessions as QEMU's vhost-user-blk sends them ----
UADDR = 0x7F0000000000  # the frontend's virtual address of guest memory
F_BLK = sum(1 << b for b in (32, 28, 30, 1, 2, 6, 9, 10, 11, 12, 13, 14))
F_EIDX = 1 << 29
PF = (1 << 0) | (1 << 3) | (1 << 9)  # MQ, REPLY_ACK, CONFIG


def vmsg(req, payload=b"", flags=1, fds=()):
    sel = 0
    for i, f in enumerate(fds):
        sel |= f << (2 * i)
    return struct.pack("<BBBHH", req, flags, len(fds), sel, len(payload)) + payload


def gwrite(off, data, f=0):
    out = b""
    for i in range(0, len(data), 255):
        chunk = data[i:i + 255]
        out += struct.pack("<BBIB", 0xFF, f, off + i, len(chunk)) + chunk
    return out


def u64(v):
    return struct.pack("<Q", v)


def state(i, n):
    return struct.pack("<II", i, n)


def mem_table(regions):
    b = struct.pack("<II", len(regions), 0)
    for gpa, size, ua, off in regions:
        b += struct.pack("<QQQQ", gpa, size, ua, off)
    return b


def vring_setup(q, base, num=16, flags=1, eidx=False):
    """SET_VRING_NUM/ADDR/BASE/KICK/CALL/ENABLE for queue q, rings at gpa base."""
    return (vmsg(8, state(q, num), flags) +
            vmsg(9, struct.pack("<IIQQQQ", q, 0, UADDR + base, UADDR + base + 0x400,
                                UADDR + base + 0x200, 0), flags) +
            vmsg(10, state(q, 0), flags) +
            vmsg(12, u64(q), flags, fds=(2,)) + vmsg(13, u64(q), flags, fds=(2,)) +
            vmsg(18, state(q, 1), flags))


def request(base, slot, t, sector, data_len, write_data=b""):
    """A 3-descriptor request at table slot*3 of the ring at base; avail idx slot+1."""
    d0 = slot * 3
    hdr_gpa = 0x8000 + slot * 0x100
    data_gpa = 0xC000 + slot * 0x400
    st_gpa = hdr_gpa + 0x80
    dflag = WRITE if t == T_IN else 0
    tbl = (desc(hdr_gpa, 16, NEXT, d0 + 1) + desc(data_gpa, data_len, dflag | NEXT, d0 + 2) +
           desc(st_gpa, 1, WRITE, 0))
    out = gwrite(base + d0 * 16, tbl) + gwrite(hdr_gpa, hdr(t, sector))
    if write_data:
        out += gwrite(data_gpa, write_data)
    out += gwrite(base + 0x200 + 4 + 2 * slot, struct.pack("<H", d0))
    out += gwrite(base + 0x200 + 2, struct.pack("<H", slot + 1))
    return out


def vhu_msg_seeds():
    feats = F_BLK | F_EIDX
    hello = (vmsg(1) + vmsg(2, u64(feats)) + vmsg(15) + vmsg(16, u64(PF)) + vmsg(17) +
             vmsg(24, struct.pack("<III", 0, 60, 0) + bytes(60)) +
             vmsg(5, mem_table([(0, FV0, UADDR, 0)]), fds=(0,)))
    io = (request(0, 0, T_OUT, 8, 512, b"\x5a" * 512) + request(0, 1, T_IN, 8, 512) +
          request(0, 2, T_FLUSH, 0, 0))
    put("vhu_msg", "qemu_session", b"\x00" + hello + vring_setup(0, 0) + io +
        vmsg(11, state(0, 0)))
    put("vhu_msg", "deferred_completions", b"\x20" + hello + vring_setup(0, 0) + io +
        vmsg(11, state(0, 0)))
    put("vhu_msg", "two_queues_reply_ack", b"\x00" + hello + vring_setup(0, 0, flags=9) +
        vring_setup(1, 0x4000, flags=9) + request(0x4000, 0, T_IN, 0, 512) +
        vmsg(11, state(1, 0), 9) + vmsg(11, state(0, 0), 9))
    # guest memory replaced while the queue runs (reboot, memory hot-plug)
    put("vhu_msg", "mem_table_swap", b"\x00" + hello + vring_setup(0, 0) + io +
        vmsg(5, mem_table([(0, 0x8000, UADDR, 0), (0x8000, FV0 - 0x8000, UADDR + 0x8000, 0x8000)]),
             fds=(0, 0)) + request(0, 3, T_IN, 0, 512))
    # SeaBIOS then Linux: reset, features again, queue again
    put("vhu_msg", "reset_owner", b"\x00" + hello + vring_setup(0, 0) + io + vmsg(4) +
        vmsg(2, u64(F_BLK)) + vmsg(5, mem_table([(0, FV0, UADDR, 0)]), fds=(0,)) +
        vring_setup(0, 0))
    put("vhu_msg", "set_config", b"\x00" + hello +
        vmsg(25, struct.pack("<III", 32, 1, 0) + b"\x00") + vmsg(24, struct.pack("<III", 0, 256, 0) + bytes(256)))


FV0 = 256 << 10  # guest file 0 (fake_vhost.h FV_FILE0_SIZE)


if __name__ == "__main__":
    targets = sys.argv[1:] or ["vq_chain", "blk_req", "options", "vhu_msg"]
    for t in targets:
        globals()[t + "_seeds"]()
