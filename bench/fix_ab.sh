#!/bin/bash
# fix_ab.sh OLD NEW TREE FILE: capguard fix --unsafe-fixes FILE after a check that filled the cache, old binary then new
OLD=$1 NEW=$2 TREE=$3 F=$4
for bin in $OLD $NEW; do
  c=$(mktemp -d)
  (cd $TREE && CAPGUARD_CACHE_DIR=$c $bin check . > /dev/null 2>&1)
  for i in 1 2; do
    s=$(date +%s%N); (cd $TREE && CAPGUARD_CACHE_DIR=$c CAPGUARD_TIMING=1 $bin fix --unsafe-fixes $F > /tmp/fix-$i.diff 2>/tmp/fx.err); e=$(date +%s%N)
    printf "%-14s fix run %d %6.2f s  diff %s lines; %s\n" "$(basename $bin)" $i "$(awk "BEGIN{print ($e-$s)/1e9}")" "$(wc -l < /tmp/fix-$i.diff)" "$(grep -o 'syntax trees: [0-9]* read' /tmp/fx.err | tr '\n' ' ')"
  done
  rm -rf $c
done
