# The Python package set the package is built from: pyproject.nix's builders,
# build-system-pkgs' build backends (setuptools, hatchling, ... locked with hashes in
# that input) and uv2nix's overlay of uv.lock, which also adds the build dependencies
# that pyproject.toml declares under [tool.uv.extra-build-dependencies] for sdists
# (uv.lock records no build systems). Apart from package.nix so the tests can
# evaluate the build plan (tests/nix/eval-package.nix).
{ lib, callPackage, python, pyproject-nix, pyproject-build-systems, workspace }:
(callPackage pyproject-nix.build.packages { inherit python; }).overrideScope
  (lib.composeManyExtensions [
    pyproject-build-systems.overlays.wheel
    # Wheels where uv.lock has them (as uv installs), sdists otherwise.
    (workspace.mkPyprojectOverlay { sourcePreference = "wheel"; })
  ])
