#!/usr/bin/env bash
# Checks the packed ke-opt (build/package/ke-opt.xz): under 40 MB, unpacks,
# runs, and needs nothing but glibc (libc, libm; glibc >= 2.36 suffices).
set -euo pipefail
package=$1
limit=$((40 * 1024 * 1024))
size=$(stat -c %s "$package")
echo "packed ke-opt: $size bytes (limit $limit)"
[[ $size -lt $limit ]] || { echo "FAIL: package is $size bytes, over 40 MB"; exit 1; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
xz -dc "$package" > "$work/ke-opt"
chmod +x "$work/ke-opt"

needed=$(readelf -d "$work/ke-opt" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | sort | tr '\n' ' ')
echo "needs: $needed"
for lib in $needed; do
  case "$lib" in
    libc.so.6|libm.so.6|ld-linux-*.so.*) ;;
    *) echo "FAIL: the packed ke-opt needs $lib"; exit 1 ;;
  esac
done
newest=$(objdump -T "$work/ke-opt" | grep -o 'GLIBC_[0-9.]*' | sort -uV | tail -n 1)
echo "newest glibc symbol version: $newest"
if [[ "$(printf '%s\nGLIBC_2.36\n' "$newest" | sort -V | tail -n 1)" != "GLIBC_2.36" ]]; then
  echo "FAIL: needs $newest, newer than glibc 2.36"; exit 1
fi

# Run it with no LLVM on the library path and in an empty directory.
(cd "$work" && env -i PATH=/usr/bin:/bin ./ke-opt --version) | tee "$work/version.txt"
grep -q "LLVM backends: .*nvptx64" "$work/version.txt"
echo 'func.func @f(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  %r = linalg.exp ins(%a : tensor<4xf32>) outs(%b : tensor<4xf32>) -> tensor<4xf32>
  return %r : tensor<4xf32>
}' > "$work/exp.mlir"
"$work/ke-opt" workloads "$work/exp.mlir" | grep -q '"op":"linalg.exp"'
echo "PASS"
