# Flake checks (Linux): the package builds and its CLI runs, the NixOS module
# evaluates with nixpkgs (a full system with two gateway profiles), and the VM test.
{ pkgs, lib, nixpkgs, module, package }:
let
  system = nixpkgs.lib.nixosSystem {
    inherit (pkgs.stdenv.hostPlatform) system;
    modules = [
      module
      {
        services.hermes-agent = {
          enable = true;
          inherit package;
          profiles.work = {
            settings.defaults = [ { platforms = "api_server"; } ];
            environmentFiles = [ "/run/agenix/hermes-work.env" ];
            gateway.enable = true;
          };
          profiles.research = {
            settings.platforms.enabled.api_server = { kind = "api_server"; settings.port = 8643; };
            gateway.enable = true;
          };
        };
        # Enough of a machine to evaluate toplevel (assertions included).
        boot.loader.grub.enable = false;
        fileSystems."/" = { device = "none"; fsType = "tmpfs"; };
        system.stateVersion = "25.11";
      }
    ];
  };
in
{
  package = pkgs.runCommand "hermes-package-runs" { } ''
    ${package}/bin/hermes --help > $out
    HOME=$TMPDIR ${package}/bin/hermes config get agent.max_iterations >> $out
  '';

  module-eval = pkgs.writeText "hermes-module-eval" (builtins.toJSON {
    units = lib.attrNames (lib.filterAttrs (n: _: lib.hasPrefix "hermes-agent-" n) system.config.systemd.services);
    toplevel = system.config.system.build.toplevel.drvPath;
  });

  vm-gateway = import ./vm-test.nix { inherit pkgs module package; };
}
