#!/usr/bin/env python3
"""Analysis half of bench/calibrate.sh (issue 54, item 7): how well whose's 95 % intervals of
the user owner share cover what they claim to cover, on recordings made by calibrate.sh.

    python3 bench/calibrate.py DATA_DIR [jvm] [native] [py]      (WHOSE=binary, SETS, SEED, JOBS)

(a) Single recordings. The long steady recording of each program is cut into S equal consecutive
    segments (perf: `whose report --time P%/k`; py-spy: one attach per segment). For each
    segment, whose's interval (report JSON, inputs[0].owners[user].intervals.owner) is checked
    against the share of the REST of the recording: the other segments pooled by weight.
      coverage    = fraction of segments whose interval contains the rest's share
      width ratio = mean interval width / (2 * 1.96 * SD of the segment shares)
(b) Repeat sets of 5. For subsets of 5 of the R fresh runs (all C(R,5), or SETS drawn with SEED),
    the interval of `whose gate --format json --require 'user.owner >= 0%' f1..f5` is checked
    against the mean share of all R runs (each run's share from `whose report`).
      coverage    = fraction of sets whose interval contains the mean of all runs
      width ratio = mean interval width / (2 * t(0.975, 4) * SD of the R run shares / sqrt 5)

Guards are off (--max-ownerless/-unclassified/-unresolved/-lost 100%): calibration is about
sampling noise, not recording quality. Targets (issue 54): coverage 85-99 %, (a) width ratio
0.7-1.6.
"""
import datetime
import hashlib
import itertools
import json
import math
import os
import random
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

HERE = Path(__file__).resolve().parent
WHOSE = os.environ.get("WHOSE", str(HERE.parent / "target/release/whose"))
SETS = int(os.environ.get("SETS", "252"))
SEED = int(os.environ.get("SEED", "54"))
JOBS = int(os.environ.get("JOBS", "1"))
SET_SIZE = 5
T_975_DF4 = 2.7764451051977987  # Student's t, 97.5 % quantile, 4 degrees of freedom
Z_975 = 1.959963984540054
GUARDS_OFF = ["--max-ownerless", "100%", "--max-unclassified", "100%",
              "--max-unresolved", "100%", "--max-lost", "100%"]
REQUIRE = "user.owner >= 0%"


def programs(d):
    """Per program: how to find its recordings and the rules that say what `user` is."""
    py_rules = ["--user", "pyload.", "--rules", str(HERE / "calib/py/rules.toml")]
    return {
        "jvm": [dict(
            name="jvm (perf fp + JIT map)", kind="perf", long=d / "jvm/long.perf.data",
            runs=sorted((d / "jvm").glob("run*.perf.data")),
            args=["--user", "shop.", "--jit-map-dir", str(d / "jvm")])],
        "native": [dict(
            name="native C (perf dwarf)", kind="perf", long=d / "native/long.perf.data",
            runs=sorted((d / "native").glob("run*.perf.data")),
            args=["--user", "calib_", "--binary-path", str(d / "native")])],
        "py": [dict(
            name=f"python (py-spy {fmt})", kind="files",
            segments=sorted((d / "py/long").glob(f"seg*.{ext}")),
            runs=sorted((d / "py").glob(f"run*.{ext}")), args=py_rules)
            for fmt, ext in (("raw", "raw.txt"), ("speedscope", "speedscope.json"))],
    }


def whose(args, ok=(0,)):
    r = subprocess.run([WHOSE, *args], capture_output=True, text=True)
    if r.returncode not in ok:
        raise RuntimeError(f"whose {' '.join(args)}: exit {r.returncode}\n{r.stderr[-2000:]}")
    return json.loads(r.stdout)


def user_share(files, args, extra=()):
    """One `whose report` of one input: the user owner row as a dict."""
    d = whose(["report", *map(str, files), *args, *extra, "--format", "json"])
    inp = d["inputs"][0]
    row = next((o for o in inp["owners"] if o["name"] == "user"), None)
    if row is None:
        raise RuntimeError(f"no user owner in {files}: owners "
                           + ", ".join(o["name"] for o in inp["owners"]))
    lo, hi = row["intervals"]["owner"]
    samples = inp.get("sampling", {}).get("samples") or inp.get("quality", {}).get("samples")
    return dict(w=row["owner"], t=inp["total"], share=100.0 * row["owner"] / inp["total"],
                lo=lo, hi=hi, method=row["intervals"].get("method", "?"), samples=samples,
                report=d)


def sd(xs):
    m = sum(xs) / len(xs)
    return math.sqrt(sum((x - m) ** 2 for x in xs) / (len(xs) - 1)) if len(xs) > 1 else float("nan")


def methods(rows):
    ms = sorted({r["method"] for r in rows})
    return "/".join(ms)


def single(p):
    """(a): segments of the long recording against the rest of it."""
    if p["kind"] == "perf":
        segs = []
        n = SEGMENTS_PERF
        for k in range(1, n + 1):
            segs.append(user_share([p["long"]], p["args"], ["--time", f"{100 / n}%/{k}"]))
        whole = user_share([p["long"]], p["args"])
        if sum(s["samples"] or 0 for s in segs) != whole["samples"]:
            print(f"  note: {p['name']}: segments hold {sum(s['samples'] or 0 for s in segs)} "
                  f"samples, the whole recording {whole['samples']}")
    else:
        segs = [user_share([f], p["args"]) for f in p["segments"]]
        whole = None
    W = sum(s["w"] for s in segs)
    T = sum(s["t"] for s in segs)
    hit = 0
    for s in segs:
        rest = 100.0 * (W - s["w"]) / (T - s["t"])
        s["rest"] = rest
        hit += s["lo"] <= rest <= s["hi"]
    shares = [s["share"] for s in segs]
    widths = [s["hi"] - s["lo"] for s in segs]
    spread = 2 * Z_975 * sd(shares)
    return dict(segs=segs, whole=whole, coverage=hit / len(segs), n=len(segs),
                width=sum(widths) / len(widths), spread=spread,
                ratio=(sum(widths) / len(widths)) / spread if spread > 0 else float("inf"),
                share=100.0 * W / T, sd=sd(shares))


def repeats(p):
    """(b): sets of 5 runs against the mean of all runs."""
    runs = [user_share([f], p["args"]) for f in p["runs"]]
    shares = [r["share"] for r in runs]
    target = sum(shares) / len(shares)
    combos = list(itertools.combinations(range(len(runs)), SET_SIZE))
    if len(combos) > SETS:
        combos = random.Random(SEED).sample(combos, SETS)

    def gate(c):
        d = whose(["gate", *(str(p["runs"][i]) for i in c), *p["args"], *GUARDS_OFF,
                   "--require", REQUIRE, "--format", "json"], ok=(0, 1, 3))
        req = d["requirements"][0]
        iv = req["interval"]
        return dict(lo=iv["low"], hi=iv["high"], method=req.get("method", "?"),
                    estimate=req.get("estimate"))

    with ThreadPoolExecutor(max_workers=max(1, JOBS)) as ex:
        sets = list(ex.map(gate, combos))
    hit = sum(s["lo"] <= target <= s["hi"] for s in sets)
    widths = [s["hi"] - s["lo"] for s in sets]
    ref = 2 * T_975_DF4 * sd(shares) / math.sqrt(SET_SIZE)
    return dict(runs=runs, sets=sets, target=target, sd=sd(shares),
                coverage=hit / len(sets) if sets else float("nan"), n=len(sets),
                width=sum(widths) / len(widths) if widths else float("nan"),
                ratio=(sum(widths) / len(widths)) / ref if ref > 0 and widths else float("nan"))


def t_cdf(x, df, steps=4000):
    """Student's t distribution function (Simpson's rule on the density; x >= 0)."""
    c = math.gamma((df + 1) / 2) / (math.sqrt(df * math.pi) * math.gamma(df / 2))
    f = lambda t: c * (1 + t * t / df) ** (-(df + 1) / 2)
    h = x / steps
    acc = f(0) + f(x) + sum((4 if i % 2 else 2) * f(i * h) for i in range(1, steps))
    return 0.5 + acc * h / 3


def ideal_coverage(segments, runs):
    """What an exact 95 % interval would score in these checks: (a) the rest carries its own
    noise (1/(S-1) of a segment's variance); (b) the set is part of the mean it is checked
    against, so the set's mean misses it by only sqrt((R-5)/R) of its own error."""
    za = Z_975 * math.sqrt((segments - 1) / segments)
    a = math.erf(za / math.sqrt(2))
    b = 2 * t_cdf(T_975_DF4 / math.sqrt((runs - SET_SIZE) / runs), SET_SIZE - 1) - 1 if runs > SET_SIZE else 1.0
    return a, b


def top_user_frames(report, k=3):
    fr = [f for f in report["inputs"][0].get("top_owner_frames", []) if f["owner"] == "user"]
    return ", ".join(f"{f['frame']} {f['share']:.1f}%" for f in fr[:k])


def main():
    global SEGMENTS_PERF
    d = Path(sys.argv[1] if len(sys.argv) > 1 else "/tmp/whose-calib").resolve()
    wanted = sys.argv[2:] or ["jvm", "native", "py"]
    # perf segments: SEGMENTS, else as many as the recording was made for (meta.txt), else 20
    SEGMENTS_PERF = int(os.environ.get("SEGMENTS") or next(
        (int(l.split(" in ")[1].split()[0]) for w in wanted if (d / w / "meta.txt").exists()
         for l in (d / w / "meta.txt").read_text().splitlines() if " segments" in l), 20))
    binary = Path(WHOSE)
    digest = hashlib.sha256(binary.read_bytes()).hexdigest()[:12]
    version = subprocess.run([WHOSE, "--version"], capture_output=True, text=True).stdout.strip()
    print(f"whose calibration (issue 54 item 7), {datetime.datetime.now().astimezone():%Y-%m-%d %H:%M %Z}")
    print(f"machine: nproc {os.cpu_count()}, {' '.join(os.uname()[i] for i in (0, 2, 4))}")
    print(f"binary:  {WHOSE} ({version}, sha256 {digest})")
    print(f"data:    {d}")
    for w in wanted:
        meta = d / w / "meta.txt"
        if meta.exists():
            print(f"  {w}: " + "; ".join(meta.read_text().splitlines()))
    table = []
    for w in wanted:
        for p in programs(d)[w]:
            t0 = time.time()
            a = single(p)
            t1 = time.time()
            b = repeats(p)
            t2 = time.time()
            table.append((p, a, b))
            segs, runs = a["segs"], b["runs"]
            print(f"\n{p['name']}  (analysis {t1 - t0:.0f} s + {t2 - t1:.0f} s)")
            rep = a["whole"]["report"] if a["whole"] else segs[0]["report"]
            print(f"  user = {' '.join(p['args'][:2])}; heaviest user owner frames: {top_user_frames(rep)}")
            ss = [s["samples"] or 0 for s in segs]
            print(f"  (a) long recording: user {a['share']:.2f}%, {sum(ss)} samples; {a['n']} segments "
                  f"of {min(ss)}-{max(ss)} samples; segment shares SD {a['sd']:.2f} pt; "
                  f"interval width mean {a['width']:.2f} pt vs 2*1.96*SD {a['spread']:.2f} pt; "
                  f"method {methods(segs)}")
            miss = [f"{i + 1}: {s['share']:.1f} [{s['lo']:.1f}-{s['hi']:.1f}] rest {s['rest']:.1f}"
                    for i, s in enumerate(segs) if not s["lo"] <= s["rest"] <= s["hi"]]
            print("      segment shares: " + " ".join(f"{s['share']:.1f}" for s in segs))
            if miss:
                print("      missed: " + "; ".join(miss))
            rs = [r["samples"] or 0 for r in runs]
            print(f"  (b) {len(runs)} runs of {min(rs)}-{max(rs)} samples: user shares "
                  + " ".join(f"{r['share']:.1f}" for r in runs)
                  + f"; mean {b['target']:.2f}%, SD {b['sd']:.2f} pt; single-run width mean "
                  f"{sum(r['hi'] - r['lo'] for r in runs) / len(runs):.2f} pt ({methods(runs)})")
            print(f"      {b['n']} sets of {SET_SIZE}: interval width mean {b['width']:.2f} pt "
                  f"(t over the runs would be {2 * T_975_DF4 * b['sd'] / math.sqrt(SET_SIZE):.2f}); "
                  f"method {methods(b['sets'])}")
    print()
    hdr = f"{'program':<28} {'user %':>7} | {'(a) coverage':>12} {'width ratio':>11} {'segments':>8} | {'(b) coverage':>12} {'width ratio':>11} {'sets':>5}"
    print(hdr)
    print("-" * len(hdr))
    for p, a, b in table:
        print(f"{p['name']:<28} {a['share']:>7.2f} | {100 * a['coverage']:>11.1f}% {a['ratio']:>11.2f} "
              f"{a['n']:>8} | {100 * b['coverage']:>11.1f}% {b['ratio']:>11.2f} {b['n']:>5}")
    print("targets (issue 54): coverage 85-99 %, (a) width ratio 0.7-1.6; (b) width ratio is the "
          "mean width over t(4)*SD(runs)/sqrt(5), for reference")
    for p, a, b in table[:1]:
        ia, ib = ideal_coverage(a["n"], len(b["runs"]))
        print(f"an exact 95 % interval would score (a) {100 * ia:.1f}% ({a['n']} segments: the rest has "
              f"its own noise) and (b) {100 * ib:.1f}% ({len(b['runs'])} runs: each set is part of the "
              f"mean it is checked against), width ratios 1.0; too wide shows in the width ratio only")


if __name__ == "__main__":
    main()
