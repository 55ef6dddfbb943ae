"""peers_common.py -- what tests/gpu/peers_fwd.py and peers_bwd.py share.

Imported by those scripts (they put their folder on sys.path first): the
library loaded with ctypes (prototypes from kernels/normtune.h and the ops'
api.h), the check that it was built from a given dispatch header, QuACK's
import, the L2 flush and the interleaved timing of calls alone, the
relative L2 error against a float64 reference, and the shape list of
`make bench` (tests/gpu/bench_shapes.txt, the one list of those shapes).
"""

import ctypes
import importlib
import re
import statistics
import sys
import traceback
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parents[2]
DEFAULT_LIB = ROOT / "build" / "libnormtune.so"
DEFAULT_HEADER = ROOT / "kernels" / "normtune_dispatch.h"
DEFAULT_SHAPES = ROOT / "tests" / "gpu" / "bench_shapes.txt"

EPS = 1e-6
WARMUP, ITERS = 10, 40
FLUSH_BYTES = 256 << 20

BF16, F32 = torch.bfloat16, torch.float32


def log(*a):
    print(*a, flush=True)


def dname(dt):
    return {BF16: "bf16", F32: "f32", torch.float16: "f16"}[dt]


# ---- the shape list of make bench ----------------------------------------------

def bench_shapes(path=DEFAULT_SHAPES):
    """[(M, N), ...] from the shape file: "M N" a line (whole numbers from 1
    to 2^40), '#' comments and blank lines skipped (the format
    tests/gpu/bench.c reads).  Raises
    ValueError naming the file and line of a bad line."""
    shapes = []
    for ln, line in enumerate(Path(path).read_text().splitlines(), 1):
        words = line.split("#", 1)[0].split()
        if not words:
            continue
        if len(words) != 2 or not all(w.isascii() and w.isdigit() and 0 < int(w) <= 1 << 40
                                      for w in words):
            raise ValueError(f"{path}:{ln}: want \"M N\" (two positive whole numbers)")
        shapes.append((int(words[0]), int(words[1])))
    if not shapes:
        raise ValueError(f"{path}: no shapes")
    return shapes


# ---- normtune through ctypes (prototypes from kernels/normtune.h) ----------

NT_DTYPE = {BF16: 0, torch.float16: 1, F32: 2}  # NORMTUNE_BF16, _F16, _F32
NT_UNSUPPORTED_N = 3                            # NORMTUNE_ERROR_UNSUPPORTED_N
NT_ERROR_CUDA = 8                               # NORMTUNE_ERROR_CUDA


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


# Per op: its tensors (pointer arguments) and its dtype slots, in the order
# of its calls' arguments (kernels/<op>/api.h).
OPS = {"rmsnorm_fwd": (("x", "w", "y", "rstd"), ("x", "w")),
       "rmsnorm_bwd": (("x", "w", "dy", "dx", "dw"), ("x", "w", "dw"))}


class Normtune:
    """The library's calls for every op of OPS: workspace_size, choice and
    a closure per call (fwd_fn, bwd_fn)."""

    def __init__(self, path):
        lib = ctypes.CDLL(str(path))
        ll, i, vp = ctypes.c_longlong, ctypes.c_int, ctypes.c_void_p
        lib.normtune_strerror.argtypes, lib.normtune_strerror.restype = [i], ctypes.c_char_p
        lib.normtune_last_cuda_error.argtypes, lib.normtune_last_cuda_error.restype = [], i
        lib.normtune_version.argtypes, lib.normtune_version.restype = [], ctypes.c_char_p
        for op, (tensors, slots) in OPS.items():
            ws = getattr(lib, f"normtune_{op}_workspace_size")
            ws.argtypes = [ll, ll] + [i] * len(slots) + [ctypes.POINTER(ctypes.c_size_t)]
            ws.restype = i
            ch = getattr(lib, f"normtune_{op}_choice")
            ch.argtypes = [ll, ll] + [i] * len(slots) + [ctypes.POINTER(NtChoice)]
            ch.restype = i
            # tensors, M, N, eps, dtypes, workspace, workspace_bytes, stream
            run = getattr(lib, f"normtune_{op}")
            run.argtypes = ([vp] * len(tensors) + [ll, ll, ctypes.c_float] + [i] * len(slots) +
                            [vp, ctypes.c_size_t, vp])
            run.restype = i
        self.lib = lib
        self.version = lib.normtune_version().decode()

    def check(self, st, what):
        if st != 0:
            msg = self.lib.normtune_strerror(st).decode()
            if st == NT_ERROR_CUDA:
                msg += f" (cudaError {self.lib.normtune_last_cuda_error()})"
            raise RuntimeError(f"{what}: status {st}: {msg}")

    def strerror(self, st):
        return self.lib.normtune_strerror(st).decode()

    def workspace_size(self, op, M, N, *dtypes):
        """Bytes of workspace, or None when the library does not run this N."""
        b = ctypes.c_size_t(0)
        f = getattr(self.lib, f"normtune_{op}_workspace_size")
        st = f(M, N, *[NT_DTYPE[d] for d in dtypes], ctypes.byref(b))
        if st == NT_UNSUPPORTED_N:
            return None
        self.check(st, f"normtune_{op}_workspace_size")
        return b.value

    def choice(self, op, M, N, *dtypes):
        c = NtChoice()
        f = getattr(self.lib, f"normtune_{op}_choice")
        self.check(f(M, N, *[NT_DTYPE[d] for d in dtypes], ctypes.byref(c)),
                   f"normtune_{op}_choice")
        tag = "tuned" if c.tuned else ("fallback" if c.fallback else "nearest")
        return f"{c.family.decode()} {c.params.decode()} ({tag}, grid {c.grid})"

    def _fn(self, op, tensors, M, N, dtypes, ws):
        """A no-argument closure that enqueues op once on the current stream;
        tensors: torch tensors or None (an optional output not written)."""
        args = ([ctypes.c_void_p(t.data_ptr() if t is not None else None) for t in tensors] +
                [M, N, EPS] + [NT_DTYPE[d] for d in dtypes] +
                [ctypes.c_void_p(ws.data_ptr() if ws is not None else None),
                 ws.numel() if ws is not None else 0,
                 ctypes.c_void_p(torch.cuda.current_stream().cuda_stream)])
        f = getattr(self.lib, f"normtune_{op}")
        what = f"normtune_{op}"

        def run():
            st = f(*args)
            if st != 0:
                self.check(st, what)
        return run

    def fwd_fn(self, x, w, y, rstd, ws):
        """normtune_rmsnorm_fwd (rstd None: not written) as a closure."""
        M, N = x.shape
        return self._fn("rmsnorm_fwd", (x, w, y, rstd), M, N, (x.dtype, w.dtype), ws)

    def bwd_fn(self, x, w, dy, dx, dw, ws):
        """normtune_rmsnorm_bwd as a closure."""
        M, N = x.shape
        return self._fn("rmsnorm_bwd", (x, w, dy, dx, dw), M, N, (x.dtype, w.dtype, dw.dtype), ws)


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


# ---- QuACK -----------------------------------------------------------------

def load_quack():
    """(quack.rmsnorm, version text), or (None, None) with the reason
    printed.  The module is imported by name: the package's `rmsnorm` is a
    function."""
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


# ---- measurement -----------------------------------------------------------

_flush = None


def load_liger():
    """(LigerRMSNormFunction, version text), or (None, reason)."""
    try:
        mod = importlib.import_module("liger_kernel.ops.rms_norm")
        fn = mod.LigerRMSNormFunction
        try:
            from importlib.metadata import version
            ver = version("liger-kernel")
        except Exception:
            ver = "?"
        log(f"Liger {ver} imported")
        return fn, ver
    except Exception as e:
        log(f"Liger import FAILED (its column will say so): {type(e).__name__}: {e}")
        return None, f"not imported ({type(e).__name__})"


def init_flush():
    """Allocate the L2 flush buffer (FLUSH_BYTES) on the current device."""
    global _flush
    _flush = torch.empty(FLUSH_BYTES, dtype=torch.uint8, device="cuda")


def flush_l2():
    _flush.fill_(1)


def events():
    return torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)


def rotated(n, i):
    """Round i's order of n contenders: 0..n-1 rotated left by i."""
    return [(i + k) % n for k in range(n)]


def time_iso(fns):
    """Median us of each closure in fns over ITERS calls, each timed alone
    after an L2 flush, interleaved: ITERS rounds of one call of each, in
    an order rotated from round to round, after WARMUP such rounds."""
    n = len(fns)
    for i in range(WARMUP):
        for j in rotated(n, i):
            flush_l2()
            fns[j]()
    ev = [[] for _ in fns]
    for i in range(ITERS):
        for j in rotated(n, i):
            a, b = events()
            flush_l2()
            a.record()
            fns[j]()
            b.record()
            ev[j].append((a, b))
    torch.cuda.synchronize()
    return [statistics.median(a.elapsed_time(b) * 1e3 for a, b in e) for e in ev]


def time_passes(time_pass, names, repeat):
    """Run time_pass() (one pass: a list of us, one per name) `repeat`
    times in a row and return (the passes as {name: us}, the median of
    each name over them, the (lowest, highest) of each when repeat > 1).
    Each pass is a whole interleaved measurement of every contender, so a
    contender's median is the median of its pass medians."""
    passes = []
    for k in range(repeat):
        passes.append(dict(zip(names, time_pass())))
        if repeat > 1:
            log(f"pass {k + 1}/{repeat}: " +
                ", ".join(f"{n} {t:.1f}" for n, t in passes[-1].items()) + " us")
    med = {n: statistics.median(p[n] for p in passes) for n in names}
    spread = ({n: (min(p[n] for p in passes), max(p[n] for p in passes)) for n in names}
              if repeat > 1 else {})
    return passes, med, spread


def versus(passes, ours, theirs):
    """normtune against peers from one shape's passes ({column: us} each):
    theirs is a column or a list of them (then the fastest of them in each
    pass, and on the medians).  Returns (the peers' median over ours: above
    1 is normtune faster; the name of the fastest peer on the medians; the
    passes in which ours beat every one of them; the passes), or None when
    a pass lacks a time of ours or of every peer."""
    theirs = [theirs] if isinstance(theirs, str) else list(theirs)
    pairs, meds = [], {}
    for p in passes:
        a = p.get(ours)
        bs = [p[t] for t in theirs if isinstance(p.get(t), float)]
        if not isinstance(a, float) or not bs:
            return None
        pairs.append((a, min(bs)))
    for t in theirs:
        ts = [p[t] for p in passes if isinstance(p.get(t), float)]
        if len(ts) == len(passes):
            meds[t] = statistics.median(ts)
    if not meds:
        return None
    best = min(meds, key=meds.get)
    med_a = statistics.median(a for a, _ in pairs)
    return meds[best] / med_a, best, sum(1 for a, b in pairs if a < b), len(pairs)


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
    """1 / sqrt(mean(x^2) + EPS) per row of xc, in float64."""
    xd = xc.double()
    return torch.rsqrt((xd * xd).mean(dim=1) + EPS)


def cell(base_us, us, spread=None):
    """A contender's cell: % of the yardstick (its time / the contender's)
    and its time; with spread (the (lowest, highest) time over several
    passes), that range too."""
    rng = f", {spread[0]:.1f}-{spread[1]:.1f}" if spread else ""
    return f"{100.0 * base_us / us:.1f}% ({us:.1f} us{rng})"


def finish_report(out, title, columns, errs, configs, failures, path, t0):
    """Append the error table, the configs and any failures to the report
    lines `out`, print it, write it to `path` (if given) and exit 1 when
    something failed.  errs: (tag, {column: text}); configs: (tag, config,
    workspace bytes)."""
    import time
    out += ["", f"Relative L2 error vs float64 ({title}):", "",
            "| M x N | " + " | ".join(columns) + " |", "|---" * (1 + len(columns)) + "|"]
    for tag, err in errs:
        out.append(f"| {tag} | " + " | ".join(err.get(c, "-") for c in columns) + " |")
    out += ["", "normtune configs:", ""]
    out += [f"- {tag}: {cfg}, workspace {b} B" for tag, cfg, b in configs]
    if failures:
        out += ["", "FAILURES:", ""] + [f"- {f}" for f in failures]
    text = "\n".join(out) + "\n"
    log("")
    log(text)
    if path:
        Path(path).write_text(text)
        log(f"written to {path}")
    log(f"total {time.time() - t0:.0f} s")
    if failures:
        sys.exit(1)


def start(name, lib, header):
    """Open the GPU and the library for script `name`: exits without a CUDA
    device or when `lib` was not built from `header`.  Returns (Normtune,
    the device's properties, the start time)."""
    import time
    if not torch.cuda.is_available():
        sys.exit(f"{name}: no CUDA device")
    t0 = time.time()
    dev = torch.cuda.get_device_properties(0)
    torch.cuda.init()
    nt = Normtune(lib)  # after torch, so it shares torch's CUDA runtime
    log(f"device {dev.name}, {dev.multi_processor_count} SMs; torch {torch.__version__}")
    log(f"normtune: {nt.version}")
    why = header_mismatch(nt.version, header)
    if why:
        sys.exit(f"{name}: {lib} was not built from {header}: {why} "
                 f"(make lib DISPATCH={header}, then run again)")
    return nt, dev, t0


def parser(doc):
    """An argument parser with the options both peers scripts take: --out,
    --lib, --header and --repeat (check it with check_repeat)."""
    import argparse
    ap = argparse.ArgumentParser(description=doc.split("\n")[0])
    ap.add_argument("--out", help="also write the Markdown tables to this file")
    ap.add_argument("--lib", default=str(DEFAULT_LIB),
                    help="libnormtune.so (default: build/libnormtune.so)")
    ap.add_argument("--header", default=str(DEFAULT_HEADER),
                    help="the dispatch header the library must be built from (default: the "
                         "shipped kernels/normtune_dispatch.h)")
    ap.add_argument("--repeat", type=int, default=1, metavar="K",
                    help="time each shape K times in a row (whole interleaved passes) and "
                         "report the median of the passes with their range (default 1)")
    return ap


def check_repeat(ap, args):
    """Refuse a --repeat outside 1..100 (the parser's error: exit 2)."""
    if not 1 <= args.repeat <= 100:
        ap.error(f"--repeat must be between 1 and 100, not {args.repeat}")
