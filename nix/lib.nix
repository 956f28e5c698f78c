# Pieces shared by the NixOS and home-manager modules: the options of one profile,
# the read-only config layer rendered from every profile's settings, the wrapper an
# admin runs, and the checks behind the modules' assertions. Pure: it takes pkgs as
# an argument, so the module test can hand it a small stand-in.
{ lib }:
let
  inherit (lib) mkOption types;

  # The runtime's rules (runtime/hermes/home.py): a profile is a directory name.
  namePattern = "[a-z0-9][a-z0-9_-]{0,63}";
  reservedNames = [ "default" "hermes" "profiles" "profile" "root" "active" "current" "all" "none" "self" ];
  # runtime/hermes/credentials.py: keys whose values are secrets.
  secretKeyPattern = "(.*_)?(token|secret|password|passwd|pass|credentials)|(.*_)?(api|private|access|secret|signing)_key|key";
  apiServerDefaultPort = 8642; # conf/platforms/api_server.yaml

  storeHash = "[0-9a-df-np-sv-z]{32}-(.*)";

  # Never a Hermes root: tmpfiles (or the darwin activation step) would make it mode
  # 0700, and on NixOS the service user's.
  systemDirectories = [
    "/" "/bin" "/boot" "/dev" "/etc" "/home" "/lib" "/lib64" "/media" "/mnt" "/nix"
    "/nix/store" "/nix/var" "/opt" "/proc" "/root" "/run" "/run/user" "/sbin" "/srv"
    "/sys" "/tmp" "/usr" "/usr/local" "/var" "/var/cache" "/var/empty" "/var/lib"
    "/var/log" "/var/spool" "/var/tmp"
    # darwin
    "/Applications" "/Library" "/System" "/Users" "/Volumes" "/private" "/private/var"
  ];

  # "/var//lib/", "/var/./lib" -> "/var/lib" (no ".." handling: asserted against).
  normalizePath = path:
    "/" + lib.concatStringsSep "/" (lib.filter (part: part != "" && part != ".") (lib.splitString "/" path));
in
rec {
  inherit apiServerDefaultPort normalizePath;

  /* The options of services.hermes-agent.profiles.<name>. `settingsFormat` is
     pkgs.formats.yaml { } (or the test's stand-in). */
  profileModule = { settingsFormat, pluginsDir, skillsDir }:
    { name, config, ... }:
    {
      options = {
        settings = mkOption {
          type = settingsFormat.type;
          default = { };
          example = lib.literalExpression ''
            {
              defaults = [ { provider = "anthropic"; } { platforms = "api_server"; } ];
              provider.model = "claude-sonnet-4-5";
              provider.api_key = "\''${secret:ANTHROPIC_API_KEY}";
              agent.max_iterations = 40;
            }
          '';
          description = ''
            Config of this profile, rendered to YAML in the Nix store and given to the
            runtime as a read-only system layer (`HERMES_CONFIG_LAYERS`): above the
            packaged defaults, below the profile's own `config.yaml`, environment and
            command-line overrides. Never merged into a mutable file, so a setting
            removed here is gone at the next start. `defaults` picks group options
            (`{ provider = "anthropic"; }`). Secrets stay out: write
            `"\''${secret:NAME}"` and put `NAME=...` in one of `environmentFiles`.
          '';
        };

        environmentFiles = mkOption {
          type = types.listOf types.str;
          default = [ ];
          example = [ "/run/agenix/hermes-work.env" ];
          description = ''
            Files of `NAME=value` lines (agenix, sops-nix, ...) read by systemd when
            the gateway starts (`EnvironmentFile=`); `''${secret:NAME}` in `settings`
            resolves from them. The layer names them (`secrets.environment_files`) so
            the admin `hermes` reads them too, and sets `secrets.precedence =
            "environment"`: they win over the profile's `.env`, so a secret rotated
            here is used at the next start. The dashboard unit, which serves every
            profile, gets them as credentials (`LoadCredential=`, read by systemd as
            root, so root-only files work): this profile's chats there read this
            profile's files only. Give them as strings: a Nix path would be copied into
            the world-readable store.
          '';
        };

        gateway = {
          enable = lib.mkEnableOption ''
            a hardened systemd service `hermes-agent-<name>` running
            `hermes -p <name> gateway run` (settings must enable a platform)'';
          extraArgs = mkOption {
            type = types.listOf types.str;
            default = [ ];
            example = [ "gateway.shutdown_grace=10" ];
            description = "More arguments after `gateway run` (Hydra overrides, `--profiles a,b`).";
          };
          workingDirectory = mkOption {
            type = types.nullOr types.str;
            default = null;
            example = "/srv/checkouts/app";
            description = ''
              Where the gateway's agent runs commands (its `WorkingDirectory=`; the
              profile's `environment.cwd` still wins). It must lie outside the Hermes
              root, which the local sandbox hides from commands. Unset: on NixOS
              `<stateDir>-workspaces/<name>`, made for the unit; with home-manager
              the user's home.
            '';
          };
          memoryDenyWriteExecute = mkOption {
            type = types.bool;
            default = false;
            description = ''
              systemd's `MemoryDenyWriteExecute=` for the NixOS unit. The commands the
              agent runs inherit it, and JIT runtimes (node, java, pypy) crash under
              it, so it is off: the local sandbox (`environment.local.sandbox`)
              confines those commands instead. Turn it on for a profile whose commands
              need no JIT.
            '';
          };
        };

        cron.timer = {
          enable = lib.mkEnableOption ''
            a systemd timer running `hermes -p <name> cron tick` (the profile's due
            scheduled jobs, once each) for a profile without a gateway; a gateway runs
            its profile's jobs itself'';
          onCalendar = mkOption {
            type = types.str;
            default = "minutely";
            example = "*:0/5";
            description = ''
              When the timer fires (systemd's `OnCalendar=`). Runs missed while the
              machine was off are made up once (`Persistent=`), as the gateway does.
            '';
          };
        };

        extraPlugins = mkOption {
          type = types.listOf types.path;
          default = [ ];
          example = lib.literalExpression "[ ./plugins/weather pkgs.hermes-plugin-jira ]";
          description = ''
            Plugin directories (each holding a `plugin.yaml`), linked read-only from
            the store into one directory named in this profile's layer as
            `plugins.directories`. Named after their directory (store hash removed).
          '';
        };

        extraSkills = mkOption {
          type = types.listOf types.path;
          default = [ ];
          example = lib.literalExpression "[ ./skills/deploy pkgs.hermes-skills-ops ]";
          description = ''
            Skills (a directory holding a `SKILL.md`) or collections of skills (a
            directory of such directories), linked read-only from the store into one
            directory named in this profile's layer as `skills.directories`: searched
            after the profile's own `skills/`, before the bundled skills. Named after
            their directory (store hash removed), which must be the skill's name; a
            collection's name becomes its skills' category.
          '';
        };

        extraPythonPackages = mkOption {
          type = types.listOf types.package;
          default = [ ];
          example = lib.literalExpression "[ pkgs.python312Packages.hermes-memory-honcho ]";
          description = ''
            Python packages (entry-point plugins) added to this profile's gateway
            through `package.override { extraPythonPackages = ...; }`; the admin
            `hermes` gets the packages of every profile.
          '';
        };

        soul = mkOption {
          type = types.nullOr types.path;
          default = null;
          description = ''
            Seed for `SOUL.md`, copied into the home only while it has none (the agent
            and the user may edit it afterwards). By systemd-tmpfiles, not an
            activation script.
          '';
        };

        memories = {
          memory = mkOption {
            type = types.nullOr types.path;
            default = null;
            description = "Seed for `memories/MEMORY.md` (the agent's notes), copied only while absent.";
          };
          user = mkOption {
            type = types.nullOr types.path;
            default = null;
            description = "Seed for `memories/USER.md` (who the user is), copied only while absent.";
          };
        };
      };

      config.settings = lib.mkMerge [
        (lib.mkIf (config.extraPlugins != [ ]) {
          plugins.directories = [ "${pluginsDir name config.extraPlugins}" ];
        })
        (lib.mkIf (config.extraSkills != [ ]) {
          skills.directories = [ "${skillsDir name config.extraSkills}" ];
        })
        # The unit's environment files win over a stale .env (runtime: secrets.*).
        (lib.mkIf (config.environmentFiles != [ ]) {
          secrets.precedence = lib.mkDefault "environment";
          secrets.environment_files = lib.mkDefault config.environmentFiles;
        })
      ];
    };

  pluginName = plugin:
    let
      base = baseNameOf (toString plugin);
      stripped = builtins.match storeHash base;
    in
    plugin.pname or (if stripped == null then base else builtins.head stripped);

  /* One directory of a profile's extraPlugins: <plugin name> -> plugin. */
  mkPluginsDir = pkgs: name: plugins:
    pkgs.linkFarm "hermes-${name}-plugins" (map (p: { name = pluginName p; path = p; }) plugins);

  /* One directory of a profile's extraSkills: <skill or collection name> -> path. */
  mkSkillsDir = pkgs: name: skills:
    pkgs.linkFarm "hermes-${name}-skills" (map (p: { name = pluginName p; path = p; }) skills);

  /* The system layer of every profile: profiles/<name>/config.yaml (see
     runtime/hermes/config/layers.py). One directory for all of them, so a gateway
     serving several profiles gives each its own settings. */
  mkConfigLayer = pkgs: settingsFormat: profiles:
    pkgs.linkFarm "hermes-agent-layer" (lib.mapAttrsToList (name: profile: {
      name = "profiles/${name}/config.yaml";
      path = settingsFormat.generate "hermes-${name}.yaml" profile.settings;
    }) profiles);

  /* The package a profile's gateway runs: with its extraPythonPackages, if any. */
  packageWith = package: extra:
    if extra == [ ] then package else package.override { extraPythonPackages = extra; };

  allExtraPythonPackages = profiles:
    lib.unique (lib.concatMap (p: p.extraPythonPackages) (lib.attrValues profiles));

  homeOf = stateDir: name: "${stateDir}/profiles/${name}";

  /* `<stateDir>-<what>`: beside the root, also when stateDir is written with a
     trailing "/" (which would put it inside). */
  siblingOf = stateDir: what: "${normalizePath stateDir}-${what}";

  /* The NixOS service user's XDG state home. That user's home is the root, where the
     config cache's key may not live (runtime/hermes/config/cache_signing.py: no key,
     no cache), so it is a directory of the user's beside the root. */
  serviceEnvironment = stateDir: { XDG_STATE_HOME = siblingOf stateDir "state"; };

  /* What every hermes process of this deployment sees: the same layer and root. */
  runtimeEnvironment = { stateDir, layer, name }: {
    HERMES_HOME = homeOf stateDir name;
    HERMES_CONFIG_LAYERS = "${layer}";
  };

  /* Options both modules share (stateDir differs: /var/lib or ~/.hermes). */
  commonOptions = { pkgs, settingsFormat, prefix }: {
    package = mkOption {
      type = types.package;
      defaultText = lib.literalMD "the flake's `packages.<system>.default`";
      description = ''
        The Hermes package (built from uv.lock). `extraPythonPackages` needs it to
        take `.override { extraPythonPackages = [ ... ]; }`, as the flake's does.
      '';
    };

    defaultProfile = mkOption {
      type = types.nullOr types.str;
      default = null;
      example = "work";
      description = ''
        Profile the `hermes` command uses without `-p` (null: the root's default
        profile). `hermes -p <name> ...` reaches any profile.
      '';
    };

    profiles = mkOption {
      type = types.attrsOf (types.submodule (profileModule {
        inherit settingsFormat;
        pluginsDir = mkPluginsDir pkgs;
        skillsDir = mkSkillsDir pkgs;
      }));
      default = { };
      description = "Profiles by name; each is a home under `${prefix}.stateDir` with its own settings and secrets.";
    };
  };

  /* The command line of a profile's gateway, as systemd reads ExecStart=. */
  gatewayCommand = package: name: profile: lib.concatMapStringsSep " " escapeSystemdExecArg ([
    "${packageWith package profile.extraPythonPackages}/bin/hermes"
    "-p" name "gateway" "run"
  ] ++ profile.gateway.extraArgs);

  /* The command line of the dashboard unit (services.hermes-agent.dashboard). */
  dashboardCommand = package: profiles: dashboard: lib.concatMapStringsSep " " escapeSystemdExecArg [
    "${packageWith package (allExtraPythonPackages profiles)}/bin/hermes"
    "dashboard" "--no-open" "--host" dashboard.host "--port" (toString dashboard.port)
  ];

  /* The systemd credential an environment file is handed to a unit under
     (runtime/hermes/credentials.py credential_name computes the same). */
  credentialName = path: "hermes-env-${builtins.substring 0 16 (builtins.hashString "sha256" path)}";

  /* Every profile's environmentFiles as LoadCredential= lines: systemd reads them as
     root at start and hands them to the unit's user in its $CREDENTIALS_DIRECTORY, where
     the runtime of profile X reads X's files (its layer's secrets.environment_files)
     and no other's; nothing enters the process environment, so two profiles' equal
     names (OPENAI_API_KEY) never meet. */
  environmentCredentials = profiles: lib.unique (map (path: "${credentialName path}:${path}")
    (lib.concatMap (profile: profile.environmentFiles) (lib.attrValues profiles)));

  /* The command line of a profile's `cron tick`, run by its timer. */
  cronTickCommand = package: name: profile: lib.concatMapStringsSep " " escapeSystemdExecArg [
    "${packageWith package profile.extraPythonPackages}/bin/hermes"
    "-p" name "cron" "tick"
  ];

  /* The timer of a profile's `cron tick` service (NixOS and home-manager spell it alike). */
  cronTimerConfig = profile: {
    OnCalendar = profile.cron.timer.onCalendar;
    Persistent = true;
  };

  /* One word of an ExecStart= line: quoted as systemd unquotes it (C escapes), and
     `%` (specifiers: %n is the unit's name, %2 makes the unit fail to load) and `$`
     (environment variables) doubled so the argument arrives as written. */
  escapeSystemdExecArg = arg: lib.replaceStrings [ "%" "$" ] [ "%%" "$$" ] (builtins.toJSON arg);

  /* The `hermes` an admin or user runs: the services' root and layer. With `runAs`,
     root switches to that user so the files it writes stay the services' own, and
     gets `runAsEnvironment` (the services' own; also when that user runs it). Anyone
     else runs it as themselves, with their own environment. */
  mkWrapper = { pkgs, cfg, layer, runAs ? null, runAsEnvironment ? { }, extraPath ? [ ] }:
    let
      id = "${pkgs.coreutils}/bin/id";
      user = lib.escapeShellArg runAs;
      exports = lib.mapAttrsToList (name: value: "  export ${name}=${lib.escapeShellArg value}")
        runAsEnvironment;
    in
    pkgs.writeShellScriptBin "hermes" (''
      export HERMES_CONFIG_LAYERS=${lib.escapeShellArg "${layer}"}
      export HERMES_HOME=${lib.escapeShellArg (if cfg.defaultProfile == null then cfg.stateDir else homeOf cfg.stateDir cfg.defaultProfile)}
      hermes=${lib.escapeShellArg "${packageWith cfg.package (allExtraPythonPackages cfg.profiles)}/bin/hermes"}
    '' + lib.optionalString (extraPath != [ ]) ''
      export PATH="$PATH:"${lib.escapeShellArg (lib.makeBinPath extraPath)}
    '' + lib.optionalString (runAs != null) (lib.concatLines (
      [ "if [ \"$(${id} -u)\" = 0 ]; then" ]
      ++ exports
      ++ [ "  exec ${pkgs.util-linux}/bin/runuser -u ${user} -- \"$hermes\" \"$@\"" ]
      ++ lib.optionals (exports != [ ]) ([ "elif [ \"$(${id} -un)\" = ${user} ]; then" ] ++ exports)
      ++ [ "fi" ])) + ''
      exec "$hermes" "$@"
    '');

  /* What a root needs on disk: its directories ({ dir }), every profile's home (a
     named profile must exist for `-p`) and seed files ({ target; source; }). */
  homeLayout = stateDir: profiles:
    let
      seed = target: source: lib.optional (source != null) { inherit target source; };
      profileLayout = name: p:
        let home = homeOf stateDir name; in
        [ { dir = home; } ]
        ++ lib.optional (p.memories.memory != null || p.memories.user != null) { dir = "${home}/memories"; }
        ++ seed "${home}/SOUL.md" p.soul
        ++ seed "${home}/memories/MEMORY.md" p.memories.memory
        ++ seed "${home}/memories/USER.md" p.memories.user;
    in
    [ { dir = stateDir; } { dir = "${stateDir}/profiles"; } ]
    ++ lib.concatLists (lib.mapAttrsToList profileLayout profiles);

  /* The layout as systemd-tmpfiles lines: directories 0700, seeds copied only while
     absent (C), then made the owner's to edit (z; store files are 0444). `owner` is
     "user group" or "- -". */
  tmpfilesRules = { stateDir, owner }: profiles:
    lib.concatMap (entry:
      if entry ? dir then [ "d ${entry.dir} 0700 ${owner} - -" ]
      else [
        "C ${entry.target} - - - - ${entry.source}"
        "z ${entry.target} 0600 ${owner} - -"
      ]) (homeLayout stateDir profiles);

  /* The same as a home-manager activation step, where there is no systemd-tmpfiles
     (darwin). `run` is home-manager's: it only prints on a dry run. */
  homeLayoutScript = stateDir: profiles:
    lib.concatMapStrings (entry:
      let q = path: lib.escapeShellArg "${path}"; in
      if entry ? dir then ''
        run mkdir -p ${q entry.dir}
        run chmod 0700 ${q entry.dir}
      '' else ''
        if [ ! -e ${q entry.target} ]; then
          run cp ${q entry.source} ${q entry.target}
          run chmod 0600 ${q entry.target}
        fi
      '') (homeLayout stateDir profiles);

  /* A root that would take over a directory the system or the user needs, or is no
     absolute path. `reserved`: more such directories, with what they are. */
  stateDirAssertions = { prefix, stateDir, suggestion, owner ? null, reserved ? { } }:
    let
      taken = lib.genAttrs systemDirectories (_: "a system directory")
        // lib.mapAttrs' (dir: lib.nameValuePair (normalizePath dir)) reserved;
      normal = normalizePath stateDir;
    in
    [
      {
        assertion = lib.hasPrefix "/" stateDir && !lib.hasInfix "/../" "${stateDir}/";
        message = "${prefix}.stateDir: ${stateDir} must be an absolute path without '..'.";
      }
      {
        # systemd reads % in the units' Environment= (HERMES_HOME) as a specifier.
        assertion = !lib.hasInfix "%" stateDir;
        message = "${prefix}.stateDir: ${stateDir} contains %, which systemd reads as a specifier in the units' Environment=HERMES_HOME=...; use a path without %, such as ${suggestion}.";
      }
      {
        assertion = !taken ? ${normal};
        message = "${prefix}.stateDir: ${stateDir} is ${taken.${normal}}, which Hermes would make mode 0700${lib.optionalString (owner != null) " and ${owner}'s"}; use a directory of its own, such as ${suggestion}.";
      }
    ];

  /* Every contradiction in a configuration of either module. */
  assertionsOf = { prefix, storeDir }: cfg:
    lib.concatLists (lib.mapAttrsToList (profileAssertions { inherit prefix storeDir; }) cfg.profiles)
    ++ portAssertions { inherit prefix; } cfg.profiles
    ++ servedTwiceAssertions { inherit prefix; } cfg.profiles
    ++ [
      {
        assertion = cfg.defaultProfile == null || cfg.profiles ? ${cfg.defaultProfile};
        message = ''${prefix}.defaultProfile: "${toString cfg.defaultProfile}" is not among ${prefix}.profiles (${lib.concatStringsSep ", " (lib.attrNames cfg.profiles)}).'';
      }
      {
        assertion = allExtraPythonPackages cfg.profiles == [ ] || cfg.package ? override;
        message = "${prefix}.package cannot take extraPythonPackages (it has no .override); use the flake's package.";
      }
    ];

  /* Everything about a profile that contradicts itself: [{ assertion; message; }]. */
  profileAssertions = { prefix, storeDir }: name: profile:
    let
      where = "${prefix}.profiles.${name}";
      settings = profile.settings;
      secrets = literalSecrets [ ] settings;
      storeFiles = lib.filter (f: lib.hasPrefix "${storeDir}/" f) profile.environmentFiles;
      relative = lib.filter (f: !lib.hasPrefix "/" f) profile.environmentFiles;
      percentFiles = lib.filter (lib.hasInfix "%") profile.environmentFiles;
      pluginNames = map pluginName profile.extraPlugins;
    in
    [
      {
        assertion = builtins.match namePattern name != null && !lib.elem name reservedNames;
        message = ''${where}: "${name}" is not a profile name: use 1-64 of a-z, 0-9, "_" and "-", starting with a letter or digit, and none of ${lib.concatStringsSep ", " reservedNames}.'';
      }
      {
        assertion = !profile.gateway.enable || platformsOf settings != [ ];
        message = ''${where}.gateway.enable is set but its settings enable no platform, so the gateway would serve nothing: add settings.defaults = [ { platforms = "api_server"; } ] (or settings.platforms.enabled.<name>), or set gateway.enable = false.'';
      }
      {
        assertion = secrets == [ ];
        message = ''${where}.settings.${lib.head (secrets ++ [ "" ])}: a literal secret would be world-readable in the Nix store; write "\''${secret:NAME}" and put NAME=... in a file of ${where}.environmentFiles.'';
      }
      {
        assertion = storeFiles == [ ];
        message = ''${where}.environmentFiles: ${lib.concatStringsSep ", " storeFiles} is in the Nix store, which every user can read; give the path of a file outside it as a string (e.g. config.age.secrets.<name>.path).'';
      }
      {
        # systemd reads % in EnvironmentFile= as a specifier (%2 makes the unit fail to load).
        assertion = percentFiles == [ ];
        message = "${where}.environmentFiles: ${lib.concatStringsSep ", " percentFiles} contains %, which systemd reads as a specifier in EnvironmentFile=; give a path without %.";
      }
      {
        assertion = !(profile.gateway.enable && profile.cron.timer.enable);
        message = "${where}.cron.timer.enable: the profile's gateway runs its scheduled jobs already (every minute); set cron.timer.enable = false, or gateway.enable = false.";
      }
      {
        assertion = relative == [ ];
        message = "${where}.environmentFiles: ${lib.concatStringsSep ", " relative} is not an absolute path.";
      }
      {
        assertion = !(settings ? extends);
        message = ''${where}.settings.extends: a system layer cannot extend a profile; put the shared settings in both profiles (e.g. a let binding) or use extends in the profile's own config.yaml.'';
      }
      {
        assertion = !(settings ? hydra);
        message = "${where}.settings.hydra: reserved by Hydra; remove it.";
      }
      {
        assertion = lib.length (lib.unique pluginNames) == lib.length pluginNames;
        message = "${where}.extraPlugins: two plugins are named the same (${lib.concatStringsSep ", " pluginNames}); each needs its own directory name.";
      }
    ];

  /* Gateways that would bind the same API server port. */
  portAssertions = { prefix }: profiles:
    let
      gateways = lib.filterAttrs (_: p: p.gateway.enable) profiles;
      ports = lib.concatLists (lib.mapAttrsToList (name: p:
        map (port: { inherit name port; }) (apiServerPorts p.settings)) gateways);
      earlier = a: lib.filter (b: b.port == a.port && b.name < a.name) ports;
      clashes = lib.filter (a: earlier a != [ ]) ports;
      first = lib.head clashes;
    in
    [{
      assertion = clashes == [ ];
      message = ''${prefix}.profiles.${first.name}: its api_server listens on port ${toString first.port}, as profile ${(lib.head (earlier first)).name}'s does; set settings.platforms.enabled.api_server.settings.port to a free port.'';
    }];

  /* A profile served by another's gateway (settings.gateway.profiles) and by its own:
     the second gateway would find the first's lock and stop. */
  servedTwiceAssertions = { prefix }: profiles:
    let
      gateways = lib.filterAttrs (_: p: p.gateway.enable) profiles;
      twice = lib.concatLists (lib.mapAttrsToList (name: p:
        map (other: { inherit name other; })
          (lib.filter (other: other != name && gateways ? ${other}) (p.settings.gateway.profiles or [ ])))
        gateways);
      first = lib.head twice;
    in
    [{
      assertion = twice == [ ];
      message = ''${prefix}.profiles.${first.name}.settings.gateway.profiles: its gateway serves ${first.other}, which runs its own gateway too; drop ${first.other} from the list or set ${prefix}.profiles.${first.other}.gateway.enable = false.'';
    }];

  /* Platforms a profile's settings enable: a platforms option other than none, or
     entries of platforms.enabled. */
  platformsOf = settings:
    let
      chosen = lib.concatMap (entry:
        lib.optionals (lib.isAttrs entry) (lib.mapAttrsToList (key: option: { inherit key option; }) entry))
        (settings.defaults or [ ]);
      picked = lib.filter (c: groupOf c.key == "platforms" && c.option != "none") chosen;
      enabled = lib.attrNames (settings.platforms.enabled or { });
    in
    map (c: c.option) picked ++ enabled;

  groupOf = key: lib.removePrefix "/" (lib.trim (lib.removePrefix "override" key));

  apiServerPorts = settings:
    let
      viaOption = lib.elem "api_server" (platformsOf settings);
      server = settings.platforms.enabled.api_server or null;
      port = if server == null then apiServerDefaultPort else server.settings.port or apiServerDefaultPort;
    in
    lib.optional (viaOption || server != null) port;

  /* Dotted keys holding a literal secret (not an interpolation). */
  literalSecrets = path: value:
    if lib.isAttrs value then
      lib.concatLists (lib.mapAttrsToList (key: v:
        let here = path ++ [ key ]; in
        if isSecretKey key && lib.isString v && !lib.hasInfix "\${" v && v != "" then
          [ (lib.concatStringsSep "." here) ]
        else
          literalSecrets here v) value)
    else if lib.isList value then
      lib.concatLists (lib.imap0 (i: v: literalSecrets (path ++ [ (toString i) ]) v) value)
    else
      [ ];

  isSecretKey = key: builtins.match secretKeyPattern (lib.toLower key) != null;
}
