{
  # Minimal flake: the package and a dev shell. The NixOS module, the pinned
  # dependency set generated from uv.lock, and checks arrive with the Nix issue.
  description = "Hermes runtime: a declarative, config-driven AI agent runtime";

  inputs.nixpkgs.url = "github:NixOS/nixpkgs/nixos-25.05";

  outputs = { self, nixpkgs }:
    let
      systems = [ "x86_64-linux" "aarch64-linux" ];
      forAll = f: nixpkgs.lib.genAttrs systems (system: f nixpkgs.legacyPackages.${system});
    in {
      packages = forAll (pkgs: {
        default = pkgs.python311Packages.buildPythonApplication {
          pname = "hermes-runtime";
          version = "0.1.0";
          pyproject = true;
          src = ./.;
          build-system = [ pkgs.python311Packages.hatchling ];
          # nixpkgs' versions, not uv.lock's exact pins: relaxed until the Nix issue
          # generates this set from the lock file.
          pythonRelaxDeps = true;
          dependencies = with pkgs.python311Packages; [
            hydra-core omegaconf dependency-injector litellm sqlite-utils docker
            typer rich ruamel-yaml pyyaml filelock pydantic python-dotenv
          ];
          meta.mainProgram = "hermes";
        };
      });
      devShells = forAll (pkgs: {
        default = pkgs.mkShell { packages = [ pkgs.python311 pkgs.uv ]; };
      });
    };
}
