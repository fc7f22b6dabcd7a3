#!/bin/bash
# usage: run_cost.sh CONFIG LAYERS REPS   CONFIG: stock | 1 | 2 | 3 | D | E
set -e
C=$1; L=$2; R=$3
: "${SCRATCH:?the scratch directory (bin/, alts/, cost/)}" "${SITE:?site-packages of the torch 2.15.0 environment}" "${PY:?its python}"
case $C in
  stock) $SCRATCH/bin/prefix.sh 0;;
  1|2|3) $SCRATCH/bin/prefix.sh $C;;
  D|E) $SCRATCH/bin/prefix.sh 0; (cd $SITE && git apply $SCRATCH/alts/alt$C.patch);;
esac
OUT=$SCRATCH/cost/out-$C-L$L; rm -rf $OUT; mkdir -p $OUT
PYTHONHASHSEED=0 nice valgrind --tool=callgrind --instr-atstart=no --collect-atstart=no \
  --callgrind-out-file=$OUT/callgrind.out.%p $PY $SCRATCH/cost/export_cost.py \
  $SCRATCH/cost/helper.so $L $R > $OUT/stdout 2> $OUT/stderr || { tail $OUT/stderr; }
case $C in D|E) (cd $SITE && git apply -R $SCRATCH/alts/alt$C.patch);; esac
grep -h "^summary\|^totals\|^desc: Trigger" $OUT/callgrind.out.* | paste - - | sort
