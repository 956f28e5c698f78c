# Evaluates nix/module.nix with nixpkgs' lib.evalModules, without nixpkgs itself:
# minimal stand-ins declare the NixOS options the module sets (typed as NixOS types
# them, so a misspelt attribute fails here too) and a tiny `pkgs` renders files as
# attribute sets whose text the test can read (JSON is valid YAML). `darwin` evaluates
# for a Mac, where home-manager refuses its systemd options (as its own modules do).
# Used by tests/test_nix.py:
#   nix-instantiate --eval --strict --json -E \
#     'import tests/nix/eval-module.nix { nixpkgsLib = /path; configuration = { ... }; }'
{ nixpkgsLib, configuration, target ? "nixos", darwin ? false }:
let
  lib = import (nixpkgsLib + "/lib");
  inherit (lib) mkOption types;
  hermesLib = import ../../nix/lib.nix { inherit lib; };

  # A derivation stand-in: its store path changes with what it holds.
  fake = name: attrs: attrs // {
    type = "derivation";
    inherit name;
    outPath = "/nix/store/${builtins.substring 0 32 (builtins.hashString "sha256" (name + builtins.toJSON (lib.filterAttrs (_: v: !lib.isFunction v) attrs)))}-${name}";
  };

  jsonValue = types.nullOr (types.oneOf [
    types.bool types.int types.float types.str types.path
    (types.attrsOf jsonValue) (types.listOf jsonValue)
  ]) // { description = "JSON value"; };

  pkgs = rec {
    writeText = name: text: fake name { inherit text; };
    writeShellScriptBin = name: text: fake name { inherit text; };
    linkFarm = name: entries: fake name { inherit entries; };
    formats.yaml = { }: {
      type = jsonValue;
      generate = name: value: writeText name (builtins.toJSON value);
    };
    stdenv = { isLinux = !darwin; isDarwin = darwin; };
    coreutils = fake "coreutils" { };
    util-linux = fake "util-linux" { };
    chromium = fake "chromium-142.0" { };
  };

  # Only the attributes nix/module.nix sets, with NixOS's names and shapes.
  nixosStandIns = {
    options = {
      assertions = mkOption {
        type = types.listOf (types.submodule {
          options.assertion = mkOption { type = types.bool; };
          options.message = mkOption { type = types.str; };
        });
        default = [ ];
      };
      users.users = mkOption {
        type = types.attrsOf (types.submodule {
          options = {
            isSystemUser = mkOption { type = types.bool; default = false; };
            group = mkOption { type = types.str; };
            home = mkOption { type = types.str; };
            description = mkOption { type = types.str; default = ""; };
          };
        });
        default = { };
      };
      users.groups = mkOption { type = types.attrsOf (types.submodule { }); default = { }; };
      systemd.tmpfiles.rules = mkOption { type = types.listOf types.str; default = [ ]; };
      systemd.services = mkOption {
        type = types.attrsOf (types.submodule {
          options = {
            description = mkOption { type = types.str; };
            wantedBy = mkOption { type = types.listOf types.str; default = [ ]; };
            wants = mkOption { type = types.listOf types.str; default = [ ]; };
            after = mkOption { type = types.listOf types.str; default = [ ]; };
            path = mkOption { type = types.listOf types.package; default = [ ]; };
            environment = mkOption { type = types.attrsOf types.str; default = { }; };
            serviceConfig = mkOption {
              type = types.attrsOf (types.oneOf [ types.bool types.int types.str (types.listOf types.str) ]);
              default = { };
            };
          };
        });
        default = { };
      };
      systemd.timers = mkOption {
        type = types.attrsOf (types.submodule {
          options = {
            description = mkOption { type = types.str; };
            wantedBy = mkOption { type = types.listOf types.str; default = [ ]; };
            timerConfig = mkOption {
              type = types.attrsOf (types.oneOf [ types.bool types.int types.str ]);
              default = { };
            };
          };
        });
        default = { };
      };
      environment.systemPackages = mkOption { type = types.listOf types.package; default = [ ]; };
      networking.firewall.allowedTCPPorts = mkOption { type = types.listOf types.port; default = [ ]; };
    };
  };

  # home-manager's lib.hm.dag: an activation step and what it comes after.
  hmLib = lib.extend (_: _: {
    hm.dag.entryAfter = after: data: { inherit after data; before = [ ]; };
  });

  # The same for nix/home-manager.nix, with home-manager's refusal of systemd options
  # on other platforms than Linux (its modules assert this).
  homeManagerStandIns = { config, ... }: {
    config.assertions = lib.optionals (!pkgs.stdenv.isLinux) [
      {
        assertion = config.systemd.user.tmpfiles.rules == [ ];
        message = "The module systemd.user.tmpfiles does not support your platform. It only supports Linux.";
      }
      {
        assertion = config.systemd.user.services == { } && config.systemd.user.timers == { };
        message = "The module systemd does not support your platform. It only supports Linux.";
      }
    ];
    options = {
      inherit (nixosStandIns.options) assertions;
      home.homeDirectory = mkOption { type = types.str; default = "/home/alice"; };
      home.packages = mkOption { type = types.listOf types.package; default = [ ]; };
      home.activation = mkOption {
        type = types.attrsOf (types.submodule {
          options.data = mkOption { type = types.str; };
          options.after = mkOption { type = types.listOf types.str; };
          options.before = mkOption { type = types.listOf types.str; };
        });
        default = { };
      };
      systemd.user.tmpfiles.rules = mkOption { type = types.listOf types.str; default = [ ]; };
      systemd.user.services = mkOption {
        type = types.attrsOf (types.submodule {
          options = lib.genAttrs [ "Unit" "Service" "Install" ] (_: mkOption {
            type = types.attrsOf (types.oneOf [ types.bool types.int types.str (types.listOf types.str) ]);
            default = { };
          });
        });
        default = { };
      };
      systemd.user.timers = mkOption {
        type = types.attrsOf (types.submodule {
          options = lib.genAttrs [ "Unit" "Timer" "Install" ] (_: mkOption {
            type = types.attrsOf (types.oneOf [ types.bool types.int types.str (types.listOf types.str) ]);
            default = { };
          });
        });
        default = { };
      };
    };
  };

  fakePackage = fake "hermes-runtime-0.1.0" {
    override = args: fake "hermes-runtime-0.1.0-with-plugins" {
      extra = map (p: p.name) args.extraPythonPackages;
    };
  };

  evaluated = lib.evalModules {
    specialArgs.lib = if target == "nixos" then lib else hmLib;
    modules = [
      { _module.args.pkgs = pkgs; }
      configuration
    ] ++ (if target == "nixos" then [
      nixosStandIns
      ../../nix/module.nix
      { services.hermes-agent.package = lib.mkDefault fakePackage; }
    ] else [
      homeManagerStandIns
      ../../nix/home-manager.nix
      { programs.hermes-agent.package = lib.mkDefault fakePackage; }
    ]);
  };
  inherit (evaluated) config;
  cfg = if target == "nixos" then config.services.hermes-agent else config.programs.hermes-agent;
  failedAssertions = map (a: a.message) (lib.filter (a: !a.assertion) config.assertions);
  # The NixOS module publishes its layer; home-manager's is rendered the same way.
  layerDrv = cfg.configLayer or (hermesLib.mkConfigLayer pkgs (pkgs.formats.yaml { }) cfg.profiles);
  layer = {
    path = "${layerDrv}";
    files = lib.listToAttrs (map (e: lib.nameValuePair e.name e.path.text) layerDrv.entries);
  };
in
if target != "nixos" then {
  inherit failedAssertions layer;
  units = config.systemd.user.services;
  timers = config.systemd.user.timers;
  tmpfiles = config.systemd.user.tmpfiles.rules;
  activation = config.home.activation;
  packages = map (p: { inherit (p) name; text = p.text or null; }) config.home.packages;
} else {
  inherit failedAssertions layer;
  units = config.systemd.services;
  timers = config.systemd.timers;
  settings = lib.mapAttrs (_: p: p.settings) cfg.profiles;
  pluginDirs = lib.mapAttrs (name: p: {
    path = "${hermesLib.mkPluginsDir pkgs name p.extraPlugins}";
    entries = map (e: { inherit (e) name; path = toString e.path; })
      (hermesLib.mkPluginsDir pkgs name p.extraPlugins).entries;
  }) cfg.profiles;
  skillDirs = lib.mapAttrs (name: p: {
    path = "${hermesLib.mkSkillsDir pkgs name p.extraSkills}";
    entries = map (e: { inherit (e) name; path = toString e.path; })
      (hermesLib.mkSkillsDir pkgs name p.extraSkills).entries;
  }) cfg.profiles;
  tmpfiles = config.systemd.tmpfiles.rules;
  users = config.users.users;
  groups = lib.attrNames config.users.groups;
  systemPackages = map (p: { inherit (p) name; text = p.text or null; }) config.environment.systemPackages;
  firewall = config.networking.firewall.allowedTCPPorts;
}
