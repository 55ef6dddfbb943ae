#!/usr/bin/env python3
"""peers_fwd.py -- RMSNorm forward: normtune's library against QuACK and PyTorch.

A measurement run by hand on a CUDA device (not part of `make test`):

    python3 tests/gpu/peers_fwd.py [--out FILE.md] [--lib build/libnormtune.so]
                                   [--header kernels/normtune_dispatch.h]
                                   [--method iso|b2b] [--repeat K]
                                   [--no-compile] [--no-big]

from the repository root, with build/libnormtune.so built (`make lib`).
The library must be built from --header (the shipped one by default): its
version string's config and kernel counts are compared with the header's
and the run stops when they differ.  QuACK
(quack-kernels, with nvidia-cutlass-dsl) is optional: when it cannot be
imported the reason is printed and the other contenders are still measured.
Measured (data/peers-fwd-h200.md) with quack-kernels 0.6.5,
nvidia-cutlass-dsl 4.7.1 with its libs-cu13, libs-base and libs-core
wheels, apache-tvm-ffi 0.1.15.post2 and torch-c-dlpack-ext 0.1.5, installed
with pip --target SITE --no-deps; PYTHONPATH then needs SITE and
SITE/nvidia_cutlass_dsl/dsl_packages.  The module is loaded with
importlib.import_module("quack.rmsnorm"), since the package's `rmsnorm` is
a function.

The op, for each row i of an M x N input (eps = 1e-6):

    rstd_i = 1 / sqrt(mean_j x_ij^2 + eps),    y_ij = x_ij rstd_i w_j

Contenders, on the same tensors in the same process:

    copy               y.copy_(x): reads x and writes y, the forward's own
                       traffic (w is N elements), the yardstick
    normtune y         normtune_rmsnorm_fwd, rstd = NULL
    normtune y+rstd    the same, writing rstd (M floats)
    QuACK y, y+rstd    quack.rmsnorm's forward, its own launch heuristic
                       (caller-allocated outputs, like normtune's)
    torch eager        torch.nn.functional.rms_norm
    torch.compile      the same under torch.compile, at two shapes

Methods (--method):

    iso   (the default, as the project's anchors) every call is timed alone
          between two CUDA events, with the L2 flushed by writing a 256 MB
          buffer before it (outside the events); the median of 40 timed
          calls after 10 warm-ups
    b2b   as the tuner times (tuner/runner.c): 20 calls back to back between
          two events, queued behind a GPU sleep so that the host is never
          the bottleneck, over input and output sets that together hold
          >= 3x the L2 (so each call starts from a dirty, cold L2); the
          median over 15 such batches of the time per call

--repeat K (1 by default) times each shape K times in a row, each a whole
pass of the method above, and reports per cell the median of the K
passes with their range ("133.3 us, 133.1-134.0"); the copy of each pass
is the yardstick of that pass.  Alone after a flush, one contender's
median moved by up to 1.6% between runs of the script on one GPU
(data/peers-fwd-h200.md, seventh run), more than some of the margins
compared, so a verdict on one pass can be noise.  With QuACK measured,
the tables are followed by normtune against QuACK per shape, y and
y+rstd: the ratio of the medians (QuACK's time over normtune's; above 1:
normtune faster) and in how many of the K passes normtune was faster.

The contenders of a shape (the copy included) are timed interleaved, in
rounds of one timed call (iso) or one batch (b2b) of each, the order
rotated by one place from round to round: every contender takes every
place equally often, so a drift of the GPU over the run (clocks, memory
state) favours none.  (Timed one after the other, as before 2026-12-01's
fourth run, the four normtune and QuACK columns at 4096 x 4096 came out
24.3, 23.8, 23.1 and 22.5 us in the order they ran: a trend with the
place, which interleaving keeps out of the comparison.)

Each
contender is reported as % of the copy (copy time / its time) and in us;
the copy as TB/s of 2*M*N*elem bytes.  Before timing, each output is
checked against a float64 reference (relative L2 error); normtune's y
above 1e-2 is a failure (exit status 1, after the tables are written).
"""

import argparse
import ctypes
import importlib
import os
import re
import statistics
import sys
import time
import traceback
import warnings
from pathlib import Path

import torch
import torch.nn.functional as F

EPS = 1e-6
WARMUP, ITERS = 10, 40
FLUSH_BYTES = 256 << 20
NT_Y_TOL = 1e-2  # normtune's y must be this close to float64 (bf16)

# (M, N, x dtype, w dtype).  bf16/bf16 everywhere, plus bf16 x with an fp32
# weight (QuACK's common training setup) at three shapes.
BF16, F32 = torch.bfloat16, torch.float32
BIG = (65536, 16384)  # 2 GiB of x (--no-big drops it)
SHAPES = ([(M, N, BF16, BF16) for M, N in [(16384, 4096), (16384, 8192), (8192, 16384),
                                           (32768, 4096), (65536, 2048), (4096, 16384), BIG,
                                           (4096, 4096), (1024, 4096), (16384, 1024)]] +
          [(M, N, BF16, F32) for M, N in [(16384, 4096), (8192, 16384), (65536, 2048)]])
COMPILE_AT = {(16384, 4096), (8192, 16384)}  # torch.compile shapes (bf16/bf16)

COLUMNS = ["normtune y", "normtune y+rstd", "QuACK y", "QuACK y+rstd",
           "torch eager", "torch.compile"]


def log(*a):
    print(*a, flush=True)


def dname(dt):
    return {BF16: "bf16", F32: "f32", torch.float16: "f16"}[dt]


# ---- normtune through ctypes (prototypes from kernels/normtune.h) ----------

NT_DTYPE = {BF16: 0, torch.float16: 1, F32: 2}  # NORMTUNE_BF16, _F16, _F32
NT_UNSUPPORTED_N = 3                            # NORMTUNE_ERROR_UNSUPPORTED_N


class NtOutTol(ctypes.Structure):
    _fields_ = [("tensor", ctypes.c_char * 16), ("tol", ctypes.c_double)]


class NtChoice(ctypes.Structure):  # normtune_choice
    _fields_ = [("config", ctypes.c_int), ("tuned", ctypes.c_int),
                ("fallback", ctypes.c_int), ("op", ctypes.c_char * 32),
                ("dtypes", ctypes.c_char * 64), ("family", ctypes.c_char * 48),
                ("params", ctypes.c_char * 160), ("workspace", ctypes.c_size_t),
                ("grid", ctypes.c_uint), ("nlaunch", ctypes.c_int),
                ("kernel", (ctypes.c_char * 128) * 4), ("nout", ctypes.c_int),
                ("out", NtOutTol * 4)]


class Normtune:
    def __init__(self, path):
        lib = ctypes.CDLL(str(path))
        ll, i, vp = ctypes.c_longlong, ctypes.c_int, ctypes.c_void_p
        lib.normtune_strerror.argtypes, lib.normtune_strerror.restype = [i], ctypes.c_char_p
        lib.normtune_last_cuda_error.argtypes, lib.normtune_last_cuda_error.restype = [], i
        lib.normtune_version.argtypes, lib.normtune_version.restype = [], ctypes.c_char_p
        lib.normtune_rmsnorm_fwd_workspace_size.argtypes = [ll, ll, i, i,
                                                            ctypes.POINTER(ctypes.c_size_t)]
        lib.normtune_rmsnorm_fwd_workspace_size.restype = i
        lib.normtune_rmsnorm_fwd_choice.argtypes = [ll, ll, i, i, ctypes.POINTER(NtChoice)]
        lib.normtune_rmsnorm_fwd_choice.restype = i
        # x, w, y, rstd, M, N, eps, x_dtype, w_dtype, workspace, workspace_bytes, stream
        lib.normtune_rmsnorm_fwd.argtypes = [vp, vp, vp, vp, ll, ll, ctypes.c_float, i, i,
                                             vp, ctypes.c_size_t, vp]
        lib.normtune_rmsnorm_fwd.restype = i
        self.lib = lib
        self.version = lib.normtune_version().decode()

    def check(self, st, what):
        if st != 0:
            msg = self.lib.normtune_strerror(st).decode()
            if st == 8:  # NORMTUNE_ERROR_CUDA
                msg += f" (cudaError {self.lib.normtune_last_cuda_error()})"
            raise RuntimeError(f"{what}: status {st}: {msg}")

    def workspace_size(self, M, N, xd, wd):
        """Bytes of workspace, or None when the library does not run this N."""
        b = ctypes.c_size_t(0)
        st = self.lib.normtune_rmsnorm_fwd_workspace_size(M, N, NT_DTYPE[xd], NT_DTYPE[wd],
                                                          ctypes.byref(b))
        if st == NT_UNSUPPORTED_N:
            return None
        self.check(st, "normtune_rmsnorm_fwd_workspace_size")
        return b.value

    def choice(self, M, N, xd, wd):
        c = NtChoice()
        self.check(self.lib.normtune_rmsnorm_fwd_choice(M, N, NT_DTYPE[xd], NT_DTYPE[wd],
                                                        ctypes.byref(c)),
                   "normtune_rmsnorm_fwd_choice")
        tag = "tuned" if c.tuned else ("fallback" if c.fallback else "nearest")
        return f"{c.family.decode()} {c.params.decode()} ({tag}, grid {c.grid})"

    def fwd_fn(self, x, w, y, rstd, ws):
        """A no-argument closure that enqueues one forward on the current stream."""
        M, N = x.shape
        args = (ctypes.c_void_p(x.data_ptr()), ctypes.c_void_p(w.data_ptr()),
                ctypes.c_void_p(y.data_ptr()),
                ctypes.c_void_p(rstd.data_ptr() if rstd is not None else None),
                M, N, EPS, NT_DTYPE[x.dtype], NT_DTYPE[w.dtype],
                ctypes.c_void_p(ws.data_ptr() if ws is not None else None),
                ws.numel() if ws is not None else 0,
                ctypes.c_void_p(torch.cuda.current_stream().cuda_stream))
        f = self.lib.normtune_rmsnorm_fwd

        def run():
            st = f(*args)
            if st != 0:
                self.check(st, "normtune_rmsnorm_fwd")
        return run


# ---- QuACK -----------------------------------------------------------------

def load_quack():
    """quack.rmsnorm (the module: the package's `rmsnorm` is a function), or None."""
    try:
        qr = importlib.import_module("quack.rmsnorm")
        import quack
        ver = getattr(quack, "__version__", "?")
        try:
            import cutlass
            ver += f", cutlass-dsl {getattr(cutlass, '__version__', '?')}"
        except Exception:
            pass
        log(f"QuACK {ver} imported")
        return qr, ver
    except Exception:
        log("QuACK import FAILED (QuACK columns will be empty):")
        traceback.print_exc(file=sys.stdout)
        sys.stdout.flush()
        return None, None


def quack_fn(qr, x, w, y, rstd):
    if hasattr(qr, "_rmsnorm_fwd"):
        # _rmsnorm_fwd(x, weight, out, bias, rstd, mean, residual, residual_out,
        # eps, is_layernorm, weight_offset): what rmsnorm_fwd calls after
        # allocating out and rstd; the launch config is QuACK's heuristic.
        f = qr._rmsnorm_fwd
        return lambda: f(x, w, y, None, rstd, None, None, None, EPS, False, 0.0)
    # fallback: the public entry, which allocates its outputs per call
    store = rstd is not None
    return lambda: qr.rmsnorm_fwd(x, w, eps=EPS, store_rstd=store)


# ---- measurement -----------------------------------------------------------

_flush = None


def flush_l2():
    _flush.fill_(1)


def _events():
    return torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)


def _rotated(n, i):
    """Round i's order of n contenders: 0..n-1 rotated left by i."""
    return [(i + k) % n for k in range(n)]


def time_iso(fns):
    """Median us of each closure in fns over ITERS calls, each timed alone
    after an L2 flush, interleaved: ITERS rounds of one call of each, in
    an order rotated from round to round, after WARMUP such rounds."""
    n = len(fns)
    for i in range(WARMUP):
        for j in _rotated(n, i):
            flush_l2()
            fns[j]()
    ev = [[] for _ in fns]
    for i in range(ITERS):
        for j in _rotated(n, i):
            a, b = _events()
            flush_l2()
            a.record()
            fns[j]()
            b.record()
            ev[j].append((a, b))
    torch.cuda.synchronize()
    return [statistics.median(a.elapsed_time(b) * 1e3 for a, b in e) for e in ev]


B2B_CALLS, B2B_BATCHES = 20, 15
B2B_SLEEP_CYCLES = 2_000_000  # ~1 ms at 2 GHz: the host queues the batch meanwhile


def time_b2b(fn_sets):
    """For each contender (a list of closures, one per input/output set),
    the median over B2B_BATCHES of the time per call (us) of B2B_CALLS calls
    back to back rotating over its closures; interleaved: B2B_BATCHES rounds
    of one batch of each contender, in an order rotated from round to round."""
    n = len(fn_sets)
    for fns in fn_sets:
        for f in fns:
            f()
    per = [[] for _ in fn_sets]
    for i in range(B2B_BATCHES):
        for j in _rotated(n, i):
            fns = fn_sets[j]
            a, b = _events()
            torch.cuda._sleep(B2B_SLEEP_CYCLES)
            a.record()
            for c in range(B2B_CALLS):
                fns[c % len(fns)]()
            b.record()
            torch.cuda.synchronize()
            per[j].append(a.elapsed_time(b) * 1e3 / B2B_CALLS)
    return [statistics.median(p) for p in per]


def rel_l2(out, ref_fn, x):
    """Relative L2 error of out (M x N, or M) against ref_fn(x rows) in float64,
    chunked over rows so the float64 copies stay small."""
    M, N = x.shape
    step = max(1, (1 << 26) // N)
    num = den = 0.0
    for r in range(0, M, step):
        ref = ref_fn(x[r:r + step])
        d = out[r:r + step].double() - ref
        num += float((d * d).sum())
        den += float((ref * ref).sum())
    return (num / den) ** 0.5


def rstd64(xc):
    xd = xc.double()
    return torch.rsqrt((xd * xd).mean(dim=1) + EPS)


def check_output(fn, x, w, y, rstd):
    """Run fn once into NaN-filled outputs; (y error, rstd error or None)."""
    y.fill_(float("nan"))
    if rstd is not None:
        rstd.fill_(float("nan"))
    out = fn()
    torch.cuda.synchronize()
    if isinstance(out, tuple):  # QuACK's public entry returns (out, residual_out, rstd)
        y, rstd = out[0], out[2] if rstd is not None else None
    elif isinstance(out, torch.Tensor):  # torch returns y
        y = out
    w64 = w.double()
    ey = rel_l2(y, lambda xc: xc.double() * rstd64(xc)[:, None] * w64, x)
    er = rel_l2(rstd, rstd64, x) if rstd is not None else None
    return ey, er


def header_mismatch(version, header):
    """None when the library's version string names the config and kernel
    counts of the dispatch header file `header`, else why not: a library
    built from another header (make test's fixture, an older tune) would be
    timed under this header's name."""
    try:
        text = Path(header).read_text()
    except OSError as e:
        return f"cannot read {header}: {e.strerror}"
    want = {}
    for key in ("NCONFIGS", "NKERNELS"):
        m = re.search(r"#define NORMTUNE_%s (\d+)" % key, text)
        if not m:
            return f"{header} has no NORMTUNE_{key}"
        want[key] = int(m.group(1))
    m = re.search(r"(\d+) configs, (\d+) kernels", version)
    if not m:
        return f"the library's version string names no config counts: {version}"
    got = {"NCONFIGS": int(m.group(1)), "NKERNELS": int(m.group(2))}
    if got != want:
        return (f"the library has {got['NCONFIGS']} configs and {got['NKERNELS']} kernels, "
                f"{header} {want['NCONFIGS']} and {want['NKERNELS']}")
    return None


def cell(copy_us, us, spread=None):
    """A contender's cell: % of the copy and its time; with spread (the
    (lowest, highest) time over the passes of --repeat), that range too."""
    rng = f", {spread[0]:.1f}-{spread[1]:.1f}" if spread else ""
    return f"{100.0 * copy_us / us:.1f}% ({us:.1f} us{rng})"


def versus(runs, ours, theirs):
    """normtune against QuACK from one shape's passes: runs is a list of
    {column: us}; returns (ratio of the medians, theirs / ours: above 1 is
    normtune faster; passes where ours was faster; passes with both), or
    None when either column has no time in some pass."""
    pairs = [(r.get(ours), r.get(theirs)) for r in runs]
    if not pairs or any(not isinstance(a, float) or not isinstance(b, float) for a, b in pairs):
        return None
    med_a = statistics.median(a for a, _ in pairs)
    med_b = statistics.median(b for _, b in pairs)
    return med_b / med_a, sum(1 for a, b in pairs if a < b), len(pairs)


def main():
    global _flush
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    root = Path(__file__).resolve().parents[2]
    ap.add_argument("--out", help="also write the Markdown tables to this file")
    ap.add_argument("--lib", default=str(root / "build" / "libnormtune.so"),
                    help="libnormtune.so (default: build/libnormtune.so)")
    ap.add_argument("--header", default=str(root / "kernels" / "normtune_dispatch.h"),
                    help="the dispatch header the library must be built from (default: the "
                         "shipped kernels/normtune_dispatch.h)")
    ap.add_argument("--method", choices=("iso", "b2b"), default="iso",
                    help="iso: each call alone after an L2 flush (default); b2b: back to "
                         "back over sets >= 3x the L2, as the tuner times")
    ap.add_argument("--repeat", type=int, default=1, metavar="K",
                    help="time each shape K times (whole passes of the method) and report "
                         "the median of the passes with their range (default 1)")
    ap.add_argument("--no-compile", action="store_true", help="skip torch.compile")
    ap.add_argument("--no-big", action="store_true", help="skip 65536 x 16384")
    args = ap.parse_args()
    if not 1 <= args.repeat <= 100:
        ap.error(f"--repeat must be between 1 and 100, not {args.repeat}")
    warnings.filterwarnings("ignore", message=".*Mismatch dtype.*")

    if not torch.cuda.is_available():
        sys.exit("peers_fwd.py: no CUDA device")
    t0 = time.time()
    dev = torch.cuda.get_device_properties(0)
    torch.cuda.init()
    nt = Normtune(args.lib)  # after torch, so it shares torch's CUDA runtime
    log(f"device {dev.name}, {dev.multi_processor_count} SMs; torch {torch.__version__}")
    log(f"normtune: {nt.version}")
    why = header_mismatch(nt.version, args.header)
    if why:
        sys.exit(f"peers_fwd.py: {args.lib} was not built from {args.header}: {why} "
                 f"(make lib DISPATCH={args.header}, then run again)")
    qr, qver = load_quack()
    _flush = torch.empty(FLUSH_BYTES, dtype=torch.uint8, device="cuda")
    l2 = dev.L2_cache_size
    gen = torch.Generator(device="cuda")
    failures = []
    rows, errs, configs, vs = [], [], [], []
    shapes = [s for s in SHAPES if not (args.no_big and s[:2] == BIG)]

    for M, N, xd, wd in shapes:
        tag = f"{M} x {N} x={dname(xd)} w={dname(wd)}"
        log(f"--- {tag}  ({time.time() - t0:.0f} s)")
        gen.manual_seed(1234 + M + N)
        x = torch.randn(M, N, dtype=xd, device="cuda", generator=gen)
        w = (torch.rand(N, dtype=F32, device="cuda", generator=gen) + 0.5).to(wd)  # [0.5, 1.5)
        y = torch.empty_like(x)
        rstd = torch.empty(M, dtype=F32, device="cuda")
        res = {}    # column -> us, or a string saying why there is none
        err = {}    # column -> "y err / rstd err"

        # b2b: more input/output sets, so that they hold >= 3x the L2
        sets = [(x, y, rstd)]
        if args.method == "b2b":
            per_set = 2 * M * N * x.element_size()
            n = min(64, max(1, -(-3 * l2 // per_set)))
            sets += [(x.clone(), torch.empty_like(y), torch.empty_like(rstd)) for _ in range(n - 1)]

        copy = ("copy", lambda a, b, r: (lambda: b.copy_(a)), False)
        nbytes = 2 * M * N * x.element_size()

        contenders = []
        ws_bytes = nt.workspace_size(M, N, xd, wd)
        if ws_bytes is None:
            res["normtune y"] = res["normtune y+rstd"] = "N > MAX_N"
        else:
            ws = torch.empty(ws_bytes, dtype=torch.uint8, device="cuda") if ws_bytes else None
            cfg = nt.choice(M, N, xd, wd)
            configs.append((tag, cfg, ws_bytes))
            log(f"normtune config {cfg}, workspace {ws_bytes} B")
            contenders += [("normtune y", lambda a, b, r: nt.fwd_fn(a, w, b, r, ws), False),
                           ("normtune y+rstd", lambda a, b, r: nt.fwd_fn(a, w, b, r, ws), True)]
        if qr is not None:
            contenders += [("QuACK y", lambda a, b, r: quack_fn(qr, a, w, b, r), False),
                           ("QuACK y+rstd", lambda a, b, r: quack_fn(qr, a, w, b, r), True)]
        else:
            res["QuACK y"] = res["QuACK y+rstd"] = "no QuACK"
        contenders.append(("torch eager", lambda a, b, r: (lambda: F.rms_norm(a, (N,), w, EPS)),
                           False))
        if not args.no_compile and (M, N) in COMPILE_AT and wd == xd:
            try:
                tc = time.time()
                cf = torch.compile(lambda a, b: F.rms_norm(a, (N,), b, EPS), dynamic=False)
                cf(x, w)
                torch.cuda.synchronize()
                log(f"torch.compile: compiled in {time.time() - tc:.1f} s")
                contenders.append(("torch.compile", lambda a, b, r: (lambda: cf(a, w)), False))
            except Exception as e:
                log(f"torch.compile FAILED: {type(e).__name__}: {e}")
                res["torch.compile"] = "failed"

        # check every contender's output first; those that pass are timed
        timed = [copy]
        for name, make, with_rstd in contenders:
            try:
                tc = time.time()
                r = rstd if with_rstd else None
                ey, er = check_output(make(x, y, r), x, w, y, r)  # QuACK compiles here
                first = time.time() - tc
                err[name] = f"{ey:.2e}" + (f" / {er:.2e}" if er is not None else "")
                if name.startswith("normtune y") and xd == BF16 and not ey <= NT_Y_TOL:
                    failures.append(f"{tag}: {name}: y rel L2 {ey:.3e} > {NT_Y_TOL}")
                    log(f"FAIL: {failures[-1]}")
                    err[name] += " FAIL"
                log(f"{name:15s} err {err[name]}" +
                    (f"  (first call {first:.1f} s)" if first > 1 else ""))
                timed.append((name, make, with_rstd))
            except Exception as e:
                if name.startswith("normtune"):
                    failures.append(f"{tag}: {name}: {e}")
                log(f"{name} FAILED: {type(e).__name__}: {e}")
                traceback.print_exc(file=sys.stdout)
                sys.stdout.flush()
                res[name] = "failed"

        # then all of them together, interleaved (see the file comment),
        # in --repeat whole passes
        passes = []
        for k in range(args.repeat):
            try:
                if args.method == "b2b":
                    us = time_b2b([[make(a, b, r if with_rstd else None) for a, b, r in sets]
                                   for _, make, with_rstd in timed])
                else:
                    us = time_iso([make(x, y, rstd if with_rstd else None)
                                   for _, make, with_rstd in timed])
            except Exception as e:
                log(f"timing FAILED: {type(e).__name__}: {e}")
                traceback.print_exc(file=sys.stdout)
                sys.exit(f"peers_fwd.py: {tag}: timing failed")
            passes.append(dict(zip(["copy"] + [name for name, _, _ in timed[1:]], us)))
            if args.repeat > 1:
                log(f"pass {k + 1}/{args.repeat}: " +
                    ", ".join(f"{n} {t:.1f}" for n, t in passes[-1].items()) + " us")
        copy_us = statistics.median(p["copy"] for p in passes)
        spread = {}
        log(f"copy            {copy_us:9.1f} us  {nbytes / copy_us / 1e6:.2f} TB/s")
        for name, _, _ in timed[1:]:
            ts = [p[name] for p in passes]
            res[name] = t = statistics.median(ts)
            if args.repeat > 1:
                spread[name] = (min(ts), max(ts))
            log(f"{name:15s} {t:9.1f} us  {100 * copy_us / t:5.1f}% of copy")

        rows.append((tag, copy_us, nbytes / copy_us / 1e6, res, spread))
        vs.append((tag, [versus(passes, f"normtune {c}", f"QuACK {c}") for c in ("y", "y+rstd")]))
        errs.append((tag, err))
        del x, w, y, rstd, contenders, sets
        torch.cuda.empty_cache()

    # ---- tables ----
    uuid = getattr(dev, "uuid", None)   # which GPU of the model (torch >= 2.1)
    out = [f"# RMSNorm forward: normtune vs QuACK vs PyTorch ({dev.name})", "",
           f"- GPU-{uuid}" if uuid is not None else "- GPU uuid: not reported by torch",
           f"- torch {torch.__version__}; QuACK {qver or 'not imported'}",
           f"- normtune: {nt.version}",
           f"- eps {EPS}; x ~ N(0,1), w ~ U[0.5,1.5)",
           (f"- method iso: median of {ITERS} calls after {WARMUP} warm-ups, each timed "
            f"alone with CUDA events after a {FLUSH_BYTES >> 20} MB L2 flush"
            if args.method == "iso" else
            f"- method b2b: median over {B2B_BATCHES} batches of {B2B_CALLS} calls back to "
            f"back (time per call), rotating over sets holding >= 3x the L2"),
           "- the contenders of a shape, the copy included, timed interleaved: rounds of "
           "one call (iso) or batch (b2b) of each, the order rotated by one each round",
           "- copy = y.copy_(x), 2*M*N*elem bytes; each contender as % of the copy "
           "(copy time / its time) and its median time",
           *([f"- {args.repeat} passes of each shape in a row: each cell is the median "
              "of the passes (the copy's too), with the range of the contender's time"]
             if args.repeat > 1 else []), "",
           "| M x N, dtypes | copy | " + " | ".join(COLUMNS) + " |",
           "|---" * (2 + len(COLUMNS)) + "|"]
    for tag, copy_us, tbs, res, spread in rows:
        cells = [cell(copy_us, res[c], spread.get(c)) if isinstance(res.get(c), float)
                 else res.get(c, "-") for c in COLUMNS]
        out.append(f"| {tag} | {tbs:.2f} TB/s ({copy_us:.1f} us) | " + " | ".join(cells) + " |")
    if qr is not None:
        out += ["", "normtune against QuACK: QuACK's median time over normtune's (above "
                "1: normtune faster), and the passes in which normtune was faster:", "",
                "| M x N, dtypes | y | y+rstd |", "|---|---|---|"]
        ahead = total = 0
        for tag, pair in vs:
            cells = []
            for v in pair:
                if v is None:
                    cells.append("-")
                    continue
                total += 1
                ahead += v[0] > 1
                cells.append(f"{v[0]:.3f} ({v[1]} of {v[2]})")
            out.append(f"| {tag} | " + " | ".join(cells) + " |")
        out += ["", f"normtune faster on the median at {ahead} of {total} (shape, output) pairs."]
    out += ["", "Relative L2 error vs float64 (y / rstd):", "",
            "| M x N, dtypes | " + " | ".join(COLUMNS) + " |",
            "|---" * (1 + len(COLUMNS)) + "|"]
    for tag, err in errs:
        out.append(f"| {tag} | " + " | ".join(err.get(c, "-") for c in COLUMNS) + " |")
    out += ["", "normtune configs:", ""]
    out += [f"- {tag}: {cfg}, workspace {b} B" for tag, cfg, b in configs]
    if failures:
        out += ["", "FAILURES:", ""] + [f"- {f}" for f in failures]
    text = "\n".join(out) + "\n"
    log("")
    log(text)
    if args.out:
        Path(args.out).write_text(text)
        log(f"written to {args.out}")
    log(f"total {time.time() - t0:.0f} s")
    if failures:
        sys.exit(1)


if __name__ == "__main__":
    main()
