"""Committed snapshots of released jax versions' primitive indexes (package data)."""
