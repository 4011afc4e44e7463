#!/bin/bash
# One prepared run on the lent GPU machine (NVIDIA H200, NVIDIA's OpenCL driver, torch 2.11 with
# Python 3.12, no package registry): in about 5 minutes it
#   1. unpacks the OpenCL headers, the ICD loader, CLBlast, VkFFT's header and clinfo from the
#      .deb files in DEB_DIR (made here by tools/gpu_debs.sh) into a private prefix (never /),
#   2. registers NVIDIA's OpenCL library with that loader (OCL_ICD_VENDORS) and lists the devices,
#   3. configures and builds the extension against the machine's torch,
#   4. runs a test subset on the NVIDIA device (TORCH_OCL_DEVICES picks it),
#   5. runs `python -m torch_ocl bench` (limits, ops, models) and benchmarks/runtime.py,
#   6. compares with CUDA PyTorch on the same GPU (benchmarks/cuda.py: bandwidth ops, fp32 GEMM,
#      model steps),
# writing everything under $OUT (at most 8 files come back from there).
#
#   tools/gpu_debs.sh                      # here, once: downloads the .deb files into .gpu-debs
#   run: bash tools/gpu_check.sh .gpu-debs # there, from the repository root; carry [".gpu-debs"]
#
# Without an NVIDIA OpenCL device (e.g. on a development machine with PoCL) it says so and runs the
# same steps on whatever OpenCL device the loader finds, so every step can be tried without a GPU;
# without CUDA the comparison prints only our column. Variables: PYTHON (default python3),
# GPU_CHECK_PREFIX (unpack prefix, default /tmp/gpu-check), GPU_CHECK_QUICK=1 (small sizes),
# GPU_CHECK_STEPS (default "build tests bench compare"), GPU_CHECK_TARGETS (ninja targets, default
# "_C runtime_bench"), GPU_CHECK_PKG (without the build step: a folder holding a built torch_ocl),
# GPU_CHECK_BUDGET (seconds for the whole run, default 480: every step's time limit shrinks to
# leave the later steps theirs), JOBS (default: all cores).
set -u
DEBS=$(cd "${1:-.gpu-debs}" 2>/dev/null && pwd) || { echo "gpu_check: no folder ${1:-.gpu-debs}" >&2; exit 2; }
REPO=$(cd "$(dirname "$0")/.." && pwd)
OUT=${OUT:-/tmp/gpu-check-out}
PY=${PYTHON:-python3}
PREFIX=${GPU_CHECK_PREFIX:-/tmp/gpu-check}
STEPS=${GPU_CHECK_STEPS:-build tests bench compare}
QUICK=${GPU_CHECK_QUICK:-0}
JOBS=${JOBS:-$(nproc)}
TARGETS=${GPU_CHECK_TARGETS:-_C runtime_bench}
BUDGET=${GPU_CHECK_BUDGET:-480}
mkdir -p "$OUT" "$PREFIX"
LOG=$OUT/gpu_check.log
exec > >(tee "$LOG") 2>&1
export PYTHONUNBUFFERED=1
T0=$(date +%s)
step() { echo; echo "=== $* ($(( $(date +%s) - T0 )) s)"; }
has() { case " $STEPS " in *" $1 "*) return 0 ;; *) return 1 ;; esac; }
# limit CAP RESERVE: seconds for a step, at most CAP, leaving RESERVE for the steps after it.
limit() {
  local left=$(( T0 + BUDGET - $(date +%s) - $2 ))
  [ "$left" -lt "$1" ] || left=$1
  [ "$left" -ge 15 ] || left=15
  echo "$left"
}
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1

step "machine"
date -u
uname -a
nproc
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>&1 | head -3
$PY -c "import sys, torch; print('python', sys.version.split()[0], sys.executable); print('torch', torch.__version__, 'cuda', torch.version.cuda, 'available', torch.cuda.is_available())"
git -C "$REPO" log -1 --format='torch-ocl %h %s' 2>/dev/null || echo "torch-ocl (no git metadata)"

step "unpack .deb files from $DEBS into $PREFIX"
n=0
for f in "$DEBS"/*.deb; do
  [ -e "$f" ] || continue
  dpkg-deb -x "$f" "$PREFIX" && n=$((n + 1)) && echo "  $(basename "$f")"
done
[ "$n" -gt 0 ] || { echo "gpu_check: no .deb files in $DEBS (run tools/gpu_debs.sh here first)"; exit 2; }
LIB=$PREFIX/usr/lib/x86_64-linux-gnu
export LD_LIBRARY_PATH=$LIB${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export PATH=$PREFIX/usr/bin:$PATH

step "OpenCL ICD: NVIDIA's library"
VENDORS=$PREFIX/vendors
mkdir -p "$VENDORS"
rm -f "$VENDORS"/*.icd
for icd in /etc/OpenCL/vendors/*.icd; do [ -e "$icd" ] && cp "$icd" "$VENDORS/"; done
NV=""
for d in /usr/local/nvidia/lib64 /usr/local/nvidia/lib /usr/lib/x86_64-linux-gnu /usr/lib64 /usr/local/cuda/lib64; do
  if [ -e "$d/libnvidia-opencl.so.1" ]; then NV=$d/libnvidia-opencl.so.1; break; fi
done
[ -n "$NV" ] || NV=$(ldconfig -p 2>/dev/null | awk '/libnvidia-opencl.so.1/ {print $NF; exit}')
if [ -n "$NV" ]; then
  echo "$NV" > "$VENDORS/nvidia.icd"
  export LD_LIBRARY_PATH=$LD_LIBRARY_PATH:$(dirname "$NV")
  echo "  NVIDIA OpenCL library: $NV"
else
  echo "  no libnvidia-opencl.so.1 found: only the loader's other vendors (if any) are available"
fi
ls "$VENDORS"
export OCL_ICD_VENDORS=$VENDORS
clinfo -l 2>&1 | head -20

if has build; then
  step "configure and build against $($PY -c 'import torch; print(torch.__version__)')"
  BUILD=$PREFIX/build
  LAUNCHER=()
  command -v ccache >/dev/null && LAUNCHER=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
  cmake -S "$REPO" -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DPython_EXECUTABLE="$(command -v "$PY")" -DTORCH_OCL_BUILD_TESTS=OFF \
    -DCMAKE_PREFIX_PATH="$PREFIX/usr;$LIB/cmake" \
    -DOpenCL_INCLUDE_DIR="$PREFIX/usr/include" -DOpenCL_LIBRARY="$LIB/libOpenCL.so" \
    -DVKFFT_INCLUDE_DIR="$PREFIX/usr/include" "${LAUNCHER[@]}" > "$OUT/build.log" 2>&1
  rc=$?
  if [ $rc -eq 0 ]; then
    timeout "$(limit 300 240)" ninja -C "$BUILD" -j"$JOBS" $TARGETS >> "$OUT/build.log" 2>&1
    rc=$?
  fi
  tail -5 "$OUT/build.log"
  if [ $rc -ne 0 ]; then
    echo "gpu_check: build failed (exit $rc); the errors:"
    grep -E "error|Error|CMake Error" "$OUT/build.log" | head -30
    exit 1
  fi
  # A private copy of the Python package with the new extension (the tree's own may hold a link
  # to a development build of another Python).
  PKG=$PREFIX/pkg
  rm -rf "$PKG" && mkdir -p "$PKG"
  cp -r "$REPO/src/torch_ocl" "$PKG/"
  find "$PKG/torch_ocl" -maxdepth 1 -name '_C*.so' -delete
  if ls "$BUILD"/_C*.so >/dev/null 2>&1; then
    cp "$BUILD"/_C*.so "$PKG/torch_ocl/"
    echo "  built $(ls "$PKG"/torch_ocl/_C*.so)"
  else
    echo "  built $TARGETS (no _C among them): the steps below need GPU_CHECK_PKG"
    PKG=""
  fi
fi
PKG=${GPU_CHECK_PKG:-${PKG:-$PREFIX/pkg}}
# The package is not pip-installed there: a dist-info beside it declares the same torch.backends
# entry point as pyproject.toml, so `import torch` autoloads it (tests start subprocesses that
# rely on that).
mkdir -p "$PREFIX/meta/torch_ocl-0.0.0.dist-info"
printf 'Metadata-Version: 2.1\nName: torch_ocl\nVersion: 0.0.0\n' \
  > "$PREFIX/meta/torch_ocl-0.0.0.dist-info/METADATA"
printf '[torch.backends]\ntorch_ocl = torch_ocl:_autoload\n' \
  > "$PREFIX/meta/torch_ocl-0.0.0.dist-info/entry_points.txt"
export PYTHONPATH=$PKG:$PREFIX/meta:$REPO${PYTHONPATH:+:$PYTHONPATH}

step "devices"
SEL=$($PY - <<'EOF'
import torch_ocl
devs = torch_ocl._C.all_devices()
for d in devs:
    print(f"  [{d['index']}] {d['platform']}: {d['name']} ({d['type']})", file=__import__('sys').stderr)
nv = [d["index"] for d in devs if "nvidia" in (d["platform"] + d["name"]).lower()]
print(nv[0] if nv else "")
EOF
)
if [ -n "$SEL" ]; then
  export TORCH_OCL_DEVICES=$SEL
  echo "  TORCH_OCL_DEVICES=$SEL (the NVIDIA device)"
else
  unset TORCH_OCL_DEVICES
  echo "  NO NVIDIA OpenCL DEVICE: the steps below run on the device the loader gives first (a"
  echo "  CPU driver here?); their figures say nothing about the GPU"
  QUICK=1
fi
timeout 60 $PY -m torch_ocl doctor 2>&1 | head -40

if has tests; then
  step "test subset on ocl:0"
  TL=$(limit 120 150)
  timeout "$TL" $PY -m pytest -v -p no:cacheprovider --maxfail=25 -rf \
    tests/test_device.py tests/test_copy.py tests/test_memory.py tests/test_streams.py \
    tests/test_pointwise.py tests/test_reductions.py tests/test_reduce_softmax_loss.py \
    tests/test_gemm.py tests/test_conv.py tests/test_norm.py tests/test_optim.py \
    tests/test_models.py > "$OUT/tests.txt" 2>&1
  echo "  pytest exit $? (124: stopped at its $TL s limit)"
  echo "  $(grep -c ' PASSED' "$OUT/tests.txt") passed, $(grep -c ' SKIPPED' "$OUT/tests.txt") skipped, $(grep -cE ' (FAILED|ERROR)' "$OUT/tests.txt") failed; failures:"
  grep -E ' (FAILED|ERROR)' "$OUT/tests.txt" | head -30
  tail -5 "$OUT/tests.txt"
fi

if has bench; then
  step "python -m torch_ocl bench"
  BQ=()
  [ "$QUICK" = 1 ] && BQ=(--quick)
  timeout "$(limit 100 60)" $PY -m torch_ocl bench --only limits --only ops --only models \
    --model mlp --model cnn --model gpt "${BQ[@]}" --quiet \
    -o "$OUT/bench.json" > "$OUT/bench.txt" 2>&1
  echo "  bench exit $?"
  cat "$OUT/bench.txt"
  step "benchmarks/runtime.py"
  RQ=()
  [ "$QUICK" = 1 ] && RQ=(--mib 16 --reps 3)
  timeout "$(limit 30 45)" $PY "$REPO/benchmarks/runtime.py" "${RQ[@]}" > "$OUT/runtime.txt" 2>&1
  echo "  runtime.py exit $?"
  cat "$OUT/runtime.txt"
fi

if has compare; then
  step "CUDA PyTorch on the same GPU (benchmarks/cuda.py)"
  CQ=()
  [ "$QUICK" = 1 ] && CQ=(--quick --reps 3)
  timeout "$(limit 90 0)" $PY "$REPO/benchmarks/cuda.py" "${CQ[@]}" --json "$OUT/cuda.json" 2>&1
  echo "  cuda.py exit $?"
fi

step "done"
ls -la "$OUT"
exec 1>&- 2>&-  # let tee finish the log before the run returns
sleep 1
