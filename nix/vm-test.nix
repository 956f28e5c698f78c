# NixOS VM test: a gateway profile starts under its hardened unit and its API server
# answers /health; the admin `hermes` reads the same layer as the services. Needs
# KVM: nix build .#checks.x86_64-linux.vm-gateway
{ pkgs, module, package }:
pkgs.testers.runNixOSTest {
  name = "hermes-agent-gateway";

  nodes.machine = { pkgs, ... }: {
    imports = [ module ];
    environment.systemPackages = [ pkgs.curl ];
    # Stands in for an agenix secret: a file outside the store, read by systemd.
    systemd.tmpfiles.rules = [ "f /run/hermes-work.env 0400 root root - OPENAI_API_KEY=sk-test-never-called" ];

    services.hermes-agent = {
      enable = true;
      inherit package;
      defaultProfile = "work";
      profiles.work = {
        settings = {
          defaults = [ { platforms = "api_server"; } ];
          agent.max_iterations = 12;
        };
        environmentFiles = [ "/run/hermes-work.env" ];
        gateway.enable = true;
        soul = pkgs.writeText "SOUL.md" "You answer tersely.";
      };
      profiles.notes.settings.agent.max_iterations = 7;
    };
  };

  testScript = ''
    machine.wait_for_unit("hermes-agent-work.service")
    machine.wait_until_succeeds("curl -sf http://127.0.0.1:8642/health | grep -q '\"status\":\"ok\"'", timeout=120)

    with subtest("the home belongs to the service user and the seed was copied"):
        machine.succeed("test \"$(stat -c %U:%a /var/lib/hermes-agent/profiles/work)\" = hermes:700")
        machine.succeed("grep -q tersely /var/lib/hermes-agent/profiles/work/SOUL.md")
        machine.succeed("test \"$(stat -c %U:%a /var/lib/hermes-agent/profiles/work/SOUL.md)\" = hermes:600")

    with subtest("the admin hermes composes each profile's own layer"):
        machine.succeed("hermes config get agent.max_iterations | grep -x 12")
        machine.succeed("hermes -p notes config get agent.max_iterations | grep -x 7")
        machine.succeed("hermes -p work config explain agent.max_iterations | grep -q 'system:work'")

    with subtest("the config cache's key lies beside the root, the service user's"):
        machine.succeed("test \"$(stat -c %U:%a /var/lib/hermes-agent-state)\" = hermes:700")
        machine.succeed("test \"$(stat -c %U:%a /var/lib/hermes-agent-state/hermes/cache-keys/config-cache-*.key)\" = hermes:600")
        machine.succeed("ls /var/lib/hermes-agent/profiles/work/.cache/config/*.json")
        machine.fail("test -e /var/lib/hermes-agent/.local")

    with subtest("the unit is hardened"):
        print(machine.succeed("systemd-analyze security hermes-agent-work.service | tail -1"))
        machine.succeed("systemctl show -p NoNewPrivileges hermes-agent-work | grep -x NoNewPrivileges=yes")

    with subtest("restart on failure"):
        machine.succeed("systemctl kill -s KILL hermes-agent-work")
        machine.wait_until_succeeds("curl -sf http://127.0.0.1:8642/health", timeout=120)
  '';
}
