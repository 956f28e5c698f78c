# NixOS module: services.hermes-agent — declarative Hermes profiles.
#
# Each profile's `settings` become a read-only config layer in the store
# (HERMES_CONFIG_LAYERS); the profile's own config.yaml, secrets, memories and
# sessions stay in its home under `stateDir`. One hardened systemd unit per profile
# with `gateway.enable`; a timer running `hermes cron tick` per profile with
# `cron.timer.enable` (no gateway); with `dashboard.enable`, one more hardened unit serving
# `hermes dashboard` for every profile of the root. Nothing writes into the state
# directory at activation: directories and seed files come from systemd (StateDirectory,
# tmpfiles).
{ config, lib, pkgs, ... }:
let
  inherit (lib) mkOption types;
  cfg = config.services.hermes-agent;
  hermesLib = import ./lib.nix { inherit lib; };
  settingsFormat = pkgs.formats.yaml { };

  layer = hermesLib.mkConfigLayer pkgs settingsFormat cfg.profiles;
  homeOf = hermesLib.homeOf cfg.stateDir;
  gatewayProfiles = lib.filterAttrs (_: p: p.gateway.enable) cfg.profiles;
  timerProfiles = lib.filterAttrs (_: p: p.cron.timer.enable) cfg.profiles;
  unitProfiles = gatewayProfiles // timerProfiles;

  # StateDirectory= only takes paths under /var/lib; elsewhere the unit may write
  # to stateDir through ReadWritePaths= and tmpfiles creates it.
  normalRoot = hermesLib.normalizePath cfg.stateDir;
  underVarLib = lib.hasPrefix "/var/lib/" normalRoot;
  stateRelative = lib.removePrefix "/var/lib/" normalRoot;

  # The service user's home is the root: its XDG state (the config cache's key) lives
  # beside it, for the units and for root running the admin `hermes`.
  serviceEnvironment = hermesLib.serviceEnvironment cfg.stateDir;
  stateHome = serviceEnvironment.XDG_STATE_HOME;

  adminWrapper = hermesLib.mkWrapper {
    inherit pkgs cfg layer;
    extraPath = lib.optional cfg.browser.enable cfg.browser.package;
    runAs = cfg.user;
    runAsEnvironment = serviceEnvironment;
  };

  # Commands run in a workspace outside the root: the local sandbox hides the root.
  workspaceOf = name: profile:
    if profile.gateway.workingDirectory != null then profile.gateway.workingDirectory
    else "${hermesLib.siblingOf cfg.stateDir "workspaces"}/${name}";
  ownWorkspace = profile: profile.gateway.workingDirectory == null;

  # What a profile's units share: its environment, secrets, workspace, state
  # directories and the hardening.
  unitBase = name: profile: {
    # The browser toolset finds `chromium` on PATH (browser.executable: null).
    path = lib.optional cfg.browser.enable cfg.browser.package;
    wants = [ "network-online.target" ];
    after = [ "network-online.target" ];
    environment = hermesLib.runtimeEnvironment { inherit (cfg) stateDir; inherit layer name; }
      // serviceEnvironment;
  };

  hardened = name: profile: confinement // {
    EnvironmentFile = profile.environmentFiles;
    WorkingDirectory = workspaceOf name profile;
    # The runtime would hold it (CPython maps no writable+executable memory), but the
    # agent's commands inherit it and JITs (node, java) crash: per profile, off by
    # default; the local sandbox confines those commands.
    MemoryDenyWriteExecute = profile.gateway.memoryDenyWriteExecute;
  } // (if underVarLib then {
    StateDirectory = [ stateRelative "${stateRelative}/profiles" "${stateRelative}/profiles/${name}"
      "${stateRelative}-state" ]
      ++ lib.optionals (ownWorkspace profile)
        [ "${stateRelative}-workspaces" "${stateRelative}-workspaces/${name}" ];
    StateDirectoryMode = "0700";
  } else {
    ReadWritePaths = [ cfg.stateDir stateHome ] ++ lib.optional (ownWorkspace profile) (workspaceOf name profile);
  });

  # The sandbox of every unit (a profile's gateway and cron tick, the dashboard).
  confinement = {
    User = cfg.user;
    Group = cfg.group;
    UMask = "0077";

    NoNewPrivileges = true;
    ProtectSystem = "strict";
    ProtectHome = true;
    PrivateTmp = true;
    PrivateDevices = true;
    ProtectKernelTunables = true;
    ProtectKernelModules = true;
    ProtectKernelLogs = true;
    ProtectControlGroups = true;
    ProtectClock = true;
    ProtectHostname = true;
    ProtectProc = "invisible";
    # AF_UNIX: the warm CLI server's socket in the home; AF_INET*: platforms, models.
    RestrictAddressFamilies = [ "AF_UNIX" "AF_INET" "AF_INET6" ];
    RestrictNamespaces = true;
    RestrictRealtime = true;
    RestrictSUIDSGID = true;
    LockPersonality = true;
    # @sandbox: Landlock and seccomp, how the local sandbox confines commands here
    # (RestrictNamespaces leaves bubblewrap out).
    SystemCallFilter = [ "@system-service" "@sandbox" "~@privileged" ];
    SystemCallErrorNumber = "EPERM";
    SystemCallArchitectures = "native";
    CapabilityBoundingSet = "";
    AmbientCapabilities = "";
    RemoveIPC = true;
  };

  # `hermes dashboard` for the whole root: the home and layer the admin `hermes` uses
  # (defaultProfile's), writing only its token (<stateDir>/dashboard/token). Its URL
  # with the token is in the unit's journal. Every profile's environmentFiles come as
  # credentials (not EnvironmentFile=: one environment for all profiles would mix their
  # secrets): the runtime of a profile reads its own files there.
  dashboard = cfg.dashboard;
  dashboardCredentials = hermesLib.environmentCredentials cfg.profiles;
  dashboardUnit = {
    description = "Hermes dashboard of ${cfg.stateDir}";
    wantedBy = [ "multi-user.target" ];
    wants = [ "network-online.target" ];
    after = [ "network-online.target" ];
    path = lib.optional cfg.browser.enable cfg.browser.package;
    environment = {
      HERMES_HOME = if cfg.defaultProfile == null then cfg.stateDir else homeOf cfg.defaultProfile;
      HERMES_CONFIG_LAYERS = "${layer}";
    } // serviceEnvironment;
    serviceConfig = confinement // {
      ExecStart = hermesLib.dashboardCommand cfg.package cfg.profiles dashboard;
      WorkingDirectory = stateHome;
      MemoryDenyWriteExecute = false;
      Restart = "on-failure";
      RestartSec = 5;
    } // lib.optionalAttrs (dashboardCredentials != [ ]) {
      LoadCredential = dashboardCredentials;
    } // (if underVarLib then {
      StateDirectory = [ stateRelative "${stateRelative}-state" ];
      StateDirectoryMode = "0700";
    } else {
      ReadWritePaths = [ cfg.stateDir stateHome ];
    });
  };
  loopbackHosts = [ "127.0.0.1" "::1" "[::1]" "localhost" ];

  gatewayUnit = name: profile: unitBase name profile // {
    description = "Hermes gateway of profile ${name}";
    wantedBy = [ "multi-user.target" ];
    serviceConfig = hardened name profile // {
      ExecStart = hermesLib.gatewayCommand cfg.package name profile;
      Restart = "on-failure";
      RestartSec = 5;
      # SIGTERM lets running turns finish (gateway.shutdown_grace, 30 s by default).
      TimeoutStopSec = 60;
    };
  };

  # `hermes cron tick` runs the due jobs and exits; systemd starts no second tick while
  # one runs, and the jobs file's lock keeps a job from running twice anyway.
  cronUnit = name: profile: unitBase name profile // {
    description = "Hermes scheduled jobs of profile ${name}";
    serviceConfig = hardened name profile // {
      Type = "oneshot";
      ExecStart = hermesLib.cronTickCommand cfg.package name profile;
    };
  };
in
{
  options.services.hermes-agent = hermesLib.commonOptions {
    inherit pkgs settingsFormat;
    prefix = "services.hermes-agent";
  } // {
    enable = lib.mkEnableOption "Hermes agent profiles (config layers, gateways and an admin `hermes`)";

    user = mkOption {
      type = types.str;
      default = "hermes";
      description = "User the gateways run as and the admin `hermes` switches to from root; created when left as hermes.";
    };

    group = mkOption {
      type = types.str;
      default = "hermes";
      description = "Group of that user; created when left as hermes.";
    };

    stateDir = mkOption {
      type = types.str;
      default = "/var/lib/hermes-agent";
      description = ''
        The Hermes root: profile `<name>` lives in `<stateDir>/profiles/<name>`
        (config.yaml, .env, memories, sessions, logs). Beside it, the service user
        keeps its XDG state (`XDG_STATE_HOME`: the config cache's key, which may not
        lie inside the root, the user's home) in `<stateDir>-state`, and the units run
        commands in `<stateDir>-workspaces/<name>`. Under /var/lib they are the units'
        StateDirectory; elsewhere they are made writable with ReadWritePaths.
      '';
    };

    browser = {
      enable = lib.mkEnableOption ''
        a Chromium for the `browser` toolset, on the PATH of the gateways, the cron
        ticks and the admin `hermes` (where `browser.executable: null` finds it). It is
        launched without its own sandbox (the units' RestrictNamespaces= forbids one);
        the units confine it, and every request goes through the runtime's address guard'';
      package = mkOption {
        type = types.package;
        default = pkgs.chromium;
        defaultText = lib.literalExpression "pkgs.chromium";
        description = "The browser put on the units' PATH (its `bin/` must hold `chromium`).";
      };
    };

    dashboard = {
      enable = lib.mkEnableOption ''
        the web dashboard (`hermes dashboard`) of every profile of the root, as its own
        hardened unit `hermes-agent-dashboard`. The URL to open, with its token (a
        password, kept 0600 in `<stateDir>/dashboard/token`), is in
        `journalctl -u hermes-agent-dashboard`; reach it over SSH port forwarding
        (`ssh -L 9119:127.0.0.1:9119 server`). A profile may serve it from its gateway
        instead: `profiles.<name>.settings.dashboard.enabled = true`'';
      host = mkOption {
        type = types.str;
        default = "127.0.0.1";
        description = ''
          Address to listen on (`--host`). Beyond loopback only behind TLS: a reverse
          proxy terminating HTTPS, with its public name in the default profile's
          `settings.dashboard.allowed_hosts`.
        '';
      };
      port = mkOption {
        type = types.port;
        default = 9119;
        description = "TCP port (`--port`).";
      };
      openFirewall = mkOption {
        type = types.bool;
        default = false;
        description = "Open `port` in the firewall (only with `host` beyond loopback).";
      };
    };

    configLayer = mkOption {
      type = types.package;
      readOnly = true;
      default = layer;
      defaultText = lib.literalMD "the rendered layer";
      description = "The rendered read-only layer directory (`profiles/<name>/config.yaml`), as given in HERMES_CONFIG_LAYERS.";
    };
  };

  config = lib.mkIf cfg.enable {
    assertions = hermesLib.assertionsOf { prefix = "services.hermes-agent"; inherit (builtins) storeDir; } cfg
      ++ hermesLib.stateDirAssertions {
        prefix = "services.hermes-agent";
        inherit (cfg) stateDir;
        suggestion = "/var/lib/hermes-agent";
        owner = "the ${cfg.user} user";
      }
      ++ [
        {
          # systemd splits StateDirectory=, ReadWritePaths= and tmpfiles lines at
          # whitespace and unquotes them: the root or its siblings would be other paths.
          assertion = !lib.any (c: lib.elem c [ " " "\t" "\n" "\r" "\"" "'" "\\" ])
            (lib.stringToCharacters cfg.stateDir);
          message = "services.hermes-agent.stateDir: ${cfg.stateDir} contains whitespace, a quote or a backslash, which systemd reads as separators or quoting in StateDirectory=, ReadWritePaths= and tmpfiles lines; use a path without them, such as /var/lib/hermes-agent.";
        }
        {
          # V8's JIT needs writable and executable memory: Chromium dies at its first page.
          assertion = !cfg.browser.enable || !(lib.any (p: p.gateway.memoryDenyWriteExecute)
            (lib.attrValues unitProfiles));
          message = "services.hermes-agent.browser.enable: Chromium cannot run under MemoryDenyWriteExecute=true (its JIT needs writable executable memory); set profiles.<name>.gateway.memoryDenyWriteExecute = false for ${lib.concatStringsSep ", " (lib.attrNames (lib.filterAttrs (_: p: p.gateway.memoryDenyWriteExecute) unitProfiles))}, or leave the browser off.";
        }
        {
          assertion = !(dashboard.enable && dashboard.openFirewall && lib.elem dashboard.host loopbackHosts);
          message = "services.hermes-agent.dashboard.openFirewall: opens port ${toString dashboard.port}, but the dashboard listens on ${dashboard.host} (loopback) only; set dashboard.host (behind TLS), or keep the firewall closed and use SSH port forwarding.";
        }
        {
          assertion = unitProfiles == { } || !(lib.any (dir: cfg.stateDir == dir || lib.hasPrefix "${dir}/" cfg.stateDir) [ "/home" "/root" "/run/user" ]);
          message = "services.hermes-agent.stateDir: ${cfg.stateDir} is hidden from the gateways by ProtectHome=true; use a directory under /var/lib.";
        }
      ];

    users.users = lib.mkIf (cfg.user == "hermes") {
      hermes = {
        isSystemUser = true;
        group = cfg.group;
        home = cfg.stateDir;
        description = "Hermes agent";
      };
    };
    users.groups = lib.mkIf (cfg.group == "hermes") { hermes = { }; };

    systemd.tmpfiles.rules = hermesLib.tmpfilesRules {
      inherit (cfg) stateDir;
      owner = "${cfg.user} ${cfg.group}";
    } cfg.profiles
      # The admin `hermes` needs the state home without any unit (and no
      # StateDirectory= makes it outside /var/lib).
      ++ [ "d ${stateHome} 0700 ${cfg.user} ${cfg.group} - -" ]
      # Outside /var/lib no StateDirectory= makes the units' own workspaces.
      ++ lib.optionals (!underVarLib) (lib.concatLists (lib.mapAttrsToList (name: profile:
        lib.optional (ownWorkspace profile) "d ${workspaceOf name profile} 0700 ${cfg.user} ${cfg.group} - -")
        unitProfiles));

    systemd.services = lib.mapAttrs' (name: profile:
      lib.nameValuePair "hermes-agent-${name}" (gatewayUnit name profile)) gatewayProfiles
      // lib.mapAttrs' (name: profile:
        lib.nameValuePair "hermes-agent-${name}-cron" (cronUnit name profile)) timerProfiles
      // lib.optionalAttrs dashboard.enable { hermes-agent-dashboard = dashboardUnit; };

    networking.firewall.allowedTCPPorts =
      lib.optional (dashboard.enable && dashboard.openFirewall) dashboard.port;

    systemd.timers = lib.mapAttrs' (name: profile:
      lib.nameValuePair "hermes-agent-${name}-cron" {
        description = "Hermes scheduled jobs of profile ${name}";
        wantedBy = [ "timers.target" ];
        timerConfig = hermesLib.cronTimerConfig profile;
      }) timerProfiles;

    environment.systemPackages = [ adminWrapper ];
  };
}
