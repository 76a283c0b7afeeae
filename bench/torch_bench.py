#!/usr/bin/env python3
"""The torch side of the benchmark: the same ops, dtypes and sizes as vkreduce-bench, timed
with CUDA events on the same GPU, written in the same CSV format so the two line up.

    python3 bench/torch_bench.py [--max-log2 28] [--reps 20] [--csv torch.csv] [--latency]
                                 [--kinds reduce,scan]

dtype= is passed to sum/prod/cumsum/cumprod so torch does not widen integers (its default
i32 -> i64 promotion is 5x slower, and would not be the same operation). count is
count_nonzero(x > v): the comparison and the count, two kernels, as a torch user writes it.
--latency adds the in-process x.sum().item() round trip on 1,024 floats.
"""
import argparse
import statistics
import sys

import torch

DTYPES = {
    'f32': torch.float32, 'f64': torch.float64, 'i32': torch.int32,
    'u32': getattr(torch, 'uint32', None), 'i64': torch.int64, 'u64': getattr(torch, 'uint64', None),
}
REDUCE = {
    'sum': lambda x: torch.sum(x, dtype=x.dtype),
    'prod': lambda x: torch.prod(x, dtype=x.dtype),
    'min': torch.amin,
    'max': torch.amax,
    'count': lambda x: torch.count_nonzero(x > 0),
}
SCAN = {
    'sum': lambda x: torch.cumsum(x, 0, dtype=x.dtype),
    'prod': lambda x: torch.cumprod(x, 0, dtype=x.dtype),
    'min': lambda x: torch.cummin(x, 0).values,
    'max': lambda x: torch.cummax(x, 0).values,
}


def gpu_time_us(fn, reps):
    fn()  # warm up: allocator, kernels, clocks
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) * 1000.0)
    return statistics.median(times)


def make_input(name, dtype, n, op):
    if name in ('f32', 'f64'):
        if op == 'prod':
            return 1.0 + (torch.rand(n, device='cuda', dtype=dtype) - 0.5) * 2 ** -7
        return (torch.rand(n, device='cuda', dtype=dtype) - 0.5) * 200
    if op == 'prod':
        return (torch.randint(0, 2 ** 31 - 1, (n,), device='cuda', dtype=torch.int64) | 1).to(dtype)
    return torch.randint(-2 ** 31, 2 ** 31 - 1, (n,), device='cuda', dtype=torch.int64).to(dtype) \
        if name.startswith('i') else torch.randint(0, 2 ** 31 - 1, (n,), device='cuda', dtype=torch.int64).to(dtype)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--min-log2', type=int, default=10)
    ap.add_argument('--max-log2', type=int, default=28)
    ap.add_argument('--reps', type=int, default=20)
    ap.add_argument('--dtypes', default='f32,f64,i32,u32,i64,u64')
    ap.add_argument('--csv')
    ap.add_argument('--latency', action='store_true')
    ap.add_argument('--kinds', default='reduce,scan', help='which of reduce and scan to time')
    ap.add_argument('--cummin-max-log2', type=int, default=22,
                    help='largest size for cummin/cummax, which torch runs far below bandwidth '
                         '(about 0.75 s at 2^28 on an H200)')
    args = ap.parse_args()
    kinds = args.kinds.split(',')
    if not kinds or any(k not in ('reduce', 'scan') for k in kinds):
        sys.exit(f'torch_bench.py: --kinds takes reduce and/or scan, not {args.kinds!r}')
    if not torch.cuda.is_available():
        sys.exit('torch_bench.py: no CUDA device')
    out = open(args.csv, 'w') if args.csv else None
    if out:
        out.write('kind,op,dtype,n,us,gbs,of_copy\n')
    print(f'device: {torch.cuda.get_device_name()} torch {torch.__version__}')

    nbytes = (1 << args.max_log2) * 4
    a = torch.empty(nbytes, dtype=torch.uint8, device='cuda')
    b = torch.empty_like(a)
    us = gpu_time_us(lambda: b.copy_(a), args.reps)
    copy_gbs = 2 * nbytes / (us * 1e3)
    print(f'torch copy (read + write) of {nbytes >> 20} MiB: {us:.2f} us, {copy_gbs:.1f} GB/s')
    if out:
        out.write(f'copy,copy,u8,{nbytes},{us:.3f},{copy_gbs:.2f},1\n')
    del a, b

    print(f'{"kind":7} {"op":5} {"type":4} {"n":5} {"gpu us":>12} {"GB/s":>10} {"of copy":>7}')
    for name in args.dtypes.split(','):
        dtype = DTYPES[name]
        if dtype is None:
            print(f'({name}: this torch has no such dtype)')
            continue
        size = torch.empty(0, dtype=dtype).element_size()
        for kind, table in (('reduce', REDUCE), ('scan', SCAN)):
            if kind not in kinds:
                continue
            for op, fn in table.items():
                for k in range(args.min_log2, args.max_log2 + 1):
                    if kind == 'scan' and op in ('min', 'max') and k > args.cummin_max_log2:
                        break
                    n = 1 << k
                    try:
                        x = make_input(name, dtype, n, op)
                        us = gpu_time_us(lambda: fn(x), args.reps)
                    except (RuntimeError, NotImplementedError) as e:
                        print(f'{kind:7} {op:5} {name:4} 2^{k:<3} not supported by torch: {str(e).splitlines()[0][:60]}')
                        break
                    finally:
                        x = None
                    gbs = n * size * (2 if kind == 'scan' else 1) / (us * 1e3)
                    print(f'{kind:7} {op:5} {name:4} 2^{k:<3} {us:12.2f} {gbs:10.1f} {gbs / copy_gbs:7.2f}', flush=True)
                    if out:
                        out.write(f'{kind},{op},{name},{n},{us:.3f},{gbs:.2f},{gbs / copy_gbs:.4f}\n')
                torch.cuda.empty_cache()

    if args.latency:
        # Host <-> device over PCIe, pinned and pageable: the ceiling for shared-memory
        # requests that the GPU reads and writes in place.
        nbytes = 1 << 30
        host = torch.empty(nbytes, dtype=torch.uint8).pin_memory()
        pageable = torch.empty(nbytes, dtype=torch.uint8)
        dev = torch.empty(nbytes, dtype=torch.uint8, device='cuda')
        for name, fn in (('host to device, pinned', lambda: dev.copy_(host, non_blocking=True)),
                         ('device to host, pinned', lambda: host.copy_(dev, non_blocking=True)),
                         ('host to device, pageable', lambda: dev.copy_(pageable))):
            us = gpu_time_us(fn, 5)
            print(f'torch {name} of 1 GiB: {us / 1000:.3f} ms, {nbytes / (us * 1e3):.1f} GB/s')
        # Both directions at once, on two streams: what a scan from one shared-memory region
        # into another asks of the link (it reads and writes the host's pages together).
        host_out = torch.empty(nbytes, dtype=torch.uint8).pin_memory()
        dev_in = torch.empty(nbytes, dtype=torch.uint8, device='cuda')
        up, down = torch.cuda.Stream(), torch.cuda.Stream()

        def both_directions():
            current = torch.cuda.current_stream()
            up.wait_stream(current)
            down.wait_stream(current)
            with torch.cuda.stream(up):
                dev.copy_(host, non_blocking=True)
            with torch.cuda.stream(down):
                host_out.copy_(dev_in, non_blocking=True)
            current.wait_stream(up)
            current.wait_stream(down)

        us = gpu_time_us(both_directions, 5)
        print(f'torch host to device and device to host at once, pinned, 1 GiB each: '
              f'{us / 1000:.3f} ms, {nbytes / (us * 1e3):.1f} GB/s each way')
        del host, pageable, dev, host_out, dev_in
        import time
        x = torch.rand(1024, device='cuda')
        warm_until = time.perf_counter() + 1.0  # as vkreduce-daemon-bench: a second, for the clocks
        while time.perf_counter() < warm_until:
            x.sum().item()
        lat = []
        for _ in range(20000):
            t = time.perf_counter()
            x.sum().item()
            lat.append((time.perf_counter() - t) * 1e6)
        lat.sort()
        print(f'torch x.sum().item() on 1024 f32, in process: p50 {lat[len(lat) // 2]:.1f} us, '
              f'p99 {lat[int(len(lat) * 0.99)]:.1f} us')


if __name__ == '__main__':
    main()
