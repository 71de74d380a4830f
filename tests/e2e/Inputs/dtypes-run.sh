#!/bin/sh
# dtypes-run.sh MODELC_RUN MODEL.so DTYPES.ir DIR [options]: runs every
# entry of Inputs/dtypes.ir on the inputs Inputs/dtypes.py wrote to DIR,
# checks every output against PyTorch/numpy (--expect) and the reference
# interpreter (--compare-reference); f64 outputs to 1e-12.
run=$1; so=$2; ir=$3; dir=$4; shift 4
for e in image unsigned8 unsigned_wide signed_small double movement shifts; do
  args=""
  for f in "$dir/${e}"_*.npy; do
    n=$(basename "$f" .npy); n=${n#"${e}"_}
    case $n in
      output*) args="$args --expect $n=$f" ;;
      *) args="$args --input $n=$f" ;;
    esac
  done
  tol=""
  [ "$e" = double ] && tol="--rtol 1e-12 --atol 1e-12"
  # shellcheck disable=SC2086
  "$run" "$so" --entry "$e" $args $tol --compare-reference "$ir" "$@" ||
    { echo "FAILED: $e"; exit 1; }
done
