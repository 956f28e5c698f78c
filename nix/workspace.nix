# The uv workspace as uv2nix reads it: uv.lock exactly as uv wrote it (versions,
# URLs, hashes), less one key uv2nix's lock parser does not know.
{ lib, uv2nixLib, workspaceRoot }:
let
  lock = lib.importTOML (workspaceRoot + "/uv.lock");
  # uv records `[tool.uv] default-groups` in the project's own lock entry. It only
  # tells `uv sync` which groups to install (the package installs none), and
  # lock1.nix refuses attributes it does not declare.
  uvLock = lock // { package = map (p: removeAttrs p [ "default-groups" ]) lock.package; };
in
uv2nixLib.workspace.loadWorkspace { inherit workspaceRoot uvLock; }
