#!/usr/bin/env python3
"""peers_fwd.py -- RMSNorm forward: normtune's library against QuACK, Liger and PyTorch.

A measurement run by hand on a CUDA device (not part of `make test`):

    python3 tests/gpu/peers_fwd.py [--out FILE.md] [--lib build/libnormtune.so]
                                   [--header kernels/normtune_dispatch.h]
                                   [--method iso|b2b] [--repeat K]
                                   [--no-compile] [--no-big]

from the repository root, with build/libnormtune.so built (`make lib`);
`make bench` runs it with --no-compile.  What it shares with peers_bwd.py
(the library through ctypes, the header check, QuACK's import, the timing
of calls alone) is in tests/gpu/peers_common.py.
The library must be built from --header (the shipped one by default): its
version string's config and kernel counts are compared with the header's
and the run stops when they differ.  QuACK
(quack-kernels, with nvidia-cutlass-dsl) and Liger (liger-kernel) are
optional: when one cannot be imported the reason is printed and the other
contenders are still measured.  The shapes: model hidden sizes at
training batches, bf16 x with an fp32 weight at three, per-head norms
(N = 64 to 768) and rows past 16384 (N = 18432, 20480).
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
    Liger y+rstd       liger_kernel's LigerRMSNormFunction forward (it
                       always computes rstd, kept for its backward; it
                       allocates its outputs per call), when it imports
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

--repeat K (1 by default; `make bench` passes PEERS_REPEAT, 5) times each
shape K times in a row, each a whole interleaved pass of the method above,
and reports per cell the median of the K passes with their range ("133.3
us, 133.1-134.0"); the copy's cell is its median over the passes too.
Alone after a flush, one contender's median moved by up to 1.6% between
runs of the script on one GPU (data/peers-fwd-h200.md, seventh run), more
than some of the margins compared, so a verdict on one pass can be noise.
With a peer measured, the tables are followed by normtune against the
fastest peer per shape, y and y+rstd (y against every peer, y+rstd
against the peers that write rstd: QuACK's and Liger's): the ratio of the
medians (the peer's time over normtune's; above 1: normtune faster), the
peer, and in how many of the K passes normtune beat every peer of the
pass (peers_common.py versus).

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

import os
import statistics
import sys
import time
import traceback
import warnings

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from peers_common import (BF16, EPS, F32, FLUSH_BYTES,  # noqa: E402
                          ITERS, WARMUP, cell, dname, events,
                          init_flush, load_liger, load_quack, log, rel_l2, rotated,
                          rstd64, time_iso, time_passes, versus, check_repeat,
                          finish_report, parser, start)

NT_Y_TOL = 1e-2  # normtune's y must be this close to float64 (bf16)

# (M, N, x dtype, w dtype).  bf16/bf16 everywhere, plus bf16 x with an fp32
# weight (QuACK's common training setup) at three shapes, and two long-row
# shapes (N above the default sweeps' 16384, up to the library's 65536:
# its loop fallback unless a large-N sweep tuned them; QuACK splits such
# rows over a cluster).
BIG = (65536, 16384)  # 2 GiB of x (--no-big drops it)
SHAPES = ([(M, N, BF16, BF16) for M, N in [(16384, 4096), (16384, 8192), (8192, 16384),
                                           (32768, 4096), (65536, 2048), (4096, 16384), BIG,
                                           (4096, 4096), (1024, 4096), (16384, 1024)]] +
          [(M, N, BF16, F32) for M, N in [(16384, 4096), (8192, 16384), (65536, 2048)]] +
          # per-head norms (QK-norm) and rows past 16384
          [(M, N, BF16, BF16) for M, N in [(1048576, 128), (262144, 128), (131072, 64),
                                           (65536, 256), (32768, 512), (8192, 768),
                                           (16384, 18432), (4096, 20480), (4096, 32768),
                                           (1024, 65536)]])
COMPILE_AT = {(16384, 4096), (8192, 16384)}  # torch.compile shapes (bf16/bf16)

COLUMNS = ["normtune y", "normtune y+rstd", "QuACK y", "QuACK y+rstd",
           "Liger y+rstd", "torch eager", "torch.compile"]
# the peers each of normtune's outputs is held against: for y every peer (one
# that also writes rstd gives y all the same), for y+rstd those that write it
RIVALS = {"y": COLUMNS[2:], "y+rstd": ["QuACK y+rstd", "Liger y+rstd"]}


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
        for j in rotated(n, i):
            fns = fn_sets[j]
            a, b = events()
            torch.cuda._sleep(B2B_SLEEP_CYCLES)
            a.record()
            for c in range(B2B_CALLS):
                fns[c % len(fns)]()
            b.record()
            torch.cuda.synchronize()
            per[j].append(a.elapsed_time(b) * 1e3 / B2B_CALLS)
    return [statistics.median(p) for p in per]


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


def main():
    ap = parser(__doc__)
    ap.add_argument("--method", choices=("iso", "b2b"), default="iso",
                    help="iso: each call alone after an L2 flush (default); b2b: back to "
                         "back over sets >= 3x the L2, as the tuner times")
    ap.add_argument("--no-compile", action="store_true", help="skip torch.compile")
    ap.add_argument("--no-big", action="store_true", help="skip 65536 x 16384")
    args = ap.parse_args()
    check_repeat(ap, args)
    warnings.filterwarnings("ignore", message=".*Mismatch dtype.*")

    nt, dev, t0 = start("peers_fwd.py", args.lib, args.header)
    qr, qver = load_quack()
    liger, lver = load_liger()
    init_flush()
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
        ws_bytes = nt.workspace_size("rmsnorm_fwd", M, N, xd, wd)
        if ws_bytes is None:    # NORMTUNE_ERROR_UNSUPPORTED_N: above NORMTUNE_MAX_N (65536)
            res["normtune y"] = res["normtune y+rstd"] = "refused (N)"
        else:
            ws = torch.empty(ws_bytes, dtype=torch.uint8, device="cuda") if ws_bytes else None
            cfg = nt.choice("rmsnorm_fwd", M, N, xd, wd)
            configs.append((tag, cfg, ws_bytes))
            log(f"normtune config {cfg}, workspace {ws_bytes} B")
            contenders += [("normtune y", lambda a, b, r: nt.fwd_fn(a, w, b, r, ws), False),
                           ("normtune y+rstd", lambda a, b, r: nt.fwd_fn(a, w, b, r, ws), True)]
        if qr is not None:
            contenders += [("QuACK y", lambda a, b, r: quack_fn(qr, a, w, b, r), False),
                           ("QuACK y+rstd", lambda a, b, r: quack_fn(qr, a, w, b, r), True)]
        else:
            res["QuACK y"] = res["QuACK y+rstd"] = "no QuACK"
        if liger is not None:
            # Liger's forward always computes rstd (kept for its backward)
            contenders.append(("Liger y+rstd", lambda a, b, r: (
                lambda: liger.apply(a, w, EPS, 0.0, "llama", False)), False))
        else:
            res["Liger y+rstd"] = lver
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
        names = ["copy"] + [name for name, _, _ in timed[1:]]

        def one_pass():
            if args.method == "b2b":
                return time_b2b([[make(a, b, r if with_rstd else None) for a, b, r in sets]
                                 for _, make, with_rstd in timed])
            return time_iso([make(x, y, rstd if with_rstd else None)
                             for _, make, with_rstd in timed])
        try:
            passes, res_med, spread = time_passes(one_pass, names, args.repeat)
        except Exception as e:
            log(f"timing FAILED: {type(e).__name__}: {e}")
            traceback.print_exc(file=sys.stdout)
            sys.exit(f"peers_fwd.py: {tag}: timing failed")
        copy_us = res_med["copy"]
        log(f"copy            {copy_us:9.1f} us  {nbytes / copy_us / 1e6:.2f} TB/s")
        for name in names[1:]:
            res[name] = t = res_med[name]
            log(f"{name:15s} {t:9.1f} us  {100 * copy_us / t:5.1f}% of copy")

        rows.append((tag, copy_us, nbytes / copy_us / 1e6, res, spread))
        vs.append((tag, [versus(passes, f"normtune {c}", RIVALS[c]) for c in ("y", "y+rstd")]))
        errs.append((tag, err))
        del x, w, y, rstd, contenders, sets
        torch.cuda.empty_cache()

    # ---- tables ----
    uuid = getattr(dev, "uuid", None)   # which GPU of the model (torch >= 2.1)
    out = [f"# RMSNorm forward: normtune vs QuACK vs PyTorch ({dev.name})", "",
           f"- GPU-{uuid}" if uuid is not None else "- GPU uuid: not reported by torch",
           f"- torch {torch.__version__}; QuACK {qver or 'not imported'}; "
           f"Liger {lver or 'not imported'}",
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
    if any(v is not None for _, pair in vs for v in pair):
        out += ["", "normtune against the fastest peer: that peer's median time over "
                "normtune's (above 1: normtune faster), which peer, and in how many passes "
                "normtune beat every peer of the pass.  y is held against every peer, "
                "y+rstd against those that write rstd (" + ", ".join(RIVALS["y+rstd"]) + "):",
                "", "| M x N, dtypes | y | y+rstd |", "|---|---|---|"]
        ahead = total = 0
        for tag, pair in vs:
            cells = []
            for v in pair:
                if v is None:
                    cells.append("-")
                    continue
                total += 1
                ahead += v[0] > 1
                cells.append(f"{v[0]:.3f} ({v[1]}; {v[2]} of {v[3]})")
            out.append(f"| {tag} | " + " | ".join(cells) + " |")
        out += ["", f"normtune faster than the fastest peer on the median at {ahead} of "
                f"{total} (shape, output) pairs."]
    finish_report(out, "y / rstd", COLUMNS, errs, configs, failures, args.out, t0)


if __name__ == "__main__":
    main()
