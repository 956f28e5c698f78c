from hermes.entry import run

run()
