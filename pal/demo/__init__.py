"""Seeded, realistic demo history in CSIT's output.xml format."""
