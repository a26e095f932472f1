#!/usr/bin/env bash
# Seeds each fuzz target's corpus (fuzz/corpus/TARGET, git-ignored) from fixtures/: small
# files whole, and small valid cuts of the large ones, so nothing big is committed and the
# fuzzer starts from inputs that reach deep into each reader. Idempotent; run from anywhere.
set -euo pipefail
cd "$(dirname "$0")"
fx=../fixtures
c=corpus
mkdir -p $c/{folded,perf_script,pprof_raw,pprof_gzip,perf_data,speedscope,speedscope_evented,cpuprofile,rules,gate_require,jfr}

# folded: the small fixtures whole, the first lines of the large one (py-spy raw shape too)
cp $fx/folded/flame-mini.folded $fx/folded/py-app.folded $fx/repeats/churn-1.folded $c/folded/
head -c 4000 $fx/folded/seed-ktor-alloc.txt | sed '$d' > $c/folded/ktor-head.folded
printf 'main (app.py:10);work (app.py:20) 5\nmain (app.py:10) 1\n' > $c/folded/pyspy.txt
# rbspy's collapsed Ruby frames (`name - file.rb:LINE`) and a BEAM JIT map's names (issue 57)
zcat $fx/eco57/rbbatch.rbspy-collapsed.txt.gz | sed -n '1,20p' > $c/folded/rbspy.folded
printf '%s\n' "\$erts_beamasm:normal_exit/0;\$'Elixir.Shop.Orders':total/2-CodeInfoPrologue;\$global::call_light_bif_shared 3" \
    "\$proc_lib:init_p_do_apply/3;\$inventory_calc:run/3;\$Elixir.Shop.Risk::codeHeader 2" > $c/folded/beam.folded

# speedscope: the py-spy recording whole (sampled), and a small evented profile
cp $fx/speedscope/shares.speedscope.json $c/speedscope/
printf '%s' '{"$schema":"https://www.speedscope.app/file-format-schema.json","shared":{"frames":[{"name":"main"},{"name":"work","file":"a.c","line":3}]},"profiles":[{"type":"evented","name":"t1","unit":"milliseconds","startValue":0,"endValue":10,"events":[{"type":"O","frame":0,"at":0},{"type":"O","frame":1,"at":2},{"type":"C","frame":1,"at":7},{"type":"C","frame":0,"at":10}]}]}' > $c/speedscope/evented.json

# cpuprofile: the node --cpu-prof recording whole, and a tree of three nodes
cp $fx/node/app.cpuprofile $c/cpuprofile/
printf '%s' '{"nodes":[{"id":1,"callFrame":{"functionName":"(root)","scriptId":"0","url":"","lineNumber":-1,"columnNumber":-1},"hitCount":0,"children":[2,3]},{"id":2,"callFrame":{"functionName":"main","scriptId":"1","url":"file:///app/a.js","lineNumber":3,"columnNumber":1},"hitCount":2},{"id":3,"callFrame":{"functionName":"(garbage collector)","scriptId":"0","url":"","lineNumber":-1,"columnNumber":-1},"hitCount":1}],"startTime":0,"endTime":40,"samples":[2,3,2],"timeDeltas":[5,10,-2]}' > $c/cpuprofile/small.cpuprofile

# speedscope_evented: a byte an event (bits 4-6 the time step, bit 7 close, bits 0-3 the
# frame): open 0, 1, 2 one unit apart, close them, and a run of opens nested 64 deep
printf '\000\021\022\222\221\220' > $c/speedscope_evented/nested.bin
python3 -c 'import sys; sys.stdout.buffer.write(bytes([0x10 | (i % 16) for i in range(64)]))' \
    > $c/speedscope_evented/deep.bin

# perf script: the first samples (blank-line separated) of each dump
for f in c-malloc.perf c-malloc.perf-dwarf rust-native.perf-fp jvm-shop.perf; do
    zcat $fx/perf/$f.perf-script.txt.gz | awk -v RS= -v ORS='\n\n' 'NR <= 12' \
        > $c/perf_script/$f.txt
done
# a BEAM recorded with +JPperf true: Erlang frames from its JIT map (issue 57)
zcat $fx/eco57/exsvc.perf-script.txt.gz | awk -v RS= -v ORS='\n\n' 'NR <= 12' \
    > $c/perf_script/exsvc.txt

# pprof: the Go profiles as raw protobuf; for pprof_gzip the first byte picks the mode
# (odd: the rest is a gzip stream as on disk; even: a protobuf the target gzips)
for f in allocs heap cpu; do
    zcat $fx/pprof/$f.pb.gz > $c/pprof_raw/$f.pb
    { printf '\001'; cat $fx/pprof/$f.pb.gz; } > $c/pprof_gzip/$f.gz-stream
    { printf '\000'; cat $c/pprof_raw/$f.pb; } > $c/pprof_gzip/$f.protobuf
done

# perf.data: cuts at a record boundary, the header's data size and the feature section
# table after the data moved to match, so each seed is a valid recording of a few samples
cut_perf_data() { # IN OUT BYTES_OF_DATA
    python3 - "$@" <<'PY'
import struct, sys
src, dst, want = sys.argv[1], sys.argv[2], int(sys.argv[3])
b = open(src, 'rb').read()
assert b[:8] == b'PERFILE2'
d_off, d_size = struct.unpack_from('<QQ', b, 40)
n, pos = 0, d_off
while pos < d_off + d_size:
    size = struct.unpack_from('<H', b, pos + 6)[0]
    if pos + size - d_off > want:
        break
    pos += size
new_size = pos - d_off
delta = d_size - new_size
feat = b[d_off + d_size:]
nfeat = bin(int.from_bytes(b[72:104], 'little')).count('1')
table = bytearray(feat[:16 * nfeat])
for i in range(nfeat):
    off, size = struct.unpack_from('<QQ', table, 16 * i)
    if off >= d_off + d_size:
        struct.pack_into('<Q', table, 16 * i, off - delta)
head = bytearray(b[:d_off + new_size])
struct.pack_into('<Q', head, 48, new_size)
open(dst, 'wb').write(bytes(head) + bytes(table) + feat[16 * nfeat:])
PY
}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
zcat $fx/perf/c-malloc.perf-dwarf.data.gz > "$tmp/dwarf.data"
cut_perf_data "$tmp/dwarf.data" $c/perf_data/c-malloc-dwarf.data 40000
cut_perf_data $fx/perf/c-malloc.perf.data $c/perf_data/c-malloc-fp.data 16000
cut_perf_data $fx/perf/rust-native.perf-fp.data $c/perf_data/rust-native-fp.data 16000
zcat $fx/perf/c-malloc.perf.pipe.data.gz > "$tmp/pipe.data"
head -c 24000 "$tmp/pipe.data" > $c/perf_data/c-malloc-pipe.data

# rules: the fixtures' rule files and the shipped presets
cp $fx/rules/*.toml $fx/rules-extra/*.toml ../rules/*.toml $c/rules/

# gate --require: one expression per file, every form of the grammar
i=0
for r in 'user.owner >= 25%' 'category:allocator.self <= 10%' 'io.ktor.anywhere < 50%' \
         'user.owner[alloc_space] >= 25%' 'owner:kotlin-stdlib.self>1' 'a.b.self[m.x] <= 0.5%'; do
    printf '%s' "$r" > $c/gate_require/$i.txt
    i=$((i + 1))
done
du -sh $c/* >&2

# jfr: the smallest recordings whole (decompressed: the target reads the chunk bytes), and a
# cut that ends inside the first chunk
zcat $fx/jfr/jdk17-deep.jfr.gz > $c/jfr/jdk17-deep.jfr
zcat $fx/jfr/jdk25-cpu.jfr.gz > $c/jfr/jdk25-cpu.jfr
head -c 70000 $c/jfr/jdk17-deep.jfr > $c/jfr/cut.jfr
