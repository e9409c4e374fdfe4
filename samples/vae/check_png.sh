#!/bin/sh
# check_png.sh FILE WIDTH HEIGHT: FILE starts with PNG's signature and its IHDR chunk says
# WIDTH x HEIGHT (big-endian u32s at bytes 16..23). Prints "png: WxH"; exit 1 otherwise.
f=$1
want_w=$2
want_h=$3
[ -f "$f" ] || { echo "check_png: no $f"; exit 1; }
sig=$(od -An -tx1 -N8 "$f" | tr -d ' \n')
[ "$sig" = "89504e470d0a1a0a" ] || { echo "check_png: $f is not a PNG ($sig)"; exit 1; }
set -- $(od -An -tu1 -j16 -N8 "$f")
w=$(( ($1 << 24) + ($2 << 16) + ($3 << 8) + $4 ))
h=$(( ($5 << 24) + ($6 << 16) + ($7 << 8) + $8 ))
echo "png: ${w}x${h}"
[ "$w" = "$want_w" ] && [ "$h" = "$want_h" ] || { echo "check_png: expected ${want_w}x${want_h}"; exit 1; }
