# The build plan of nix/package.nix: its Python package set (nix/python-set.nix —
# pyproject.nix's builders, build-system-pkgs' overlay, uv2nix's overlay of uv.lock)
# evaluated as the package evaluates it, without
# nixpkgs: stand-ins for the few nixpkgs packages it takes and a stdenv whose
# mkDerivation hands back the attributes it was given. For every locked package that
# is built from source on `system`: the Python packages among its nativeBuildInputs
# (its build system), each with its version and the hash its source is fetched with.
# Used by tests/test_nix.py.
{ nixpkgsLib, uv2nixSrc, pyprojectNixSrc, buildSystemPkgsSrc, system ? "x86_64-linux" }:
let
  lib = import (nixpkgsLib + "/lib");
  pyproject-nix = import pyprojectNixSrc { inherit lib; };
  uv2nix = import uv2nixSrc { inherit lib pyproject-nix; };
  pyproject-build-systems = import buildSystemPkgsSrc { inherit lib uv2nix pyproject-nix; };

  platform = lib.systems.elaborate system;

  # A derivation stand-in: the attributes themselves, and overrideAttrs (old: { ... }).
  mkDerivation = f:
    let
      attrs = if lib.isFunction f then lib.fix f else f;
      name = attrs.name or "${attrs.pname}-${attrs.version}";
    in
    attrs // {
      type = "derivation";
      inherit name;
      outPath = "/nix/store/${builtins.substring 0 32 (builtins.hashString "sha256" name)}-${name}";
      overrideAttrs = g: mkDerivation (attrs // (g attrs));
    };
  fake = name: mkDerivation { inherit name; };

  stdenv = {
    inherit mkDerivation;
    hostPlatform = platform;
    buildPlatform = platform;
    targetPlatform = platform;
    inherit (platform) isLinux isDarwin;
    # nixpkgs 25.11's glibc: manylinux wheels up to 2.40 are usable.
    cc.libc = { pname = "glibc"; version = "2.40"; linuxHeaders.version = "6.12"; };
  };

  # What PEP 508 markers and the wheel selection read from the interpreter.
  python312 = fake "python3-3.12.11" // {
    pname = "python3";
    version = "3.12.11";
    passthru = {
      implementation = "cpython";
      pythonVersion = "3.12";
      sourceVersion = { major = "3"; minor = "12"; patch = "11"; suffix = ""; };
    };
    pythonVersion = "3.12";
    sitePackages = "lib/python3.12/site-packages";
    interpreter = "/nix/store/python3/bin/python3.12";
    pythonOlder = v: lib.versionOlder "3.12" v;
    pythonAtLeast = v: lib.versionAtLeast "3.12" v;
    inherit stdenv;
  } // { pythonOnBuildForHost = python312; };

  pkgs = lib.fix (self: {
    inherit lib stdenv python312;
    pkgs = self;
    buildPackages = self;
    callPackage = lib.callPackageWith self;
    newScope = extra: lib.callPackageWith (self // extra);
    fetchurl = { url, hash, name ? baseNameOf url }:
      mkDerivation { inherit name url hash; passthru.url = url; };
    makeSetupHook = { name, ... }: _script: fake name;
    replaceVars = _script: _replacements: fake "replaced";
    runCommand = name: _env: _script: fake name;
    pythonManylinuxPackages = { manylinux1 = [ ]; manylinux2010 = [ ]; manylinux2014 = [ ]; };
  } // lib.genAttrs [
    "uv" "ugrep" "unzip" "autoPatchelfHook"
  ] fake);

  # As nix/package.nix builds it (which takes the repository through lib.fileset,
  # beyond this Nix's builtins).
  workspace = import ../../nix/workspace.nix { inherit lib; uv2nixLib = uv2nix.lib; workspaceRoot = ../..; };
  pythonSet = import ../../nix/python-set.nix {
    inherit lib pyproject-nix pyproject-build-systems workspace;
    inherit (pkgs) callPackage;
    python = python312;
  };

  locked = lib.attrNames (workspace.mkPyprojectOverlay { sourcePreference = "wheel"; } pythonSet pythonSet);
  # Built by a build backend: sdists (format "pyproject") and the project itself.
  fromSource = lib.filter (name: pythonSet.${name}.passthru.format or "pyproject" == "pyproject") locked;

  describe = drv: {
    inherit (drv) version;
    hash = drv.src.hash or null;
  };
in
lib.genAttrs fromSource (name:
  lib.listToAttrs (map (drv: lib.nameValuePair drv.pname (describe drv))
    (lib.filter (drv: drv ? passthru.dependencies && drv ? pname) pythonSet.${name}.nativeBuildInputs)))
