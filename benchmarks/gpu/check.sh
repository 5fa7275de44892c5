#!/usr/bin/env bash
# The GPU checks of issue 32 as one device call, most important first, within DEADLINE seconds.
#
# Here, before the call (the device machine's copy of the tree has no git history):
#   mkdir -p .gpu/base_261cf7c && git archive 261cf7c | tar -x -C .gpu/base_261cf7c
#   grep -qx '/.gpu/' .git/info/exclude || echo '/.gpu/' >> .git/info/exclude
# The call: `bash benchmarks/gpu/check.sh` with carry [".gpu"] and a timeout of about 590 s.
# Results land in $OUT (or ./gpu_check_out): versions.txt, graphs/results.json (the study at
# B = 10240 with and without command buffers, each twice), ab.json (against 261cf7c, B = 10240)
# and census/census.json (kernels per loop iteration); each step's log beside them.
set -u
OUT=${OUT:-gpu_check_out}
DEADLINE=${DEADLINE:-560}
mkdir -p "$OUT"
START=$(date +%s)
left() { echo $(( DEADLINE - ($(date +%s) - START) )); }
step() {  # step NAME MAX_SECONDS COMMAND...: run it under the smaller of its limit and the time left
  local name=$1 max=$2; shift 2
  local t; t=$(left); (( t < max )) && max=$t
  if (( max < 30 )); then echo "$name: skipped, $t s left" | tee -a "$OUT/steps.txt"; return; fi
  local t0; t0=$(date +%s)
  timeout "$max" "$@" > "$OUT/$name.log" 2>&1
  echo "$name: exit $?, $(( $(date +%s) - t0 )) s (limit $max s)" | tee -a "$OUT/steps.txt"
}
{ nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv; python3 -c "import jax, jaxlib;
print('jax', jax.__version__, 'jaxlib', jaxlib.__version__, jax.devices())"; } > "$OUT/versions.txt" 2>&1
step graphs 330 python3 benchmarks/gpu_graphs.py --out "$OUT/graphs" --timeout 90 \
  --only "contact 10240" "contact 10240 graphs" --again 1
if [ -d .gpu/base_261cf7c ]; then
  step ab 150 python3 benchmarks/ab_commits.py --base-tree .gpu/base_261cf7c --batch 10240 --rounds 1 \
    --repeats 1 --json "$OUT/ab.json"
else
  echo "ab: skipped, no .gpu/base_261cf7c (see the header)" | tee -a "$OUT/steps.txt"
fi
step census 120 python3 benchmarks/gpu_graphs.py --out "$OUT/census" --census --timeout 60

