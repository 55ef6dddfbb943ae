#!/usr/bin/env python3
"""peers_bwd.py -- RMSNorm backward: normtune's library against PyTorch, Liger and QuACK.

A measurement on a CUDA device (`make bench` runs it after the bench when
python3 can import torch; not part of `make test`):

    python3 tests/gpu/peers_bwd.py [--out FILE.md] [--lib build/libnormtune.so]
                                   [--header kernels/normtune_dispatch.h]
                                   [--shapes tests/gpu/bench_shapes.txt] [--repeat K]

from the repository root, with build/libnormtune.so built (`make lib`) from
--header (checked as peers_fwd.py does: the run stops when the library's
config and kernel counts differ from the header's).  The shapes are those of
`make bench` (the shape file, the one list of them).

The op, for each row i of M x N inputs x and dy and a weight w (eps 1e-6):

    r_i = 1 / sqrt(mean_j x_ij^2 + eps)
    dx_ij = r_i w_j dy_ij - x_ij r_i^3 mean_k(w_k dy_ik x_ik),   dw_j = sum_i dy_ij x_ij r_i

x, w and dy bf16.  Contenders, on the same tensors in the same process:

    add           torch.add(x, dy, out=c) into a preallocated c: reads two M x N
                  bf16 tensors and writes one, the backward's own traffic (w
                  and dw are N elements), the yardstick
    normtune      normtune_rmsnorm_bwd, dw fp32, into preallocated dx, dw
    torch eager   torch.autograd.grad of torch.nn.functional.rms_norm (the
                  graph of one forward, kept: retain_graph), dw bf16
    Liger         the same through liger_kernel's LigerRMSNormFunction
                  (in_place=False, so dy is left as it is), dw bf16
    QuACK         quack.rmsnorm.rmsnorm_bwd(x, w, dy, rstd) when it has it,
                  else autograd through quack.rmsnorm.rmsnorm

Liger and QuACK are optional: when one cannot be imported (or fails at a
shape) the reason is printed and its column says so.  The peers allocate
their outputs per call, as their users get them.

Timing (tests/gpu/peers_common.py time_iso): every call alone between two
CUDA events after a 256 MB L2 flush, the median of 40 after 10 warm-ups,
the contenders of a shape (the add included) interleaved in rounds, the
order rotated every round.  --repeat K (1 by default; `make bench` passes
PEERS_REPEAT, 5) makes K such passes of each shape in a row; each cell is
then the median of the passes, with their range.  Each contender is
reported as % of the add (add time / its time) with its time; then
normtune against the fastest peer: that peer's median time over normtune's
(above 1: normtune faster), and in how many passes normtune beat every
peer of the pass (peers_common.py versus).  Before
timing, every contender's dx and dw are checked against a float64
reference (relative L2 error); normtune's above 1e-2 is a failure (exit
status 1, after the tables are written).
"""

import importlib
import os
import sys
import time
import traceback

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from peers_common import (BF16, DEFAULT_SHAPES, EPS,  # noqa: E402
                          F32, FLUSH_BYTES, ITERS, WARMUP, bench_shapes, cell,
                          finish_report, parser, start, init_flush, load_liger, load_quack, log, rstd64,
                          time_iso, time_passes, versus, check_repeat)

NT_TOL = 1e-2  # normtune's dx and dw must be this close to float64
PEERS = ["torch eager", "Liger", "QuACK"]
COLUMNS = ["normtune"] + PEERS


def autograd_fn(forward, x, w, dy):
    """A closure computing (dx, dw) by autograd through forward(x, w), the
    forward run once here and its graph kept."""
    xr = x.detach().requires_grad_(True)
    wr = w.detach().requires_grad_(True)
    y = forward(xr, wr)
    if isinstance(y, tuple):
        y = y[0]
    return lambda: torch.autograd.grad(y, (xr, wr), dy, retain_graph=True)


def quack_fns(qr, x, w, dy):
    """QuACK's ways of running the backward, to try in turn, as (how, make)
    where make() returns the closure: its rmsnorm_bwd on a precomputed
    rstd, then autograd through its rmsnorm."""
    ways = []
    if hasattr(qr, "rmsnorm_bwd"):
        rstd = rstd64(x).float()
        ways.append(("rmsnorm_bwd", lambda: (lambda: qr.rmsnorm_bwd(x, w, dy, rstd))))
    if hasattr(qr, "rmsnorm"):
        ways.append(("autograd", lambda: autograd_fn(lambda a, b: qr.rmsnorm(a, b, eps=EPS),
                                                     x, w, dy)))
    return ways


def check(fn, x, w, dy):
    """Run fn once; the relative L2 errors of its dx and dw against the
    backward in float64 (computed in chunks of rows)."""
    out = fn()
    torch.cuda.synchronize()
    dx, dw = out[0], out[1]
    M, N = x.shape
    w64 = w.double()
    step = max(1, (1 << 26) // N)
    num = den = 0.0
    dw64 = torch.zeros(N, dtype=torch.float64, device=x.device)
    for r0 in range(0, M, step):
        xc, dyc = x[r0:r0 + step].double(), dy[r0:r0 + step].double()
        r = rstd64(xc)[:, None]
        g = dyc * w64
        ref = r * g - xc * r ** 3 * (g * xc).mean(dim=1, keepdim=True)
        d = dx[r0:r0 + step].double() - ref
        num += float((d * d).sum())
        den += float((ref * ref).sum())
        dw64 += (dyc * xc * r).sum(dim=0)
    d = dw.double() - dw64
    return (num / den) ** 0.5, (float((d * d).sum()) / float((dw64 * dw64).sum())) ** 0.5


def main():
    ap = parser(__doc__)
    ap.add_argument("--shapes", default=str(DEFAULT_SHAPES),
                    help="the shape file (default: tests/gpu/bench_shapes.txt, make bench's)")
    args = ap.parse_args()
    check_repeat(ap, args)
    try:
        shapes = bench_shapes(args.shapes)
    except (OSError, ValueError) as e:
        sys.exit(f"peers_bwd.py: {e}")
    nt, dev, t0 = start("peers_bwd.py", args.lib, args.header)
    qr, qver = load_quack()
    liger, lver = load_liger()
    init_flush()
    gen = torch.Generator(device="cuda")
    failures, rows, errs, configs = [], [], [], []

    for M, N in shapes:
        tag = f"{M} x {N}"
        log(f"--- {tag}  ({time.time() - t0:.0f} s)")
        gen.manual_seed(4321 + M + N)
        x = torch.randn(M, N, dtype=BF16, device="cuda", generator=gen)
        dy = torch.randn(M, N, dtype=BF16, device="cuda", generator=gen)
        w = (torch.rand(N, dtype=F32, device="cuda", generator=gen) + 0.5).to(BF16)
        c = torch.empty_like(x)
        res, err, cands = {}, {}, []

        ws_bytes = nt.workspace_size("rmsnorm_bwd", M, N, BF16, BF16, F32)
        if ws_bytes is None:
            res["normtune"] = "refused (N)"
        else:
            dx = torch.empty_like(x)
            dw = torch.empty(N, dtype=F32, device="cuda")
            ws = torch.empty(ws_bytes, dtype=torch.uint8, device="cuda") if ws_bytes else None
            cfg = nt.choice("rmsnorm_bwd", M, N, BF16, BF16, F32)
            configs.append((tag, cfg, ws_bytes))
            log(f"normtune config {cfg}, workspace {ws_bytes} B")
            run = nt.bwd_fn(x, w, dy, dx, dw, ws)

            def nt_call(run=run, dx=dx, dw=dw):
                dx.fill_(float("nan"))
                dw.fill_(float("nan"))
                run()
                return dx, dw
            cands.append(("normtune", [("call", lambda: nt_call)], run))
        cands.append(("torch eager", [("autograd", lambda: autograd_fn(
            lambda a, b: F.rms_norm(a, (N,), b, EPS), x, w, dy))], None))
        if liger is not None:
            cands.append(("Liger", [("autograd", lambda: autograd_fn(
                lambda a, b: liger.apply(a, b, EPS, 0.0, "llama", False), x, w, dy))], None))
        else:
            res["Liger"] = lver
        if qr is not None:
            cands.append(("QuACK", quack_fns(qr, x, w, dy), None))
        else:
            res["QuACK"] = "not imported"

        # check each contender (the first way of calling it that runs and
        # is right), then time those that passed with the add, interleaved
        timed_names, timed_fns = [], []
        for name, ways, timed_fn in cands:
            why = "no way to call it"
            for how, make in ways:
                try:
                    tc = time.time()
                    fn = make()
                    edx, edw = check(fn, x, w, dy)
                    first = time.time() - tc
                except Exception as e:
                    why = f"failed ({type(e).__name__})"
                    log(f"{name} ({how}) FAILED: {type(e).__name__}: {e}")
                    traceback.print_exc(file=sys.stdout)
                    sys.stdout.flush()
                    continue
                err[name] = f"{edx:.2e} / {edw:.2e}"
                ok = edx <= NT_TOL and edw <= NT_TOL
                log(f"{name:12s} ({how}) err dx / dw {err[name]}" + ("" if ok else " WRONG") +
                    (f"  (first call {first:.1f} s)" if first > 1 else ""))
                if ok:
                    timed_names.append(name)
                    timed_fns.append(timed_fn or fn)
                    why = None
                    break
                why = "wrong result"
                err[name] += " WRONG"
            if why:
                res[name] = why
                if name == "normtune":
                    failures.append(f"{tag}: normtune {why}" +
                                    (f" (dx / dw rel L2 {err[name]}, tolerance {NT_TOL})"
                                     if name in err else ""))
                    log(f"FAIL: {failures[-1]}")

        names = ["add"] + timed_names
        try:
            passes, med, spread = time_passes(
                lambda: time_iso([lambda: torch.add(x, dy, out=c)] + timed_fns), names,
                args.repeat)
        except Exception as e:
            log(f"timing FAILED: {type(e).__name__}: {e}")
            traceback.print_exc(file=sys.stdout)
            sys.exit(f"peers_bwd.py: {tag}: timing failed")
        add_us = med["add"]
        log(f"add          {add_us:9.1f} us  {3 * M * N * 2 / add_us / 1e6:.2f} TB/s")
        for name in timed_names:
            res[name] = t = med[name]
            log(f"{name:12s} {t:9.1f} us  {100 * add_us / t:5.1f}% of add")
        rows.append((tag, add_us, res, spread, versus(passes, "normtune", PEERS)))
        errs.append((tag, err))
        del x, dy, w, c, cands, timed_fns
        torch.cuda.empty_cache()

    # ---- tables ----
    uuid = getattr(dev, "uuid", None)
    out = [f"# RMSNorm backward: normtune vs PyTorch, Liger, QuACK ({dev.name})", "",
           f"- GPU-{uuid}" if uuid is not None else "- GPU uuid: not reported by torch",
           f"- torch {torch.__version__}; Liger {lver or 'not imported'}; "
           f"QuACK {qver or 'not imported'}",
           f"- normtune: {nt.version}",
           f"- eps {EPS}; x, dy ~ N(0,1), w ~ U[0.5,1.5), all bf16; normtune's dw fp32, "
           "the peers' dw bf16 (w's dtype)",
           f"- median of {ITERS} calls after {WARMUP} warm-ups, each timed alone with CUDA "
           f"events after a {FLUSH_BYTES >> 20} MB L2 flush; the contenders of a shape, the "
           "add included, interleaved in rounds, the order rotated every round",
           "- add = torch.add(x, dy, out=c), 3*M*N*2 bytes; each contender as % of the add "
           "(add time / its time) and its median time",
           *([f"- {args.repeat} passes of each shape in a row: each cell is the median of "
              "the passes (the add's too), with the range of the contender's time"]
             if args.repeat > 1 else []),
           "- vs best peer: the fastest peer's median time over normtune's (above 1: "
           "normtune faster), which peer, and in how many passes normtune beat every peer "
           "of the pass",
           "", "| M x N | add | " + " | ".join(COLUMNS) + " | vs best peer |",
           "|---" * (3 + len(COLUMNS)) + "|"]
    ahead = total = 0
    for tag, add_us, res, spread, v in rows:
        cells = [cell(add_us, res[k], spread.get(k)) if isinstance(res.get(k), float)
                 else res.get(k, "-") for k in COLUMNS]
        vs = "-"
        if v is not None:
            vs = f"{v[0]:.3f} ({v[1]}; {v[2]} of {v[3]})"
            total += 1
            ahead += v[0] > 1
        out.append(f"| {tag} | {add_us:.1f} us | " + " | ".join(cells) + f" | {vs} |")
    out += ["", f"normtune faster than the best peer at {ahead} of {total} shapes."]
    finish_report(out, "dx / dw", COLUMNS, errs, configs, failures, args.out, t0)


if __name__ == "__main__":
    main()
