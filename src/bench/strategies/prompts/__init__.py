"""Prompt texts of the built-in strategies, kept out of code so they read and diff as prose."""
