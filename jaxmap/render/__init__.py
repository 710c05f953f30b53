"""Pure functions from query results to text: plain terminal text and JSON."""
