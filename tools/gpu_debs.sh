#!/bin/bash
# Downloads the Debian packages that tools/gpu_check.sh unpacks on the GPU machine (which has no
# package registry): the OpenCL headers and ICD loader, CLBlast, VkFFT's header and clinfo, all
# for amd64, into DIR (default .gpu-debs in the repository root, about 2 MB).
#
#   tools/gpu_debs.sh [DIR]
#
# DIR must travel with the working tree to the device machine: keep it out of git
# (`echo /.gpu-debs/ >> .git/info/exclude`, which this script does for the default) and name it in
# the run's `carry`. OpenBLAS is not needed there: the host-BLAS GEMM provider is only for CPU
# drivers (PoCL), and NVIDIA's device uses CLBlast and our tiled kernels.
set -euo pipefail
cd "$(dirname "$0")/.."
DIR=${1:-.gpu-debs}
PACKAGES=(opencl-c-headers ocl-icd-libopencl1 ocl-icd-opencl-dev libclblast1 libclblast-dev
          libvkfft-dev clinfo)
mkdir -p "$DIR"
rm -f "$DIR"/*.deb
# apt-get download writes into the current directory; as root it warns that _apt cannot write
# there (harmless).
(cd "$DIR" && apt-get download -o APT::Architecture=amd64 "${PACKAGES[@]}" 2>&1 | grep -v '^W: Download is performed unsandboxed' || true)
n=$(ls "$DIR"/*.deb 2>/dev/null | wc -l)
if [ "$n" -ne "${#PACKAGES[@]}" ]; then
  echo "gpu_debs: expected ${#PACKAGES[@]} .deb files in $DIR, found $n" >&2
  exit 1
fi
if [ "$DIR" = .gpu-debs ] && git rev-parse --git-dir >/dev/null 2>&1; then
  excl=$(git rev-parse --git-path info/exclude)
  grep -qx '/.gpu-debs/' "$excl" 2>/dev/null || echo '/.gpu-debs/' >> "$excl"
fi
size=$(du -sk "$DIR" | cut -f1)
echo "gpu_debs: ${n} packages, ${size} KiB in $DIR (the device run's carry limit is 64 MiB in all):"
ls -1 "$DIR"
