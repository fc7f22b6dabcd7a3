#!/bin/bash
# usage: run_cost.sh CONFIG LAYERS REPS   CONFIG: stock | 1 | 2 | 3 | D | E
set -e
C=$1; L=$2; R=$3
SITE=/work/venv215/lib/python3.11/site-packages
case $C in
  stock) /work/issue21/bin/prefix.sh 0;;
  1|2|3) /work/issue21/bin/prefix.sh $C;;
  D|E) /work/issue21/bin/prefix.sh 0; (cd $SITE && git apply /work/issue21/alts/alt$C.patch);;
esac
OUT=/work/issue21/cost/out-$C-L$L; rm -rf $OUT; mkdir -p $OUT
PYTHONHASHSEED=0 nice valgrind --tool=callgrind --instr-atstart=no --collect-atstart=no \
  --callgrind-out-file=$OUT/callgrind.out.%p /work/venv215/bin/python /work/issue21/cost/export_cost.py \
  /work/issue21/cost/helper.so $L $R > $OUT/stdout 2> $OUT/stderr || { tail $OUT/stderr; }
case $C in D|E) (cd $SITE && git apply -R /work/issue21/alts/alt$C.patch);; esac
grep -h "^summary\|^totals\|^desc: Trigger" $OUT/callgrind.out.* | paste - - | sort
