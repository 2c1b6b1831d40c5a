#!/bin/bash
# stdin_ab.sh OLD NEW TREE FILE LINE: the stdin route's runs, old binary then new, each with its own cache
OLD=$1 NEW=$2 TREE=$3 F=$4 L=$5
for bin in $OLD $NEW; do
  c=$(mktemp -d); buf=$(mktemp --suffix=.py)
  t() { local s=$(date +%s%N); (cd $TREE && CAPGUARD_TIMING=1 $bin check --exit-zero --format json --cache-dir $c "$@" > /dev/null 2>/tmp/ab.err); local e=$(date +%s%N); printf "%-42s %6.2f s %s\n" "$label" "$(awk "BEGIN{print ($e-$s)/1e9}")" "$(grep -o 'cache [a-z]*' /tmp/ab.err | tail -1)"; }
  echo "## $bin"
  label="check . (fills the cache)"; t .
  label="stdin, the file as on disk"; t --stdin-filename $F - < $TREE/$F
  label="stdin, the file as on disk, again"; t --stdin-filename $F - < $TREE/$F
  sed "${L}s/\$/\n    _ab_edit = 2/" $TREE/$F > $buf
  label="stdin, unsaved code edit"; t --stdin-filename $F - < $buf
  label="stdin, the same buffer"; t --stdin-filename $F - < $buf
  sed -i "$((L + 1))s/^/    # typed note\n/" $buf
  label="stdin, a comment line typed"; t --stdin-filename $F - < $buf
  rm -rf $c $buf
done
