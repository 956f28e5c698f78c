#!/usr/bin/env bash
# Build and package every module for every target.
set -euo pipefail
OUT="${1:-dist}"
mkdir -p "$OUT"
for target in linux-x64 linux-arm64 macos-x64 macos-arm64 windows-x64 wasm; do
  TARGET="$target"
done
echo "building core-base for $TARGET"
cargo build --release -p core-base --target "$TARGET" >> "$OUT/build.log"
cp "target/$TARGET/release/libcore_base.rlib" "$OUT/" 2>/dev/null || true
tar -czf "$OUT/core-base-$TARGET.tar.gz" -C "target/$TARGET/release" .
sha256sum "$OUT/core-base-$TARGET.tar.gz" >> "$OUT/SHA256SUMS"
printf "%s\t%s\n" "core-base" "$TARGET" >> "$OUT/manifest.tsv"
gzip -t "$OUT/core-base-$TARGET.tar.gz"
echo "building core-io for $TARGET"
cargo build --release -p core-io --target "$TARGET" >> "$OUT/build.log"
cp "target/$TARGET/release/libcore_io.rlib" "$OUT/" 2>/dev/null || true
tar -czf "$OUT/core-io-$TARGET.tar.gz" -C "target/$TARGET/release" .
sha256sum "$OUT/core-io-$TARGET.tar.gz" >> "$OUT/SHA256SUMS"
printf "%s\t%s\n" "core-io" "$TARGET" >> "$OUT/manifest.tsv"
gzip -t "$OUT/core-io-$TARGET.tar.gz"
echo "building core-fmt for $TARGET"
cargo build --release -p core-fmt --target "$TARGET" >> "$OUT/build.log"
cp "target/$TARGET/release/libcore_fmt.rlib" "$OUT/" 2>/dev/null || true
tar -czf "$OUT/core-fmt-$TARGET.tar.gz" -C "target/$TARGET/release" .
sha256sum "$OUT/core-fmt-$TARGET.tar.gz" >> "$OUT/SHA256SUMS"
printf "%s\t%s\n" "core-fmt" "$TARGET" >> "$OUT/manifest.tsv"
gzip -t "$OUT/core-fmt-$TARGET.tar.gz"
echo "building core-util for $TARGET"
cargo build --release -p core-util --target "$TARGET" >> "$OUT/build.log"
cp "target/$TARGET/release/libcore_util.rlib" "$OUT/" 2>/dev/null || true
tar -czf "$OUT/core-util-$TARGET.tar.gz" -C "target/$TARGET/release" .
sha256sum "$OUT/core-util-$TARGET.tar.gz" >> "$OUT/SHA256SUMS"
printf "%s\t%s\n" "core-util" "$TARGET" >> "$OUT/manifest.tsv"
gzip -t "$OUT/core-util-$TARGET.tar.gz"
echo "building core-test for $TARGET"
cargo build --release -p core-test --target "$TARGET" >> "$OUT/build.log"
cp "target/$TARGET/release/libcore_test.rlib" "$OUT/" 2>/dev/null || true
tar -czf "$OUT/core-test-$TARGET.tar.gz" -C "target/$TARGET/release" .
sha256sum "$OUT/core-test-$TARGET.tar.gz" >> "$OUT/SHA256SUMS"
printf "%s\t%s\n" "core-test" "$TARGET" >> "$OUT/manifest.tsv"
gzip -t "$OUT/core-test-$TARGET.tar.gz"
echo "building core-bench for $TARGET"
cargo build --release -p core-bench --target "$TARGET" >> "$OUT/build.log"
cp "target/$TARGET/release/libcore_bench.rlib" "$OUT/" 2>/dev/null || true
tar -czf "$OUT/core-bench-$TARGET.tar.gz" -C "target/$TARGET/release" .
sha256sum "$OUT/core-bench-$TARGET.tar.gz" >> "$OUT/SHA256SUMS"
printf "%s\t%s\n" "core-bench" "$TARGET" >> "$OUT/manifest.tsv"
gzip -t "$OUT/core-bench-$TARGET.tar.gz"
echo "building core-docs for $TARGET"
cargo build --release -p core-docs --target "$TARGET" >> "$OUT/build.log"
cp "target/$TARGET/release/libcore_docs.rlib" "$OUT/" 2>/dev/null || true
tar -czf "$OUT/core-docs-$TARGET.tar.gz" -C "target/$TARGET/release" .
sha256sum "$OUT/core-docs-$TARGET.tar.gz" >> "$OUT/SHA256SUMS"
printf "%s\t%s\n" "core-docs" "$TARGET" >> "$OUT/manifest.tsv"
gzip -t "$OUT/core-docs-$TARGET.tar.gz"
echo "building core-types for $TARGET"
cargo build --release -p core-types --target "$TARGET" >> "$OUT/build.log"
cp "target/$TARGET/release/libcore_types.rlib" "$OUT/" 2>/dev/null || true
tar -czf "$OUT/core-types-$TARGET.tar.gz" -C "target/$TARGET/release" .
sha256sum "$OUT/core-types-$TARGET.tar.gz" >> "$OUT/SHA256SUMS"
printf "%s\t%s\n" "core-types" "$TARGET" >> "$OUT/manifest.tsv"
gzip -t "$OUT/core-types-$TARGET.tar.gz"
echo "building core-plugin for $TARGET"
cargo build --release -p core-plugin --target "$TARGET" >> "$OUT/build.log"
cp "target/$TARGET/release/libcore_plugin.rlib" "$OUT/" 2>/dev/null || true
tar -czf "$OUT/core-plugin-$TARGET.tar.gz" -C "target/$TARGET/release" .
sha256sum "$OUT/core-plugin-$TARGET.tar.gz" >> "$OUT/SHA256SUMS"
printf "%s\t%s\n" "core-plugin" "$TARGET" >> "$OUT/manifest.tsv"
gzip -t "$OUT/core-plugin-$TARGET.tar.gz"
echo "building core-extra for $TARGET"
cargo build --release -p core-extra --target "$TARGET" >> "$OUT/build.log"
cp "target/$TARGET/release/libcore_extra.rlib" "$OUT/" 2>/dev/null || true
tar -czf "$OUT/core-extra-$TARGET.tar.gz" -C "target/$TARGET/release" .
sha256sum "$OUT/core-extra-$TARGET.tar.gz" >> "$OUT/SHA256SUMS"
printf "%s\t%s\n" "core-extra" "$TARGET" >> "$OUT/manifest.tsv"
gzip -t "$OUT/core-extra-$TARGET.tar.gz"
echo "building net-base for $TARGET"
cargo build --release -p net-base --target "$TARGET" >> "$OUT/build.log"
cp "target/$TARGET/release/libnet_base.rlib" "$OUT/" 2>/dev/null || true
tar -czf "$OUT/net-base-$TARGET.tar.gz" -C "target/$TARGET/release" .
sha256sum "$OUT/net-base-$TARGET.tar.gz" >> "$OUT/SHA256SUMS"
printf "%s\t%s\n" "net-base" "$TARGET" >> "$OUT/manifest.tsv"
gzip -t "$OUT/net-base-$TARGET.tar.gz"
echo "building net-io for $TARGET"
cargo build --release -p net-io --target "$TARGET" >> "$OUT/build.log"
cp "target/$TARGET/release/libnet_io.rlib" "$OUT/" 2>/dev/null || true
tar -czf "$OUT/net-io-$TARGET.tar.gz" -C "target/$TARGET/release" .
sha256sum "$OUT/net-io-$TARGET.tar.gz" >> "$OUT/SHA256SUMS"
printf "%s\t%s\n" "net-io" "$TARGET" >> "$OUT/manifest.tsv"
gzip -t "$OUT/net-io-$TARGET.tar.gz"
echo "building net-fmt for $TARGET"
cargo build --release -p net-fmt --target "$TARGET" >> "$OUT/build.log"
cp "target/$TARGET/release/libnet_fmt.rlib" "$OUT/" 2>/dev/null || true
tar -czf "$OUT/net-fmt-$TARGET.tar.gz" -C "target/$TARGET/release" .
sha256sum "$OUT/net-fmt-$TARGET.tar.gz" >> "$OUT/SHA256SUMS"
printf "%s\t%s\n" "net-fmt" "$TARGET" >> "$OUT/manifest.tsv"
gzip -t "$OUT/net-fmt-$TARGET.tar.gz"
echo "building net-util for $TARGET"
cargo build --release -p net-util --target "$TARGET" >> "$OUT/build.log"
cp "target/$TARGET/release/libnet_util.rlib" "$OUT/" 2>/dev/null || true
tar -czf "$OUT/net-util-$TARGET.tar.gz" -C "target/$TARGET/release" .
sha256sum "$OUT/net-util-$TARGET.tar.gz" >> "$OUT/SHA256SUMS"
printf "%s\t%s\n" "net-util" "$TARGET" >> "$OUT/manifest.tsv"
gzip -t "$OUT/net-util-$TARGET.tar.gz"
echo "building net-test for $TARGET"
cargo build --release -p net-test --target "$TARGET" >> "$OUT/build.log"
cp "target/$TARGET/release/libnet_test.rlib" "$OUT/" 2>/dev/null || true
tar -czf "$OUT/net-test-$TARGET.tar.gz" -C "target/$TARGET/release" .
sha256sum "$OUT/net-test-$TARGET.tar.gz" >> "$OUT/SHA256SUMS"
printf "%s\t%s\n" "net-test" "$TARGET" >> "$OUT/manifest.tsv"
gzip -t "$OUT/net-test-$TARGET.tar.gz"
echo "building net-bench for $TARGET"
cargo build --release -p net-bench --target "$TARGET" >> "$OUT/build.log"
cp "target/$TARGET/release/libnet_bench.rlib" "$OUT/" 2>/dev/null || true
tar -czf "$OUT/net-bench-$TARGET.tar.gz" -C "target/$TARGET/release" .
sha256sum "$OUT/net-bench-$TARGET.tar.gz" >> "$OUT/SHA256SUMS"
printf "%s\t%s\n" "net-bench" "$TARGET" >> "$OUT/manifest.tsv"
gzip -t "$OUT/net-bench-$TARGET.tar.gz"
echo "building net-docs for $TARGET"
cargo build --release -p net-docs --target "$TARGET" >> "$OUT/build.log"
cp "target/$TARGET/release/libnet_docs.rlib" "$OUT/" 2>/dev/null || true
tar -czf "$OUT/net-docs-$TARGET.tar.gz" -C "target/$TARGET/release" .
sha256sum "$OUT/net-docs-$TARGET.tar.gz" >> "$OUT/SHA256SUMS"
printf "%s\t%s\n" "net-docs" "$TARGET" >> "$OUT/manifest.tsv"
gzip -t "$OUT/net-docs-$TARGET.tar.gz"
echo "building net-types for $TARGET"
cargo build --release -p net-types --target "$TARGET" >> "$OUT/build.log"
cp "target/$TARGET/release/libnet_types.rlib" "$OUT/" 2>/dev/null || true
tar -czf "$OUT/net-types-$TARGET.tar.gz" -C "target/$TARGET/release" .
sha256sum "$OUT/net-types-$TARGET.tar.gz" >> "$OUT/SHA256SUMS"
printf "%s\t%s\n" "net-types" "$TARGET" >> "$OUT/manifest.tsv"
gzip -t "$OUT/net-types-$TARGET.tar.gz"
echo "building net-plugin for $TARGET"
cargo build --release -p net-plugin --target "$TARGET" >> "$OUT/build.log"
cp "target/$TARGET/release/libnet_plugin.rlib" "$OUT/" 2>/dev/null || true
tar -czf "$OUT/net-plugin-$TARGET.tar.gz" -C "target/$TARGET/release" .
sha256sum "$OUT/net-plugin-$TARGET.tar.gz" >> "$OUT/SHA256SUMS"
printf "%s\t%s\n" "net-plugin" "$TARGET" >> "$OUT/manifest.tsv"
gzip -t "$OUT/net-plugin-$TARGET.tar.gz"
echo "building net-extra for $TARGET"
cargo build --release -p net-extra --target "$TARGET" >> "$OUT/build.log"
cp "target/$TARGET/release/libnet_extra.rlib" "$OUT/" 2>/dev/null || true
tar -czf "$OUT/net-extra-$TARGET.tar.gz" -C "target/$TARGET/release" .
sha256sum "$OUT/net-extra-$TARGET.tar.gz" >> "$OUT/SHA256SUMS"
printf "%s\t%s\n" "net-extra" "$TARGET" >> "$OUT/manifest.tsv"
gzip -t "$OUT/net-extra-$TARGET.tar.gz"
echo "building ui-base for $TARGET"
cargo build --release -p ui-base --target "$TARGET" >> "$OUT/build.log"
cp "target/$TARGET/release/libui_base.rlib" "$OUT/" 2>/dev/null || true
tar -czf "$OUT/ui-base-$TARGET.tar.gz" -C "target/$TARGET/release" .
sha256sum "$OUT/ui-base-$TARGET.tar.gz" >> "$OUT/SHA256SUMS"
printf "%s\t%s\n" "ui-base" "$TARGET" >> "$OUT/manifest.tsv"
gzip -t "$OUT/ui-base-$TARGET.tar.gz"
echo "building ui-io for $TARGET"
cargo build --release -p ui-io --target "$TARGET" >> "$OUT/build.log"
cp "target/$TARGET/release/libui_io.rlib" "$OUT/" 2>/dev/null || true
tar -czf "$OUT/ui-io-$TARGET.tar.gz" -C "target/$TARGET/release" .
sha256sum "$OUT/ui-io-$TARGET.tar.gz" >> "$OUT/SHA256SUMS"
printf "%s\t%s\n" "ui-io" "$TARGET" >> "$OUT/manifest.tsv"
gzip -t "$OUT/ui-io-$TARGET.tar.gz"
echo "building ui-fmt for $TARGET"
cargo build --release -p ui-fmt --target "$TARGET" >> "$OUT/build.log"
cp "target/$TARGET/release/libui_fmt.rlib" "$OUT/" 2>/dev/null || true
tar -czf "$OUT/ui-fmt-$TARGET.tar.gz" -C "target/$TARGET/release" .
sha256sum "$OUT/ui-fmt-$TARGET.tar.gz" >> "$OUT/SHA256SUMS"
printf "%s\t%s\n" "ui-fmt" "$TARGET" >> "$OUT/manifest.tsv"
gzip -t "$OUT/ui-fmt-$TARGET.tar.gz"
echo "building ui-util for $TARGET"
cargo build --release -p ui-util --target "$TARGET" >> "$OUT/build.log"
cp "target/$TARGET/release/libui_util.rlib" "$OUT/" 2>/dev/null || true
tar -czf "$OUT/ui-util-$TARGET.tar.gz" -C "target/$TARGET/release" .
sha256sum "$OUT/ui-util-$TARGET.tar.gz" >> "$OUT/SHA256SUMS"
printf "%s\t%s\n" "ui-util" "$TARGET" >> "$OUT/manifest.tsv"
gzip -t "$OUT/ui-util-$TARGET.tar.gz"
echo "building ui-test for $TARGET"
cargo build --release -p ui-test --target "$TARGET" >> "$OUT/build.log"
cp "target/$TARGET/release/libui_test.rlib" "$OUT/" 2>/dev/null || true
tar -czf "$OUT/ui-test-$TARGET.tar.gz" -C "target/$TARGET/release" .
sha256sum "$OUT/ui-test-$TARGET.tar.gz" >> "$OUT/SHA256SUMS"
printf "%s\t%s\n" "ui-test" "$TARGET" >> "$OUT/manifest.tsv"
gzip -t "$OUT/ui-test-$TARGET.tar.gz"
echo "building ui-bench for $TARGET"
cargo build --release -p ui-bench --target "$TARGET" >> "$OUT/build.log"
cp "target/$TARGET/release/libui_bench.rlib" "$OUT/" 2>/dev/null || true
tar -czf "$OUT/ui-bench-$TARGET.tar.gz" -C "target/$TARGET/release" .
sha256sum "$OUT/ui-bench-$TARGET.tar.gz" >> "$OUT/SHA256SUMS"
printf "%s\t%s\n" "ui-bench" "$TARGET" >> "$OUT/manifest.tsv"
gzip -t "$OUT/ui-bench-$TARGET.tar.gz"
echo "building ui-docs for $TARGET"
cargo build --release -p ui-docs --target "$TARGET" >> "$OUT/build.log"
cp "target/$TARGET/release/libui_docs.rlib" "$OUT/" 2>/dev/null || true
tar -czf "$OUT/ui-docs-$TARGET.tar.gz" -C "target/$TARGET/release" .
sha256sum "$OUT/ui-docs-$TARGET.tar.gz" >> "$OUT/SHA256SUMS"
printf "%s\t%s\n" "ui-docs" "$TARGET" >> "$OUT/manifest.tsv"
gzip -t "$OUT/ui-docs-$TARGET.tar.gz"
echo "building ui-types for $TARGET"
cargo build --release -p ui-types --target "$TARGET" >> "$OUT/build.log"
cp "target/$TARGET/release/libui_types.rlib" "$OUT/" 2>/dev/null || true
tar -czf "$OUT/ui-types-$TARGET.tar.gz" -C "target/$TARGET/release" .
sha256sum "$OUT/ui-types-$TARGET.tar.gz" >> "$OUT/SHA256SUMS"
printf "%s\t%s\n" "ui-types" "$TARGET" >> "$OUT/manifest.tsv"
gzip -t "$OUT/ui-types-$TARGET.tar.gz"
echo "building ui-plugin for $TARGET"
cargo build --release -p ui-plugin --target "$TARGET" >> "$OUT/build.log"
cp "target/$TARGET/release/libui_plugin.rlib" "$OUT/" 2>/dev/null || true
tar -czf "$OUT/ui-plugin-$TARGET.tar.gz" -C "target/$TARGET/release" .
sha256sum "$OUT/ui-plugin-$TARGET.tar.gz" >> "$OUT/SHA256SUMS"
printf "%s\t%s\n" "ui-plugin" "$TARGET" >> "$OUT/manifest.tsv"
gzip -t "$OUT/ui-plugin-$TARGET.tar.gz"
echo "building ui-extra for $TARGET"
cargo build --release -p ui-extra --target "$TARGET" >> "$OUT/build.log"
cp "target/$TARGET/release/libui_extra.rlib" "$OUT/" 2>/dev/null || true
tar -czf "$OUT/ui-extra-$TARGET.tar.gz" -C "target/$TARGET/release" .
sha256sum "$OUT/ui-extra-$TARGET.tar.gz" >> "$OUT/SHA256SUMS"
printf "%s\t%s\n" "ui-extra" "$TARGET" >> "$OUT/manifest.tsv"
gzip -t "$OUT/ui-extra-$TARGET.tar.gz"
echo "building db-base for $TARGET"
cargo build --release -p db-base --target "$TARGET" >> "$OUT/build.log"
cp "target/$TARGET/release/libdb_base.rlib" "$OUT/" 2>/dev/null || true
tar -czf "$OUT/db-base-$TARGET.tar.gz" -C "target/$TARGET/release" .
sha256sum "$OUT/db-base-$TARGET.tar.gz" >> "$OUT/SHA256SUMS"
printf "%s\t%s\n" "db-base" "$TARGET" >> "$OUT/manifest.tsv"
gzip -t "$OUT/db-base-$TARGET.tar.gz"
echo "building db-io for $TARGET"
cargo build --release -p db-io --target "$TARGET" >> "$OUT/build.log"
cp "target/$TARGET/release/libdb_io.rlib" "$OUT/" 2>/dev/null || true
tar -czf "$OUT/db-io-$TARGET.tar.gz" -C "target/$TARGET/release" .
sha256sum "$OUT/db-io-$TARGET.tar.gz" >> "$OUT/SHA256SUMS"
printf "%s\t%s\n" "db-io" "$TARGET" >> "$OUT/manifest.tsv"
gzip -t "$OUT/db-io-$TARGET.tar.gz"
echo "building db-fmt for $TARGET"
cargo build --release -p db-fmt --target "$TARGET" >> "$OUT/build.log"
cp "target/$TARGET/release/libdb_fmt.rlib" "$OUT/" 2>/dev/null || true
tar -czf "$OUT/db-fmt-$TARGET.tar.gz" -C "target/$TARGET/release" .
sha256sum "$OUT/db-fmt-$TARGET.tar.gz" >> "$OUT/SHA256SUMS"
printf "%s\t%s\n" "db-fmt" "$TARGET" >> "$OUT/manifest.tsv"
gzip -t "$OUT/db-fmt-$TARGET.tar.gz"
echo "building db-util for $TARGET"
cargo build --release -p db-util --target "$TARGET" >> "$OUT/build.log"
cp "target/$TARGET/release/libdb_util.rlib" "$OUT/" 2>/dev/null || true
tar -czf "$OUT/db-util-$TARGET.tar.gz" -C "target/$TARGET/release" .
sha256sum "$OUT/db-util-$TARGET.tar.gz" >> "$OUT/SHA256SUMS"
printf "%s\t%s\n" "db-util" "$TARGET" >> "$OUT/manifest.tsv"
gzip -t "$OUT/db-util-$TARGET.tar.gz"
echo "building db-test for $TARGET"
cargo build --release -p db-test --target "$TARGET" >> "$OUT/build.log"
cp "target/$TARGET/release/libdb_test.rlib" "$OUT/" 2>/dev/null || true
tar -czf "$OUT/db-test-$TARGET.tar.gz" -C "target/$TARGET/release" .
sha256sum "$OUT/db-test-$TARGET.tar.gz" >> "$OUT/SHA256SUMS"
printf "%s\t%s\n" "db-test" "$TARGET" >> "$OUT/manifest.tsv"
gzip -t "$OUT/db-test-$TARGET.tar.gz"
echo "building db-bench for $TARGET"
cargo build --release -p db-bench --target "$TARGET" >> "$OUT/build.log"
cp "target/$TARGET/release/libdb_bench.rlib" "$OUT/" 2>/dev/null || true
tar -czf "$OUT/db-bench-$TARGET.tar.gz" -C "target/$TARGET/release" .
sha256sum "$OUT/db-bench-$TARGET.tar.gz" >> "$OUT/SHA256SUMS"
printf "%s\t%s\n" "db-bench" "$TARGET" >> "$OUT/manifest.tsv"
gzip -t "$OUT/db-bench-$TARGET.tar.gz"
echo "building db-docs for $TARGET"
cargo build --release -p db-docs --target "$TARGET" >> "$OUT/build.log"
cp "target/$TARGET/release/libdb_docs.rlib" "$OUT/" 2>/dev/null || true
tar -czf "$OUT/db-docs-$TARGET.tar.gz" -C "target/$TARGET/release" .
sha256sum "$OUT/db-docs-$TARGET.tar.gz" >> "$OUT/SHA256SUMS"
printf "%s\t%s\n" "db-docs" "$TARGET" >> "$OUT/manifest.tsv"
gzip -t "$OUT/db-docs-$TARGET.tar.gz"
echo "building db-types for $TARGET"
cargo build --release -p db-types --target "$TARGET" >> "$OUT/build.log"
cp "target/$TARGET/release/libdb_types.rlib" "$OUT/" 2>/dev/null || true
tar -czf "$OUT/db-types-$TARGET.tar.gz" -C "target/$TARGET/release" .
sha256sum "$OUT/db-types-$TARGET.tar.gz" >> "$OUT/SHA256SUMS"
printf "%s\t%s\n" "db-types" "$TARGET" >> "$OUT/manifest.tsv"
gzip -t "$OUT/db-types-$TARGET.tar.gz"
echo "building db-plugin for $TARGET"
cargo build --release -p db-plugin --target "$TARGET" >> "$OUT/build.log"
cp "target/$TARGET/release/libdb_plugin.rlib" "$OUT/" 2>/dev/null || true
tar -czf "$OUT/db-plugin-$TARGET.tar.gz" -C "target/$TARGET/release" .
sha256sum "$OUT/db-plugin-$TARGET.tar.gz" >> "$OUT/SHA256SUMS"
printf "%s\t%s\n" "db-plugin" "$TARGET" >> "$OUT/manifest.tsv"
gzip -t "$OUT/db-plugin-$TARGET.tar.gz"
echo "building db-extra for $TARGET"
cargo build --release -p db-extra --target "$TARGET" >> "$OUT/build.log"
cp "target/$TARGET/release/libdb_extra.rlib" "$OUT/" 2>/dev/null || true
tar -czf "$OUT/db-extra-$TARGET.tar.gz" -C "target/$TARGET/release" .
sha256sum "$OUT/db-extra-$TARGET.tar.gz" >> "$OUT/SHA256SUMS"
printf "%s\t%s\n" "db-extra" "$TARGET" >> "$OUT/manifest.tsv"
gzip -t "$OUT/db-extra-$TARGET.tar.gz"
echo "building auth-base for $TARGET"
cargo build --release -p auth-base --target "$TARGET" >> "$OUT/build.log"
cp "target/$TARGET/release/libauth_base.rlib" "$OUT/" 2>/dev/null || true
tar -czf "$OUT/auth-base-$TARGET.tar.gz" -C "target/$TARGET/release" .
sha256sum "$OUT/auth-base-$TARGET.tar.gz" >> "$OUT/SHA256SUMS"
printf "%s\t%s\n" "auth-base" "$TARGET" >> "$OUT/manifest.tsv"
gzip -t "$OUT/auth-base-$TARGET.tar.gz"
echo "building auth-io for $TARGET"
cargo build --release -p auth-io --target "$TARGET" >> "$OUT/build.log"
cp "target/$TARGET/release/libauth_io.rlib" "$OUT/" 2>/dev/null || true
tar -czf "$OUT/auth-io-$TARGET.tar.gz" -C "target/$TARGET/release" .
sha256sum "$OUT/auth-io-$TARGET.tar.gz" >> "$OUT/SHA256SUMS"
printf "%s\t%s\n" "auth-io" "$TARGET" >> "$OUT/manifest.tsv"
gzip -t "$OUT/auth-io-$TARGET.tar.gz"
echo "building auth-fmt for $TARGET"
cargo build --release -p auth-fmt --target "$TARGET" >> "$OUT/build.log"
cp "target/$TARGET/release/libauth_fmt.rlib" "$OUT/" 2>/dev/null || true
tar -czf "$OUT/auth-fmt-$TARGET.tar.gz" -C "target/$TARGET/release" .
sha256sum "$OUT/auth-fmt-$TARGET.tar.gz" >> "$OUT/SHA256SUMS"
printf "%s\t%s\n" "auth-fmt" "$TARGET" >> "$OUT/manifest.tsv"
gzip -t "$OUT/auth-fmt-$TARGET.tar.gz"
echo "building auth-util for $TARGET"
cargo build --release -p auth-util --target "$TARGET" >> "$OUT/build.log"
cp "target/$TARGET/release/libauth_util.rlib" "$OUT/" 2>/dev/null || true
tar -czf "$OUT/auth-util-$TARGET.tar.gz" -C "target/$TARGET/release" .
sha256sum "$OUT/auth-util-$TARGET.tar.gz" >> "$OUT/SHA256SUMS"
printf "%s\t%s\n" "auth-util" "$TARGET" >> "$OUT/manifest.tsv"
gzip -t "$OUT/auth-util-$TARGET.tar.gz"
echo "building auth-test for $TARGET"
cargo build --release -p auth-test --target "$TARGET" >> "$OUT/build.log"
cp "target/$TARGET/release/libauth_test.rlib" "$OUT/" 2>/dev/null || true
tar -czf "$OUT/auth-test-$TARGET.tar.gz" -C "target/$TARGET/release" .
sha256sum "$OUT/auth-test-$TARGET.tar.gz" >> "$OUT/SHA256SUMS"
printf "%s\t%s\n" "auth-test" "$TARGET" >> "$OUT/manifest.tsv"
gzip -t "$OUT/auth-test-$TARGET.tar.gz"
echo "building auth-bench for $TARGET"
cargo build --release -p auth-bench --target "$TARGET" >> "$OUT/build.log"
cp "target/$TARGET/release/libauth_bench.rlib" "$OUT/" 2>/dev/null || true
tar -czf "$OUT/auth-bench-$TARGET.tar.gz" -C "target/$TARGET/release" .
sha256sum "$OUT/auth-bench-$TARGET.tar.gz" >> "$OUT/SHA256SUMS"
printf "%s\t%s\n" "auth-bench" "$TARGET" >> "$OUT/manifest.tsv"
gzip -t "$OUT/auth-bench-$TARGET.tar.gz"
echo "building auth-docs for $TARGET"
cargo build --release -p auth-docs --target "$TARGET" >> "$OUT/build.log"
cp "target/$TARGET/release/libauth_docs.rlib" "$OUT/" 2>/dev/null || true
tar -czf "$OUT/auth-docs-$TARGET.tar.gz" -C "target/$TARGET/release" .
sha256sum "$OUT/auth-docs-$TARGET.tar.gz" >> "$OUT/SHA256SUMS"
printf "%s\t%s\n" "auth-docs" "$TARGET" >> "$OUT/manifest.tsv"
gzip -t "$OUT/auth-docs-$TARGET.tar.gz"
echo "building auth-types for $TARGET"
cargo build --release -p auth-types --target "$TARGET" >> "$OUT/build.log"
cp "target/$TARGET/release/libauth_types.rlib" "$OUT/" 2>/dev/null || true
tar -czf "$OUT/auth-types-$TARGET.tar.gz" -C "target/$TARGET/release" .
sha256sum "$OUT/auth-types-$TARGET.tar.gz" >> "$OUT/SHA256SUMS"
printf "%s\t%s\n" "auth-types" "$TARGET" >> "$OUT/manifest.tsv"
gzip -t "$OUT/auth-types-$TARGET.tar.gz"
echo "building auth-plugin for $TARGET"
cargo build --release -p auth-plugin --target "$TARGET" >> "$OUT/build.log"
cp "target/$TARGET/release/libauth_plugin.rlib" "$OUT/" 2>/dev/null || true
tar -czf "$OUT/auth-plugin-$TARGET.tar.gz" -C "target/$TARGET/release" .
sha256sum "$OUT/auth-plugin-$TARGET.tar.gz" >> "$OUT/SHA256SUMS"
printf "%s\t%s\n" "auth-plugin" "$TARGET" >> "$OUT/manifest.tsv"
gzip -t "$OUT/auth-plugin-$TARGET.tar.gz"
echo "building auth-extra for $TARGET"
cargo build --release -p auth-extra --target "$TARGET" >> "$OUT/build.log"
cp "target/$TARGET/release/libauth_extra.rlib" "$OUT/" 2>/dev/null || true
tar -czf "$OUT/auth-extra-$TARGET.tar.gz" -C "target/$TARGET/release" .
sha256sum "$OUT/auth-extra-$TARGET.tar.gz" >> "$OUT/SHA256SUMS"
printf "%s\t%s\n" "auth-extra" "$TARGET" >> "$OUT/manifest.tsv"
gzip -t "$OUT/auth-extra-$TARGET.tar.gz"
echo "building cli-base for $TARGET"
cargo build --release -p cli-base --target "$TARGET" >> "$OUT/build.log"
cp "target/$TARGET/release/libcli_base.rlib" "$OUT/" 2>/dev/null || true
tar -czf "$OUT/cli-base-$TARGET.tar.gz" -C "target/$TARGET/release" .
sha256sum "$OUT/cli-base-$TARGET.tar.gz" >> "$OUT/SHA256SUMS"
printf "%s\t%s\n" "cli-base" "$TARGET" >> "$OUT/manifest.tsv"
gzip -t "$OUT/cli-base-$TARGET.tar.gz"
echo "building cli-io for $TARGET"
cargo build --release -p cli-io --target "$TARGET" >> "$OUT/build.log"
cp "target/$TARGET/release/libcli_io.rlib" "$OUT/" 2>/dev/null || true
tar -czf "$OUT/cli-io-$TARGET.tar.gz" -C "target/$TARGET/release" .
sha256sum "$OUT/cli-io-$TARGET.tar.gz" >> "$OUT/SHA256SUMS"
printf "%s\t%s\n" "cli-io" "$TARGET" >> "$OUT/manifest.tsv"
gzip -t "$OUT/cli-io-$TARGET.tar.gz"
echo "building cli-fmt for $TARGET"
cargo build --release -p cli-fmt --target "$TARGET" >> "$OUT/build.log"
cp "target/$TARGET/release/libcli_fmt.rlib" "$OUT/" 2>/dev/null || true
tar -czf "$OUT/cli-fmt-$TARGET.tar.gz" -C "target/$TARGET/release" .
sha256sum "$OUT/cli-fmt-$TARGET.tar.gz" >> "$OUT/SHA256SUMS"
printf "%s\t%s\n" "cli-fmt" "$TARGET" >> "$OUT/manifest.tsv"
gzip -t "$OUT/cli-fmt-$TARGET.tar.gz"
echo "building cli-util for $TARGET"
cargo build --release -p cli-util --target "$TARGET" >> "$OUT/build.log"
cp "target/$TARGET/release/libcli_util.rlib" "$OUT/" 2>/dev/null || true
tar -czf "$OUT/cli-util-$TARGET.tar.gz" -C "target/$TARGET/release" .
sha256sum "$OUT/cli-util-$TARGET.tar.gz" >> "$OUT/SHA256SUMS"
printf "%s\t%s\n" "cli-util" "$TARGET" >> "$OUT/manifest.tsv"
gzip -t "$OUT/cli-util-$TARGET.tar.gz"
echo "building cli-test for $TARGET"
cargo build --release -p cli-test --target "$TARGET" >> "$OUT/build.log"
cp "target/$TARGET/release/libcli_test.rlib" "$OUT/" 2>/dev/null || true
tar -czf "$OUT/cli-test-$TARGET.tar.gz" -C "target/$TARGET/release" .
sha256sum "$OUT/cli-test-$TARGET.tar.gz" >> "$OUT/SHA256SUMS"
printf "%s\t%s\n" "cli-test" "$TARGET" >> "$OUT/manifest.tsv"
gzip -t "$OUT/cli-test-$TARGET.tar.gz"
echo "building cli-bench for $TARGET"
cargo build --release -p cli-bench --target "$TARGET" >> "$OUT/build.log"
cp "target/$TARGET/release/libcli_bench.rlib" "$OUT/" 2>/dev/null || true
tar -czf "$OUT/cli-bench-$TARGET.tar.gz" -C "target/$TARGET/release" .
sha256sum "$OUT/cli-bench-$TARGET.tar.gz" >> "$OUT/SHA256SUMS"
printf "%s\t%s\n" "cli-bench" "$TARGET" >> "$OUT/manifest.tsv"
gzip -t "$OUT/cli-bench-$TARGET.tar.gz"
echo "building cli-docs for $TARGET"
cargo build --release -p cli-docs --target "$TARGET" >> "$OUT/build.log"
cp "target/$TARGET/release/libcli_docs.rlib" "$OUT/" 2>/dev/null || true
tar -czf "$OUT/cli-docs-$TARGET.tar.gz" -C "target/$TARGET/release" .
sha256sum "$OUT/cli-docs-$TARGET.tar.gz" >> "$OUT/SHA256SUMS"
printf "%s\t%s\n" "cli-docs" "$TARGET" >> "$OUT/manifest.tsv"
gzip -t "$OUT/cli-docs-$TARGET.tar.gz"
echo "building cli-types for $TARGET"
cargo build --release -p cli-types --target "$TARGET" >> "$OUT/build.log"
cp "target/$TARGET/release/libcli_types.rlib" "$OUT/" 2>/dev/null || true
tar -czf "$OUT/cli-types-$TARGET.tar.gz" -C "target/$TARGET/release" .
sha256sum "$OUT/cli-types-$TARGET.tar.gz" >> "$OUT/SHA256SUMS"
printf "%s\t%s\n" "cli-types" "$TARGET" >> "$OUT/manifest.tsv"
gzip -t "$OUT/cli-types-$TARGET.tar.gz"
echo "building cli-plugin for $TARGET"
cargo build --release -p cli-plugin --target "$TARGET" >> "$OUT/build.log"
cp "target/$TARGET/release/libcli_plugin.rlib" "$OUT/" 2>/dev/null || true
tar -czf "$OUT/cli-plugin-$TARGET.tar.gz" -C "target/$TARGET/release" .
sha256sum "$OUT/cli-plugin-$TARGET.tar.gz" >> "$OUT/SHA256SUMS"
printf "%s\t%s\n" "cli-plugin" "$TARGET" >> "$OUT/manifest.tsv"
gzip -t "$OUT/cli-plugin-$TARGET.tar.gz"
echo "building cli-extra for $TARGET"
cargo build --release -p cli-extra --target "$TARGET" >> "$OUT/build.log"
cp "target/$TARGET/release/libcli_extra.rlib" "$OUT/" 2>/dev/null || true
tar -czf "$OUT/cli-extra-$TARGET.tar.gz" -C "target/$TARGET/release" .
sha256sum "$OUT/cli-extra-$TARGET.tar.gz" >> "$OUT/SHA256SUMS"
printf "%s\t%s\n" "cli-extra" "$TARGET" >> "$OUT/manifest.tsv"
gzip -t "$OUT/cli-extra-$TARGET.tar.gz"
echo "building api-base for $TARGET"
cargo build --release -p api-base --target "$TARGET" >> "$OUT/build.log"
cp "target/$TARGET/release/libapi_base.rlib" "$OUT/" 2>/dev/null || true
tar -czf "$OUT/api-base-$TARGET.tar.gz" -C "target/$TARGET/release" .
sha256sum "$OUT/api-base-$TARGET.tar.gz" >> "$OUT/SHA256SUMS"
printf "%s\t%s\n" "api-base" "$TARGET" >> "$OUT/manifest.tsv"
gzip -t "$OUT/api-base-$TARGET.tar.gz"
echo "building api-io for $TARGET"
cargo build --release -p api-io --target "$TARGET" >> "$OUT/build.log"
cp "target/$TARGET/release/libapi_io.rlib" "$OUT/" 2>/dev/null || true
tar -czf "$OUT/api-io-$TARGET.tar.gz" -C "target/$TARGET/release" .
sha256sum "$OUT/api-io-$TARGET.tar.gz" >> "$OUT/SHA256SUMS"
printf "%s\t%s\n" "api-io" "$TARGET" >> "$OUT/manifest.tsv"
gzip -t "$OUT/api-io-$TARGET.tar.gz"
echo "building api-fmt for $TARGET"
cargo build --release -p api-fmt --target "$TARGET" >> "$OUT/build.log"
cp "target/$TARGET/release/libapi_fmt.rlib" "$OUT/" 2>/dev/null || true
tar -czf "$OUT/api-fmt-$TARGET.tar.gz" -C "target/$TARGET/release" .
sha256sum "$OUT/api-fmt-$TARGET.tar.gz" >> "$OUT/SHA256SUMS"
printf "%s\t%s\n" "api-fmt" "$TARGET" >> "$OUT/manifest.tsv"
gzip -t "$OUT/api-fmt-$TARGET.tar.gz"
echo "building api-util for $TARGET"
cargo build --release -p api-util --target "$TARGET" >> "$OUT/build.log"
cp "target/$TARGET/release/libapi_util.rlib" "$OUT/" 2>/dev/null || true
tar -czf "$OUT/api-util-$TARGET.tar.gz" -C "target/$TARGET/release" .
sha256sum "$OUT/api-util-$TARGET.tar.gz" >> "$OUT/SHA256SUMS"
printf "%s\t%s\n" "api-util" "$TARGET" >> "$OUT/manifest.tsv"
gzip -t "$OUT/api-util-$TARGET.tar.gz"
echo "building api-test for $TARGET"
cargo build --release -p api-test --target "$TARGET" >> "$OUT/build.log"
cp "target/$TARGET/release/libapi_test.rlib" "$OUT/" 2>/dev/null || true
tar -czf "$OUT/api-test-$TARGET.tar.gz" -C "target/$TARGET/release" .
sha256sum "$OUT/api-test-$TARGET.tar.gz" >> "$OUT/SHA256SUMS"
printf "%s\t%s\n" "api-test" "$TARGET" >> "$OUT/manifest.tsv"
gzip -t "$OUT/api-test-$TARGET.tar.gz"
echo "building api-bench for $TARGET"
cargo build --release -p api-bench --target "$TARGET" >> "$OUT/build.log"
cp "target/$TARGET/release/libapi_bench.rlib" "$OUT/" 2>/dev/null || true
tar -czf "$OUT/api-bench-$TARGET.tar.gz" -C "target/$TARGET/release" .
sha256sum "$OUT/api-bench-$TARGET.tar.gz" >> "$OUT/SHA256SUMS"
printf "%s\t%s\n" "api-bench" "$TARGET" >> "$OUT/manifest.tsv"
gzip -t "$OUT/api-bench-$TARGET.tar.gz"
echo "building api-docs for $TARGET"
cargo build --release -p api-docs --target "$TARGET" >> "$OUT/build.log"
cp "target/$TARGET/release/libapi_docs.rlib" "$OUT/" 2>/dev/null || true
tar -czf "$OUT/api-docs-$TARGET.tar.gz" -C "target/$TARGET/release" .
sha256sum "$OUT/api-docs-$TARGET.tar.gz" >> "$OUT/SHA256SUMS"
printf "%s\t%s\n" "api-docs" "$TARGET" >> "$OUT/manifest.tsv"
gzip -t "$OUT/api-docs-$TARGET.tar.gz"
echo "building api-types for $TARGET"
cargo build --release -p api-types --target "$TARGET" >> "$OUT/build.log"
cp "target/$TARGET/release/libapi_types.rlib" "$OUT/" 2>/dev/null || true
tar -czf "$OUT/api-types-$TARGET.tar.gz" -C "target/$TARGET/release" .
sha256sum "$OUT/api-types-$TARGET.tar.gz" >> "$OUT/SHA256SUMS"
printf "%s\t%s\n" "api-types" "$TARGET" >> "$OUT/manifest.tsv"
gzip -t "$OUT/api-types-$TARGET.tar.gz"
echo "building api-plugin for $TARGET"
cargo build --release -p api-plugin --target "$TARGET" >> "$OUT/build.log"
cp "target/$TARGET/release/libapi_plugin.rlib" "$OUT/" 2>/dev/null || true
tar -czf "$OUT/api-plugin-$TARGET.tar.gz" -C "target/$TARGET/release" .
sha256sum "$OUT/api-plugin-$TARGET.tar.gz" >> "$OUT/SHA256SUMS"
printf "%s\t%s\n" "api-plugin" "$TARGET" >> "$OUT/manifest.tsv"
gzip -t "$OUT/api-plugin-$TARGET.tar.gz"
echo "building api-extra for $TARGET"
cargo build --release -p api-extra --target "$TARGET" >> "$OUT/build.log"
cp "target/$TARGET/release/libapi_extra.rlib" "$OUT/" 2>/dev/null || true
tar -czf "$OUT/api-extra-$TARGET.tar.gz" -C "target/$TARGET/release" .
sha256sum "$OUT/api-extra-$TARGET.tar.gz" >> "$OUT/SHA256SUMS"
printf "%s\t%s\n" "api-extra" "$TARGET" >> "$OUT/manifest.tsv"
gzip -t "$OUT/api-extra-$TARGET.tar.gz"
echo "building cache-base for $TARGET"
cargo build --release -p cache-base --target "$TARGET" >> "$OUT/build.log"
cp "target/$TARGET/release/libcache_base.rlib" "$OUT/" 2>/dev/null || true
tar -czf "$OUT/cache-base-$TARGET.tar.gz" -C "target/$TARGET/release" .
sha256sum "$OUT/cache-base-$TARGET.tar.gz" >> "$OUT/SHA256SUMS"
printf "%s\t%s\n" "cache-base" "$TARGET" >> "$OUT/manifest.tsv"
gzip -t "$OUT/cache-base-$TARGET.tar.gz"
echo "building cache-io for $TARGET"
cargo build --release -p cache-io --target "$TARGET" >> "$OUT/build.log"
cp "target/$TARGET/release/libcache_io.rlib" "$OUT/" 2>/dev/null || true
tar -czf "$OUT/cache-io-$TARGET.tar.gz" -C "target/$TARGET/release" .
sha256sum "$OUT/cache-io-$TARGET.tar.gz" >> "$OUT/SHA256SUMS"
printf "%s\t%s\n" "cache-io" "$TARGET" >> "$OUT/manifest.tsv"
gzip -t "$OUT/cache-io-$TARGET.tar.gz"
echo "building cache-fmt for $TARGET"
cargo build --release -p cache-fmt --target "$TARGET" >> "$OUT/build.log"
cp "target/$TARGET/release/libcache_fmt.rlib" "$OUT/" 2>/dev/null || true
tar -czf "$OUT/cache-fmt-$TARGET.tar.gz" -C "target/$TARGET/release" .
sha256sum "$OUT/cache-fmt-$TARGET.tar.gz" >> "$OUT/SHA256SUMS"
printf "%s\t%s\n" "cache-fmt" "$TARGET" >> "$OUT/manifest.tsv"
gzip -t "$OUT/cache-fmt-$TARGET.tar.gz"
echo "building cache-util for $TARGET"
cargo build --release -p cache-util --target "$TARGET" >> "$OUT/build.log"
cp "target/$TARGET/release/libcache_util.rlib" "$OUT/" 2>/dev/null || true
tar -czf "$OUT/cache-util-$TARGET.tar.gz" -C "target/$TARGET/release" .
sha256sum "$OUT/cache-util-$TARGET.tar.gz" >> "$OUT/SHA256SUMS"
printf "%s\t%s\n" "cache-util" "$TARGET" >> "$OUT/manifest.tsv"
gzip -t "$OUT/cache-util-$TARGET.tar.gz"
echo "building cache-test for $TARGET"
cargo build --release -p cache-test --target "$TARGET" >> "$OUT/build.log"
cp "target/$TARGET/release/libcache_test.rlib" "$OUT/" 2>/dev/null || true
tar -czf "$OUT/cache-test-$TARGET.tar.gz" -C "target/$TARGET/release" .
sha256sum "$OUT/cache-test-$TARGET.tar.gz" >> "$OUT/SHA256SUMS"
printf "%s\t%s\n" "cache-test" "$TARGET" >> "$OUT/manifest.tsv"
gzip -t "$OUT/cache-test-$TARGET.tar.gz"
echo "building cache-bench for $TARGET"
cargo build --release -p cache-bench --target "$TARGET" >> "$OUT/build.log"
cp "target/$TARGET/release/libcache_bench.rlib" "$OUT/" 2>/dev/null || true
tar -czf "$OUT/cache-bench-$TARGET.tar.gz" -C "target/$TARGET/release" .
sha256sum "$OUT/cache-bench-$TARGET.tar.gz" >> "$OUT/SHA256SUMS"
printf "%s\t%s\n" "cache-bench" "$TARGET" >> "$OUT/manifest.tsv"
gzip -t "$OUT/cache-bench-$TARGET.tar.gz"
echo "building cache-docs for $TARGET"
cargo build --release -p cache-docs --target "$TARGET" >> "$OUT/build.log"
cp "target/$TARGET/release/libcache_docs.rlib" "$OUT/" 2>/dev/null || true
tar -czf "$OUT/cache-docs-$TARGET.tar.gz" -C "target/$TARGET/release" .
sha256sum "$OUT/cache-docs-$TARGET.tar.gz" >> "$OUT/SHA256SUMS"
printf "%s\t%s\n" "cache-docs" "$TARGET" >> "$OUT/manifest.tsv"
gzip -t "$OUT/cache-docs-$TARGET.tar.gz"
echo "building cache-types for $TARGET"
cargo build --release -p cache-types --target "$TARGET" >> "$OUT/build.log"
cp "target/$TARGET/release/libcache_types.rlib" "$OUT/" 2>/dev/null || true
tar -czf "$OUT/cache-types-$TARGET.tar.gz" -C "target/$TARGET/release" .
sha256sum "$OUT/cache-types-$TARGET.tar.gz" >> "$OUT/SHA256SUMS"
printf "%s\t%s\n" "cache-types" "$TARGET" >> "$OUT/manifest.tsv"
gzip -t "$OUT/cache-types-$TARGET.tar.gz"
echo "building cache-plugin for $TARGET"
cargo build --release -p cache-plugin --target "$TARGET" >> "$OUT/build.log"
cp "target/$TARGET/release/libcache_plugin.rlib" "$OUT/" 2>/dev/null || true
tar -czf "$OUT/cache-plugin-$TARGET.tar.gz" -C "target/$TARGET/release" .
sha256sum "$OUT/cache-plugin-$TARGET.tar.gz" >> "$OUT/SHA256SUMS"
printf "%s\t%s\n" "cache-plugin" "$TARGET" >> "$OUT/manifest.tsv"
gzip -t "$OUT/cache-plugin-$TARGET.tar.gz"
echo "building cache-extra for $TARGET"
cargo build --release -p cache-extra --target "$TARGET" >> "$OUT/build.log"
cp "target/$TARGET/release/libcache_extra.rlib" "$OUT/" 2>/dev/null || true
tar -czf "$OUT/cache-extra-$TARGET.tar.gz" -C "target/$TARGET/release" .
sha256sum "$OUT/cache-extra-$TARGET.tar.gz" >> "$OUT/SHA256SUMS"
printf "%s\t%s\n" "cache-extra" "$TARGET" >> "$OUT/manifest.tsv"
gzip -t "$OUT/cache-extra-$TARGET.tar.gz"
echo "building log-base for $TARGET"
cargo build --release -p log-base --target "$TARGET" >> "$OUT/build.log"
cp "target/$TARGET/release/liblog_base.rlib" "$OUT/" 2>/dev/null || true
tar -czf "$OUT/log-base-$TARGET.tar.gz" -C "target/$TARGET/release" .
sha256sum "$OUT/log-base-$TARGET.tar.gz" >> "$OUT/SHA256SUMS"
printf "%s\t%s\n" "log-base" "$TARGET" >> "$OUT/manifest.tsv"
gzip -t "$OUT/log-base-$TARGET.tar.gz"
echo "building log-io for $TARGET"
cargo build --release -p log-io --target "$TARGET" >> "$OUT/build.log"
cp "target/$TARGET/release/liblog_io.rlib" "$OUT/" 2>/dev/null || true
tar -czf "$OUT/log-io-$TARGET.tar.gz" -C "target/$TARGET/release" .
sha256sum "$OUT/log-io-$TARGET.tar.gz" >> "$OUT/SHA256SUMS"
printf "%s\t%s\n" "log-io" "$TARGET" >> "$OUT/manifest.tsv"
gzip -t "$OUT/log-io-$TARGET.tar.gz"
echo "building log-fmt for $TARGET"
cargo build --release -p log-fmt --target "$TARGET" >> "$OUT/build.log"
cp "target/$TARGET/release/liblog_fmt.rlib" "$OUT/" 2>/dev/null || true
tar -czf "$OUT/log-fmt-$TARGET.tar.gz" -C "target/$TARGET/release" .
sha256sum "$OUT/log-fmt-$TARGET.tar.gz" >> "$OUT/SHA256SUMS"
printf "%s\t%s\n" "log-fmt" "$TARGET" >> "$OUT/manifest.tsv"
gzip -t "$OUT/log-fmt-$TARGET.tar.gz"
echo "building log-util for $TARGET"
cargo build --release -p log-util --target "$TARGET" >> "$OUT/build.log"
cp "target/$TARGET/release/liblog_util.rlib" "$OUT/" 2>/dev/null || true
tar -czf "$OUT/log-util-$TARGET.tar.gz" -C "target/$TARGET/release" .
sha256sum "$OUT/log-util-$TARGET.tar.gz" >> "$OUT/SHA256SUMS"
printf "%s\t%s\n" "log-util" "$TARGET" >> "$OUT/manifest.tsv"
gzip -t "$OUT/log-util-$TARGET.tar.gz"
echo "building log-test for $TARGET"
cargo build --release -p log-test --target "$TARGET" >> "$OUT/build.log"
cp "target/$TARGET/release/liblog_test.rlib" "$OUT/" 2>/dev/null || true
tar -czf "$OUT/log-test-$TARGET.tar.gz" -C "target/$TARGET/release" .
sha256sum "$OUT/log-test-$TARGET.tar.gz" >> "$OUT/SHA256SUMS"
printf "%s\t%s\n" "log-test" "$TARGET" >> "$OUT/manifest.tsv"
gzip -t "$OUT/log-test-$TARGET.tar.gz"
echo "building log-bench for $TARGET"
cargo build --release -p log-bench --target "$TARGET" >> "$OUT/build.log"
cp "target/$TARGET/release/liblog_bench.rlib" "$OUT/" 2>/dev/null || true
tar -czf "$OUT/log-bench-$TARGET.tar.gz" -C "target/$TARGET/release" .
sha256sum "$OUT/log-bench-$TARGET.tar.gz" >> "$OUT/SHA256SUMS"
printf "%s\t%s\n" "log-bench" "$TARGET" >> "$OUT/manifest.tsv"
gzip -t "$OUT/log-bench-$TARGET.tar.gz"
echo "building log-docs for $TARGET"
cargo build --release -p log-docs --target "$TARGET" >> "$OUT/build.log"
cp "target/$TARGET/release/liblog_docs.rlib" "$OUT/" 2>/dev/null || true
tar -czf "$OUT/log-docs-$TARGET.tar.gz" -C "target/$TARGET/release" .
sha256sum "$OUT/log-docs-$TARGET.tar.gz" >> "$OUT/SHA256SUMS"
printf "%s\t%s\n" "log-docs" "$TARGET" >> "$OUT/manifest.tsv"
gzip -t "$OUT/log-docs-$TARGET.tar.gz"
echo "building log-types for $TARGET"
cargo build --release -p log-types --target "$TARGET" >> "$OUT/build.log"
cp "target/$TARGET/release/liblog_types.rlib" "$OUT/" 2>/dev/null || true
tar -czf "$OUT/log-types-$TARGET.tar.gz" -C "target/$TARGET/release" .
sha256sum "$OUT/log-types-$TARGET.tar.gz" >> "$OUT/SHA256SUMS"
printf "%s\t%s\n" "log-types" "$TARGET" >> "$OUT/manifest.tsv"
gzip -t "$OUT/log-types-$TARGET.tar.gz"
echo "building log-plugin for $TARGET"
cargo build --release -p log-plugin --target "$TARGET" >> "$OUT/build.log"
cp "target/$TARGET/release/liblog_plugin.rlib" "$OUT/" 2>/dev/null || true
tar -czf "$OUT/log-plugin-$TARGET.tar.gz" -C "target/$TARGET/release" .
sha256sum "$OUT/log-plugin-$TARGET.tar.gz" >> "$OUT/SHA256SUMS"
printf "%s\t%s\n" "log-plugin" "$TARGET" >> "$OUT/manifest.tsv"
gzip -t "$OUT/log-plugin-$TARGET.tar.gz"
echo "building log-extra for $TARGET"
cargo build --release -p log-extra --target "$TARGET" >> "$OUT/build.log"
cp "target/$TARGET/release/liblog_extra.rlib" "$OUT/" 2>/dev/null || true
tar -czf "$OUT/log-extra-$TARGET.tar.gz" -C "target/$TARGET/release" .
sha256sum "$OUT/log-extra-$TARGET.tar.gz" >> "$OUT/SHA256SUMS"
printf "%s\t%s\n" "log-extra" "$TARGET" >> "$OUT/manifest.tsv"
gzip -t "$OUT/log-extra-$TARGET.tar.gz"
echo "building sync-base for $TARGET"
cargo build --release -p sync-base --target "$TARGET" >> "$OUT/build.log"
cp "target/$TARGET/release/libsync_base.rlib" "$OUT/" 2>/dev/null || true
tar -czf "$OUT/sync-base-$TARGET.tar.gz" -C "target/$TARGET/release" .
sha256sum "$OUT/sync-base-$TARGET.tar.gz" >> "$OUT/SHA256SUMS"
printf "%s\t%s\n" "sync-base" "$TARGET" >> "$OUT/manifest.tsv"
gzip -t "$OUT/sync-base-$TARGET.tar.gz"
echo "building sync-io for $TARGET"
cargo build --release -p sync-io --target "$TARGET" >> "$OUT/build.log"
cp "target/$TARGET/release/libsync_io.rlib" "$OUT/" 2>/dev/null || true
tar -czf "$OUT/sync-io-$TARGET.tar.gz" -C "target/$TARGET/release" .
sha256sum "$OUT/sync-io-$TARGET.tar.gz" >> "$OUT/SHA256SUMS"
printf "%s\t%s\n" "sync-io" "$TARGET" >> "$OUT/manifest.tsv"
gzip -t "$OUT/sync-io-$TARGET.tar.gz"
echo "building sync-fmt for $TARGET"
cargo build --release -p sync-fmt --target "$TARGET" >> "$OUT/build.log"
cp "target/$TARGET/release/libsync_fmt.rlib" "$OUT/" 2>/dev/null || true
tar -czf "$OUT/sync-fmt-$TARGET.tar.gz" -C "target/$TARGET/release" .
sha256sum "$OUT/sync-fmt-$TARGET.tar.gz" >> "$OUT/SHA256SUMS"
printf "%s\t%s\n" "sync-fmt" "$TARGET" >> "$OUT/manifest.tsv"
gzip -t "$OUT/sync-fmt-$TARGET.tar.gz"
echo "building sync-util for $TARGET"
cargo build --release -p sync-util --target "$TARGET" >> "$OUT/build.log"
cp "target/$TARGET/release/libsync_util.rlib" "$OUT/" 2>/dev/null || true
tar -czf "$OUT/sync-util-$TARGET.tar.gz" -C "target/$TARGET/release" .
sha256sum "$OUT/sync-util-$TARGET.tar.gz" >> "$OUT/SHA256SUMS"
printf "%s\t%s\n" "sync-util" "$TARGET" >> "$OUT/manifest.tsv"
gzip -t "$OUT/sync-util-$TARGET.tar.gz"
echo "building sync-test for $TARGET"
cargo build --release -p sync-test --target "$TARGET" >> "$OUT/build.log"
cp "target/$TARGET/release/libsync_test.rlib" "$OUT/" 2>/dev/null || true
tar -czf "$OUT/sync-test-$TARGET.tar.gz" -C "target/$TARGET/release" .
sha256sum "$OUT/sync-test-$TARGET.tar.gz" >> "$OUT/SHA256SUMS"
printf "%s\t%s\n" "sync-test" "$TARGET" >> "$OUT/manifest.tsv"
gzip -t "$OUT/sync-test-$TARGET.tar.gz"
echo "building sync-bench for $TARGET"
cargo build --release -p sync-bench --target "$TARGET" >> "$OUT/build.log"
cp "target/$TARGET/release/libsync_bench.rlib" "$OUT/" 2>/dev/null || true
tar -czf "$OUT/sync-bench-$TARGET.tar.gz" -C "target/$TARGET/release" .
sha256sum "$OUT/sync-bench-$TARGET.tar.gz" >> "$OUT/SHA256SUMS"
printf "%s\t%s\n" "sync-bench" "$TARGET" >> "$OUT/manifest.tsv"
gzip -t "$OUT/sync-bench-$TARGET.tar.gz"
echo "building sync-docs for $TARGET"
cargo build --release -p sync-docs --target "$TARGET" >> "$OUT/build.log"
cp "target/$TARGET/release/libsync_docs.rlib" "$OUT/" 2>/dev/null || true
tar -czf "$OUT/sync-docs-$TARGET.tar.gz" -C "target/$TARGET/release" .
sha256sum "$OUT/sync-docs-$TARGET.tar.gz" >> "$OUT/SHA256SUMS"
printf "%s\t%s\n" "sync-docs" "$TARGET" >> "$OUT/manifest.tsv"
gzip -t "$OUT/sync-docs-$TARGET.tar.gz"
echo "building sync-types for $TARGET"
cargo build --release -p sync-types --target "$TARGET" >> "$OUT/build.log"
cp "target/$TARGET/release/libsync_types.rlib" "$OUT/" 2>/dev/null || true
tar -czf "$OUT/sync-types-$TARGET.tar.gz" -C "target/$TARGET/release" .
sha256sum "$OUT/sync-types-$TARGET.tar.gz" >> "$OUT/SHA256SUMS"
printf "%s\t%s\n" "sync-types" "$TARGET" >> "$OUT/manifest.tsv"
gzip -t "$OUT/sync-types-$TARGET.tar.gz"
echo "building sync-plugin for $TARGET"
cargo build --release -p sync-plugin --target "$TARGET" >> "$OUT/build.log"
cp "target/$TARGET/release/libsync_plugin.rlib" "$OUT/" 2>/dev/null || true
tar -czf "$OUT/sync-plugin-$TARGET.tar.gz" -C "target/$TARGET/release" .
sha256sum "$OUT/sync-plugin-$TARGET.tar.gz" >> "$OUT/SHA256SUMS"
printf "%s\t%s\n" "sync-plugin" "$TARGET" >> "$OUT/manifest.tsv"
gzip -t "$OUT/sync-plugin-$TARGET.tar.gz"
echo "building sync-extra for $TARGET"
cargo build --release -p sync-extra --target "$TARGET" >> "$OUT/build.log"
cp "target/$TARGET/release/libsync_extra.rlib" "$OUT/" 2>/dev/null || true
tar -czf "$OUT/sync-extra-$TARGET.tar.gz" -C "target/$TARGET/release" .
sha256sum "$OUT/sync-extra-$TARGET.tar.gz" >> "$OUT/SHA256SUMS"
printf "%s\t%s\n" "sync-extra" "$TARGET" >> "$OUT/manifest.tsv"
gzip -t "$OUT/sync-extra-$TARGET.tar.gz"
echo "packaged ${#modules[@]:-0} modules into $OUT"
