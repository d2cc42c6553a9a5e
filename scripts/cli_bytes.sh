#!/bin/bash
# usage: scripts/cli_bytes.sh BINARY OUTDIR -- runs a fixed set of 37 commands (horizon, construct,
# compile, run on examples/*.json, rotations, compare, rotate, table horizon) and saves stdout,
# stderr and the exit code of each into OUTDIR, so that a refactoring can be checked to change
# no byte: run it with the binary before and after, then `diff -r BEFORE AFTER` (must be empty).
# The binary is copied to a fixed name so that usage lines match; the provenance commit inside
# written model specs is replaced by X.
B0=$(realpath "$1"); O=$(realpath -m "$2"); T=$(mktemp -d); B=$T/ropesim; cp "$B0" "$B"; mkdir -p "$O"; W=$(mktemp -d); EX=$(cd "$(dirname "$0")/.." && pwd)/examples
n=0
run() { n=$((n+1)); ( cd "$W" && timeout 300 "$B" "$@" >"$O/$n.out" 2>"$O/$n.err"; echo $? >"$O/$n.rc" ); echo "$*" >"$O/$n.cmd"; }
run horizon --format fp16 --g 1 --k 1 --C 8 --quiet
run horizon --format fp16 --g 1 --k 2 --C auto --quiet
run horizon --format fp32 --g 1 --k 1 --C 1000 --quiet
run horizon --format fp32 --g 0.5 --k 3 --C 100 --realization r2 --quiet --json
run horizon --format fp64 --g 1 --k 1 --C 10 --quiet
run horizon --format fp16 --C 70000 --quiet
run horizon --format fp16 --C 1e400 --quiet
run horizon --format fp16 --C 8 --engine mpfr --quiet
run horizon --format bf16 --C 16 --engine fast --summation pairwise --quiet
run horizon --format fp16 --C 8 --rounding upward --quiet
run horizon --format fp8e4m3 --C 8 --quiet
run horizon --format fp8e4m3 --C 500 --quiet
run horizon --format fp16 --C 8 --realization r3 --quiet
run horizon --format fp16 --C 4 --schedule periodic:m=8,12 --quiet
run construct offset --format fp16 --g 1 --k 2 --C 8 --json
run construct offset --format fp16 --C 70000
run construct offset --format bf16 --C auto --engine mpfr -o offset.json
run construct mod --m 3 --r 1 --format fp16 --json
run construct mod --m 5 --r 2 --format fp32 --engine fast -o mod.json
run run mod.json --input aaaaaaa --json
run run offset.json --input abaab --trace
run rotations --schedule conventional:base=10000,dim=16 --format fp16 --positions 4096
run rotations --schedule conventional:base=10000,dim=32 --format fp16 --realization r2 --position 1857
run rotations --schedule llama2-7b --realization hf --format bf16 --positions 2048 --engine mpfr
run rotations --schedule periodic:m=8,12 --realization r3 --format fp8e4m3 --positions 1024 --json
run run $EX/mixed_fp16_overflow.json --input ab --json
run run $EX/mixed_fp8_promoted.json --input abba --trace
run run $EX/mod_m2_r1_fp16.json --input aaa --json
run run $EX/offset_g1_k2_fp16.json --input abaab --trace --engine mpfr
run compile 'P(a & !P true)' --format fp16 -o c1.json
run run c1.json --input ab --json
run compile 'mod(2,1) & !P(mod(2,1) & !a | mod(2,0) & !b)' --format fp32 --explain -o c2.json
run run c2.json --input abab --trace
run table horizon --formats fp8e5m2,fp16 --k 1,2 --C auto --quiet
run table horizon --formats bf16,fp32 --k 1 --C 8,1e400 --quiet
run compare --schedule conventional:base=10000,dim=16 --realization r2 --format fp16 --positions 512
run rotate --schedule conventional:base=10000,dim=8 --realization r2 --format fp16 --seed 3 --positions 100,1000,5000 --offset 7 --engine mpfr
# the provenance names the source commit (and -dirty): the only intended difference
for f in offset.json mod.json c1.json c2.json; do [ -f "$W/$f" ] && sed -E 's/"commit": "[0-9a-f]+(-dirty)?"/"commit": "X"/' "$W/$f" > "$O/file_$f"; done
rm -rf "$W" "$T"
