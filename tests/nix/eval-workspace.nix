# What uv2nix makes of uv.lock, through nix/workspace.nix as the package uses it:
# the workspace's dependency spec and the packages its overlay resolves for CPython
# 3.12 on x86_64-linux. Needs nixpkgs' lib, uv2nix and pyproject.nix sources (no
# nixpkgs: the interpreter is a stand-in holding what PEP 508 markers read).
# Used by tests/test_nix.py.
{ nixpkgsLib, uv2nixSrc, pyprojectNixSrc }:
let
  lib = import (nixpkgsLib + "/lib");
  pyproject-nix = import pyprojectNixSrc { inherit lib; };
  uv2nixLib = import (uv2nixSrc + "/lib") { inherit lib pyproject-nix; };
  workspace = import ../../nix/workspace.nix { inherit lib uv2nixLib; workspaceRoot = ../..; };
  overlay = workspace.mkPyprojectOverlay { sourcePreference = "wheel"; };

  platform = lib.systems.elaborate "x86_64-linux";
  stdenv = {
    hostPlatform = platform;
    buildPlatform = platform;
    targetPlatform = platform;
    cc.libc.linuxHeaders.version = "6.12";
  };
  python = {
    pname = "python3";
    version = "3.12.11";
    passthru = { implementation = "cpython"; pythonVersion = "3.12"; };
    inherit stdenv;
  };
in
{
  deps = workspace.deps.default;
  # Names only: building them needs nixpkgs.
  packages = lib.attrNames (overlay { callPackage = _: _: null; } { inherit stdenv python; });
}
