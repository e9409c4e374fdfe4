#!/bin/sh
# check_quick.sh RESNET ARGS...: runs the resnet sample with ARGS (at least 2 epochs) and
# checks what a quick run can show: the summary's parameter counts, one final progress line
# per epoch, the training loss falling from the first epoch to the last, and a test accuracy
# above chance (0.1 for ten classes; the bar is 0.2). Exit 0 when all hold, else 1 saying why.
bin=$1
shift
out=out_resnet_quick.txt
"$bin" "$@" >"$out" 2>&1
rc=$?
# The progress bar rewrites its line with \r: keep each epoch's last state.
tr '\r' '\n' <"$out"
[ $rc -eq 0 ] || { echo "check_quick: resnet exited $rc"; exit 1; }
grep -q 'Total params: 273,754' "$out" || { echo "check_quick: not 273,754 params"; exit 1; }
grep -q 'Non-trainable params: 1,568' "$out" || { echo "check_quick: not 1,568 fixed"; exit 1; }
# Final progress lines: "N/N [=====...] - ... - loss: L - accuracy: A - val_loss: ...".
losses=$(tr '\r' '\n' <"$out" | grep -E '^ *([0-9]+)/\1 \[=+\]' | sed -n 's/.* - loss: \([0-9.]*\) .*/\1/p')
first=$(echo "$losses" | head -n 1)
last=$(echo "$losses" | tail -n 1)
n=$(echo "$losses" | grep -c .)
[ "$n" -ge 2 ] || { echo "check_quick: expected >= 2 epoch lines, found $n"; exit 1; }
acc=$(sed -n 's/^test_accuracy: \([0-9.]*\)$/\1/p' "$out")
[ -n "$acc" ] || { echo "check_quick: no test_accuracy line"; exit 1; }
echo "check_quick: loss $first -> $last over $n epochs; test_accuracy $acc"
awk -v f="$first" -v l="$last" -v a="$acc" 'BEGIN { exit !(l < f && a > 0.2) }' ||
  { echo "check_quick: expected the loss to fall and test_accuracy > 0.2"; exit 1; }
