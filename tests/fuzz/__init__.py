"""Fuzz corpus of issue 13: every input gets an answer."""
