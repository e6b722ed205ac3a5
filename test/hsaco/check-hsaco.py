#!/usr/bin/env python3
"""AMDGPU code objects from `ke-opt compile --target rocm:<chip>`, checked
without an AMD GPU.

For every workload file and chip (gfx90a, gfx942 by default): the module is
compiled with default schedules to HSACO (one code object per kernel group:
OUT, or OUT's stem .<i>.hsaco for several groups); every code object must
be an AMDGPU ELF for the chip whose kernels llvm-objdump disassembles, and
the code object notes (llvm-readelf --notes, the amdhsa.kernels metadata)
must show each kernel with 64-wide wavefronts and static LDS
(.group_segment_fixed_size) within the chip's 64 KiB.

Usage: check-hsaco.py KE_OPT WORKLOAD.mlir... [--chips gfx90a,gfx942]
Exit code 0 when every workload passes; a table on stdout.
"""
import argparse
import concurrent.futures
import glob
import os
import re
import subprocess
import sys
import tempfile

LDS_LIMIT = 64 * 1024


def run(cmd):
    return subprocess.run(cmd, capture_output=True, text=True, timeout=300)


def check(workload, chip, args, work):
    base = os.path.splitext(os.path.basename(workload))[0]
    row = {"workload": base, "chip": chip, "status": "FAIL", "objects": 0,
           "kernels": 0, "lds": 0, "vgprs": 0, "why": ""}
    d = os.path.join(work, chip, base)
    os.makedirs(d, exist_ok=True)
    out = os.path.join(d, "out.hsaco")
    r = run([args.ke_opt, "compile", workload, "--target", f"rocm:{chip}",
             "-o", out])
    if r.returncode != 0:
        errors = [l for l in r.stderr.splitlines() if "error" in l]
        row["why"] = "compile: " + (errors or [""])[0][:160]
        return row
    objects = sorted(glob.glob(os.path.join(d, "out.*.hsaco"))) or [out]
    row["objects"] = len(objects)
    for obj in objects:
        dis = run([args.objdump, "-d", obj])
        if dis.returncode != 0 or "file format elf64-amdgpu" not in dis.stdout:
            row["why"] = f"{os.path.basename(obj)}: not an AMDGPU ELF"
            return row
        disassembled = re.findall(r"^[0-9a-f]+ <([^>]+)>:", dis.stdout, re.M)
        notes = run([args.readelf, "--notes", obj]).stdout
        if f"amdgcn-amd-amdhsa--{chip}" not in notes:
            row["why"] = f"{os.path.basename(obj)}: not for {chip}"
            return row
        names = re.findall(r"^\s+\.name:\s+(\S+)", notes, re.M)
        lds = [int(v) for v in re.findall(
            r"\.group_segment_fixed_size:\s+(\d+)", notes)]
        waves = re.findall(r"\.wavefront_size:\s+(\d+)", notes)
        vgprs = [int(v) for v in re.findall(r"\.vgpr_count:\s+(\d+)", notes)]
        if not names or len(lds) != len(names):
            row["why"] = f"{os.path.basename(obj)}: no kernel metadata"
            return row
        missing = [n for n in names if n not in disassembled]
        if missing:
            row["why"] = f"kernel {missing[0]} not disassembled"
            return row
        if any(w != "64" for w in waves):
            row["why"] = f"wavefront size {waves}"
            return row
        row["kernels"] += len(names)
        row["lds"] = max([row["lds"]] + lds)
        row["vgprs"] = max([row["vgprs"]] + vgprs)
    if row["lds"] > LDS_LIMIT:
        row["why"] = f"LDS {row['lds']} bytes over {LDS_LIMIT}"
        return row
    row["status"] = "ok"
    return row


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("ke_opt")
    p.add_argument("workloads", nargs="+")
    p.add_argument("--chips", default="gfx90a,gfx942")
    p.add_argument("--work", help="keep the files here")
    p.add_argument("--jobs", type=int, default=2)
    p.add_argument("--objdump", default="llvm-objdump-22")
    p.add_argument("--readelf", default="llvm-readelf-22")
    args = p.parse_args()
    jobs = [(w, c) for c in args.chips.split(",")
            for w in sorted(args.workloads)]
    with tempfile.TemporaryDirectory() as tmp:
        work = args.work or tmp
        with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
            rows = list(pool.map(lambda j: check(j[0], j[1], args, work),
                                 jobs))
    print(f"{'workload':24} {'chip':7} {'status':6} {'objects':>7} "
          f"{'kernels':>7} {'LDS B':>6} {'VGPRs':>5}  why")
    for r in rows:
        print(f"{r['workload']:24} {r['chip']:7} {r['status']:6} "
              f"{r['objects']:>7} {r['kernels']:>7} {r['lds']:>6} "
              f"{r['vgprs']:>5}  {r['why']}")
    failed = [r for r in rows if r["status"] != "ok"]
    print(f"{len(rows) - len(failed)}/{len(rows)} compiled and checked")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
