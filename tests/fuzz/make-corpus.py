#!/usr/bin/python3
"""Writes the seed corpus of fuzz_dispatch: valid msgpack-RPC streams (every method, every
op and dtype, shared memory, pipelining) and a few near-misses. The first byte of each file
is the harness's fd selector (0 none, 1 sealed memfd, 2 unsealed memfd, 3 pipe).

Usage: make-corpus.py DIR
"""
import os
import struct
import sys

import msgpack


def req(msgid, method, params):
    return msgpack.packb([0, msgid, method, params], use_bin_type=True)


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    seeds = {}
    fmt = {"f32": "f", "f64": "d", "i32": "i", "u32": "I", "i64": "q", "u64": "Q"}
    seeds["ping"] = b"\0" + req(1, "ping", [])
    seeds["hello"] = b"\0" + req(1, "hello", ["fuzz"])
    seeds["stats"] = b"\0" + req(1, "stats", [])
    for op in ("sum", "prod", "min", "max"):
        for dt in fmt:
            data = struct.pack("<4" + fmt[dt], 1, 2, 3, 4)
            seeds["reduce_%s_%s" % (op, dt)] = b"\0" + req(7, "reduce", [op, dt, data])
    seeds["count"] = b"\0" + req(2, "reduce", ["count", "i32", struct.pack("<3i", 1, -2, 3),
                                                {"cmp": "gt", "value": 0}])
    seeds["count_float"] = b"\0" + req(2, "reduce", ["count", "f64", struct.pack("<2d", 1.5, 2),
                                                      {"cmp": "le", "value": 1.5}])
    seeds["scan"] = b"\0" + req(3, "scan", ["sum", "u32", struct.pack("<5I", 1, 2, 3, 4, 5)])
    seeds["scan_exclusive"] = b"\0" + req(3, "scan", ["max", "i64", struct.pack("<2q", 5, -1),
                                                       {"exclusive": True}])
    seeds["scan_empty"] = b"\0" + req(3, "scan", ["sum", "f32", b""])
    seeds["register"] = b"\1" + req(1, "register_shm", [])
    seeds["register_reduce"] = b"\1" + req(1, "register_shm", []) + req(
        2, "reduce", ["sum", "u32", {"region": 1, "offset": 0, "count": 1024}]) + req(3, "unregister_shm", [1])
    seeds["register_scan_dst"] = b"\1" + req(1, "register_shm", [{"writable": True}]) + req(
        2, "scan", ["sum", "u32", {"region": 1, "offset": 0, "count": 100},
                    {"dst": {"region": 1, "offset": 4096}}])
    seeds["register_unsealed"] = b"\2" + req(1, "register_shm", [])
    seeds["register_pipe"] = b"\3" + req(1, "register_shm", [])
    seeds["pipelined"] = b"\0" + b"".join(req(i, "reduce", ["sum", "i32", struct.pack("<i", i)])
                                          for i in range(20))
    seeds["notification"] = b"\0" + msgpack.packb([2, "ping", []]) + req(1, "ping", [])
    seeds["unknown_method"] = b"\0" + req(1, "frobnicate", [])
    seeds["bad_range"] = b"\1" + req(1, "register_shm", []) + req(
        2, "reduce", ["sum", "u64", {"region": 1, "offset": 2**63, "count": 2**62}])
    seeds["huge_bin"] = b"\0" + bytes.fromhex("9400 01a6 7265 6475 6365 93a3 7375 6da3 6933 32c6 7fff ffff")
    for name, data in seeds.items():
        with open(os.path.join(out, name), "wb") as f:
            f.write(data)


if __name__ == "__main__":
    main()
