"""`python -m jaxmap`."""

from jaxmap.entry import run

run()
