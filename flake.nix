{
  description = "Hermes runtime: a declarative, config-driven AI agent runtime";

  # Pinned by revision; `nix flake lock` records their hashes in flake.lock (see the
  # README's NixOS section). The package's Python dependencies come from uv.lock.
  inputs = {
    nixpkgs.url = "github:NixOS/nixpkgs/d407951447dcd00442e97087bf374aad70c04cea";
    pyproject-nix = {
      url = "github:pyproject-nix/pyproject.nix/7af23cfe91064865ecf2e835da28b45b3c6f49fd";
      inputs.nixpkgs.follows = "nixpkgs";
    };
    uv2nix = {
      url = "github:pyproject-nix/uv2nix/49dac8d206c42175b069b7c6050ba27060a21106";
      inputs.pyproject-nix.follows = "pyproject-nix";
      inputs.nixpkgs.follows = "nixpkgs";
    };
    pyproject-build-systems = {
      url = "github:pyproject-nix/build-system-pkgs/90ffdeee1a4929b231913df067448cd9803d3e07";
      inputs.pyproject-nix.follows = "pyproject-nix";
      inputs.uv2nix.follows = "uv2nix";
      inputs.nixpkgs.follows = "nixpkgs";
    };
  };

  outputs = { self, nixpkgs, pyproject-nix, uv2nix, pyproject-build-systems }:
    let
      inherit (nixpkgs) lib;
      linux = [ "x86_64-linux" "aarch64-linux" ];
      systems = linux ++ [ "aarch64-darwin" ];
      forSystems = names: f: lib.genAttrs names (system: f nixpkgs.legacyPackages.${system});

      hermesFor = pkgs: pkgs.callPackage ./nix/package.nix {
        inherit uv2nix pyproject-nix pyproject-build-systems;
      };

      # The modules default to this flake's package for the machine's platform.
      withPackage = path: option: { pkgs, ... }: {
        imports = [ path ];
        config = lib.setAttrByPath option (lib.mkDefault self.packages.${pkgs.stdenv.hostPlatform.system}.default);
      };
    in
    {
      packages = forSystems systems (pkgs: { default = hermesFor pkgs; });

      # On darwin only the package and the dev shell (the NixOS module and the checks are
      # Linux's; the home-manager module works there too).
      apps = forSystems linux (pkgs: {
        default = {
          type = "app";
          program = lib.getExe self.packages.${pkgs.stdenv.hostPlatform.system}.default;
          meta.description = "The hermes command";
        };
      });

      overlays.default = final: _prev: { hermes-runtime = hermesFor final; };

      nixosModules.default = withPackage ./nix/module.nix [ "services" "hermes-agent" "package" ];
      homeManagerModules.default = withPackage ./nix/home-manager.nix [ "programs" "hermes-agent" "package" ];

      devShells = forSystems systems (pkgs: {
        default = pkgs.mkShell {
          # The tests' tools: uv syncs the locked venv (uv sync --frozen --group test);
          # nix-instantiate parses and evaluates the .nix files; docker and sshd are
          # the integration tests' (started by the tests where they are missing).
          packages = [ pkgs.python312 pkgs.uv pkgs.nix pkgs.git ]
            ++ lib.optionals pkgs.stdenv.isLinux [ pkgs.docker pkgs.openssh ];
          env = {
            UV_PYTHON = pkgs.python312.interpreter;
            UV_PYTHON_DOWNLOADS = "never";
            # tests/test_nix.py evaluates the modules and the package's build plan with these.
            HERMES_TEST_NIXPKGS_LIB = "${nixpkgs}";
            HERMES_TEST_UV2NIX = "${uv2nix}";
            HERMES_TEST_PYPROJECT_NIX = "${pyproject-nix}";
            HERMES_TEST_BUILD_SYSTEM_PKGS = "${pyproject-build-systems}";
          };
        };
      });

      checks = forSystems linux (pkgs: import ./nix/checks.nix {
        inherit pkgs lib nixpkgs;
        module = self.nixosModules.default;
        package = self.packages.${pkgs.stdenv.hostPlatform.system}.default;
      });
    };
}
