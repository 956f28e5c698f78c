# home-manager module: programs.hermes-agent — the same declarative profiles for one
# user, rooted in ~/.hermes by default. Settings become the same read-only layer as
# on NixOS; gateways (and `cron tick` on a timer) run as systemd user services and
# homes and seed files come from the user's systemd-tmpfiles (Linux). home-manager has
# no systemd on darwin (its modules refuse those options there): an activation step
# makes the homes instead, and a gateway or a timer is refused with the fix.
{ config, lib, pkgs, ... }:
let
  inherit (lib) mkOption types;
  cfg = config.programs.hermes-agent;
  hermesLib = import ./lib.nix { inherit lib; };
  settingsFormat = pkgs.formats.yaml { };

  layer = hermesLib.mkConfigLayer pkgs settingsFormat cfg.profiles;
  gatewayProfiles = lib.filterAttrs (_: p: p.gateway.enable) cfg.profiles;
  timerProfiles = lib.filterAttrs (_: p: p.cron.timer.enable) cfg.profiles;

  # What a profile's gateway and cron tick services share.
  serviceBase = name: profile: {
    Environment = lib.mapAttrsToList (k: v: "${k}=${v}")
      (hermesLib.runtimeEnvironment { inherit (cfg) stateDir; inherit layer name; });
    EnvironmentFile = profile.environmentFiles;
    UMask = "0077";
    NoNewPrivileges = true;
    PrivateTmp = true;
    LockPersonality = true;
    RestrictAddressFamilies = [ "AF_UNIX" "AF_INET" "AF_INET6" ];
  } // lib.optionalAttrs (profile.gateway.workingDirectory != null) {
    WorkingDirectory = profile.gateway.workingDirectory;
  };

  gatewayUnit = name: profile: {
    Unit.Description = "Hermes gateway of profile ${name}";
    Service = serviceBase name profile // {
      ExecStart = hermesLib.gatewayCommand cfg.package name profile;
      Restart = "on-failure";
      RestartSec = 5;
    };
    Install.WantedBy = [ "default.target" ];
  };

  cronUnit = name: profile: {
    Unit.Description = "Hermes scheduled jobs of profile ${name}";
    Service = serviceBase name profile // {
      Type = "oneshot";
      ExecStart = hermesLib.cronTickCommand cfg.package name profile;
    };
  };

  cronTimer = name: profile: {
    Unit.Description = "Hermes scheduled jobs of profile ${name}";
    Timer = hermesLib.cronTimerConfig profile;
    Install.WantedBy = [ "timers.target" ];
  };
in
{
  options.programs.hermes-agent = hermesLib.commonOptions {
    inherit pkgs settingsFormat;
    prefix = "programs.hermes-agent";
  } // {
    enable = lib.mkEnableOption "Hermes agent profiles for this user";

    stateDir = mkOption {
      type = types.str;
      default = "${config.home.homeDirectory}/.hermes";
      defaultText = lib.literalExpression ''"''${config.home.homeDirectory}/.hermes"'';
      description = "The Hermes root: profile `<name>` lives in `<stateDir>/profiles/<name>`.";
    };
  };

  config = lib.mkIf cfg.enable {
    assertions = hermesLib.assertionsOf { prefix = "programs.hermes-agent"; inherit (builtins) storeDir; } cfg
      ++ hermesLib.stateDirAssertions {
        prefix = "programs.hermes-agent";
        inherit (cfg) stateDir;
        suggestion = "${config.home.homeDirectory}/.hermes";
        reserved.${config.home.homeDirectory} = "your home directory";
      }
      ++ lib.mapAttrsToList (name: _: {
        assertion = pkgs.stdenv.isLinux;
        message = "programs.hermes-agent.profiles.${name}.gateway.enable: gateways run as systemd user services, which home-manager has on Linux only; set it to false here (or to pkgs.stdenv.isLinux) and start `hermes -p ${name} gateway run` yourself.";
      }) gatewayProfiles
      ++ lib.mapAttrsToList (name: _: {
        assertion = pkgs.stdenv.isLinux;
        message = "programs.hermes-agent.profiles.${name}.cron.timer.enable: the timer is a systemd user timer, which home-manager has on Linux only; set it to false here and run `hermes -p ${name} cron tick` from launchd or cron yourself.";
      }) timerProfiles;

    home.packages = [ (hermesLib.mkWrapper { inherit pkgs cfg layer; }) ];

    systemd.user.tmpfiles.rules = lib.mkIf pkgs.stdenv.isLinux
      (hermesLib.tmpfilesRules { inherit (cfg) stateDir; owner = "- -"; } cfg.profiles);

    home.activation.hermesAgentHomes = lib.mkIf (!pkgs.stdenv.isLinux)
      (lib.hm.dag.entryAfter [ "writeBoundary" ] (hermesLib.homeLayoutScript cfg.stateDir cfg.profiles));

    systemd.user.services = lib.mkIf pkgs.stdenv.isLinux (lib.mapAttrs' (name: profile:
      lib.nameValuePair "hermes-agent-${name}" (gatewayUnit name profile)) gatewayProfiles
      // lib.mapAttrs' (name: profile:
        lib.nameValuePair "hermes-agent-${name}-cron" (cronUnit name profile)) timerProfiles);

    systemd.user.timers = lib.mkIf pkgs.stdenv.isLinux (lib.mapAttrs' (name: profile:
      lib.nameValuePair "hermes-agent-${name}-cron" (cronTimer name profile)) timerProfiles);
  };
}
