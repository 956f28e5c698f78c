# The hermes package: a virtual environment holding exactly uv.lock's versions,
# checked against its hashes (uv2nix reads the lock; nothing is resolved again), and
# `bin/hermes` wrapped so the agent's terminal finds a shell and the usual tools.
#
#   pkgs.callPackage ./nix/package.nix { inherit uv2nix pyproject-nix pyproject-build-systems; }
#   hermes.override { extraPythonPackages = [ ps.some-plugin ]; }   # entry-point plugins
#   hermes.override { browser = pkgs.chromium; }   # the browser toolset's Chromium on PATH
{
  lib,
  callPackage,
  stdenvNoCC,
  makeWrapper,
  python312,
  bash,
  coreutils,
  findutils,
  gnugrep,
  gnused,
  git,
  uv2nix,
  pyproject-nix,
  pyproject-build-systems,
  # Python packages (built for python312) put beside the locked environment, on
  # PYTHONPATH; the build fails if one of them is already locked (two versions).
  extraPythonPackages ? [ ],
  # A Chromium (its bin/ holds `chromium`) put on the wrapper's PATH for the browser
  # toolset; null: none (the NixOS module's services.hermes-agent.browser.enable adds
  # one to its units instead).
  browser ? null,
}:
let
  python = python312;
  pyproject = lib.importTOML ../pyproject.toml;

  # Only what the wheel is built from: edits to tests or docs do not rebuild it.
  src = lib.fileset.toSource {
    root = ../.;
    fileset = lib.fileset.unions [
      ../pyproject.toml
      ../uv.lock
      ../README.md
      ../runtime
      ../conf
      ../profiles
    ];
  };

  workspace = import ./workspace.nix { inherit lib; uv2nixLib = uv2nix.lib; workspaceRoot = src; };

  pythonSet = import ./python-set.nix {
    inherit lib callPackage python pyproject-nix pyproject-build-systems workspace;
  };

  # The project and its runtime dependencies only (no test group).
  venv = pythonSet.mkVirtualEnv "hermes-runtime-env" workspace.deps.default;

  extras = python.pkgs.requiredPythonModules extraPythonPackages;
  extraSitePackages = lib.makeSearchPath python.sitePackages extras;

  toolPath = lib.makeBinPath ([ bash coreutils findutils gnugrep gnused git ]
    ++ lib.optional (browser != null) browser);
in
stdenvNoCC.mkDerivation {
  pname = "hermes-runtime";
  inherit (pyproject.project) version;

  dontUnpack = true;
  nativeBuildInputs = [ makeWrapper ];

  installPhase = ''
    runHook preInstall
    makeWrapper ${venv}/bin/hermes $out/bin/hermes \
      --suffix PATH : ${toolPath} \
      ${lib.optionalString (extras != [ ]) "--suffix PYTHONPATH : ${extraSitePackages}"}
    runHook postInstall
  '';

  # An extra package that the lock already holds would shadow or be shadowed by
  # the locked version depending on sys.path order: refuse it at build time.
  doInstallCheck = extras != [ ];
  installCheckPhase = ''
    ${venv}/bin/python - ${lib.escapeShellArgs (map toString extras)} <<'EOF'
    import pathlib, re, sys
    canonical = lambda name: re.sub(r"[-_.]+", "-", name).lower()
    def names(site):
        return {canonical(d.name.split("-")[0]) for d in pathlib.Path(site).glob("*.dist-info")}
    locked = names("${venv}/${python.sitePackages}")
    for extra in sys.argv[1:]:
        clash = names(pathlib.Path(extra) / "${python.sitePackages}") & locked
        if clash:
            sys.exit(f"extraPythonPackages: {', '.join(sorted(clash))} is already in uv.lock; remove it")
    EOF
  '';

  passthru = { inherit venv python pythonSet workspace; };

  meta = {
    description = pyproject.project.description;
    license = lib.licenses.mit;
    mainProgram = "hermes";
    platforms = [ "x86_64-linux" "aarch64-linux" "aarch64-darwin" ];
  };
}
