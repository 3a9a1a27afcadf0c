"""Building the answer text: quoted passages, prompts, citations, wording."""
