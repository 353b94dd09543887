"""What the LLM features (judge, rater, generation) share: endpoints and their keys."""
