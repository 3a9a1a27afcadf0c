"""Deciding whether and how to answer: the answerability check, the evidence, the answer policy."""
