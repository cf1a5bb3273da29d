"""gdrbench's sweep, plot, accept and report tools (scripts/gdrb), Python 3.8+, standard library only."""
