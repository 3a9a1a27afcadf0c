"""Building the answer text: quoted passages, prompts and the LLM, citations, wording."""
