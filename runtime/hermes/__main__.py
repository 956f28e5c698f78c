from hermes.cli.main import run

run()
