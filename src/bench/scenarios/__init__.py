"""Scenario files (data) and the generators that write them."""
