#!/bin/bash
# stdin_eq.sh BIN TREE FILE LINE: the stdin route's cached runs against --no-cache, byte for byte (json)
BIN=$1 TREE=$2 F=$3 L=$4
c=$(mktemp -d); b=$(mktemp --suffix=.py)
cmpr() { (cd $TREE && CAPGUARD_TIMING=1 $BIN check --exit-zero --format json --cache-dir $c --stdin-filename $F - < $1 > /tmp/eq1.json 2>/tmp/eq.err; $BIN check --exit-zero --no-cache --format json --stdin-filename $F - < $1 > /tmp/eq2.json 2>/dev/null); st=$(grep -o 'cache [a-z]*' /tmp/eq.err | tail -1); if cmp -s /tmp/eq1.json /tmp/eq2.json; then echo "$2: same ($st, $(grep -c '"rule"' /tmp/eq1.json) findings)"; else echo "$2: DIFFERENT ($st)"; fi; }
(cd $TREE && $BIN check --exit-zero --cache-dir $c . > /dev/null 2>&1)
cmpr $TREE/$F "as on disk"
cmpr $TREE/$F "as on disk again"
sed "${L}s/\$/\n    _eq_edit = 2/" $TREE/$F > $b; cmpr $b "code edit"
cmpr $b "same buffer"
sed -i "$((L + 1))s/^/    # typed note\n/" $b; cmpr $b "comment typed"
sed -i "$((L + 1))s/^/\n\n/" $b; cmpr $b "blank lines typed"
sed -i "s/^import torch$/import torch\nimport os/" $b; cmpr $b "an import added"
cmpr $TREE/$F "back to the disk"
rm -rf $c $b
