"""The presenter page (/present): one stage per screen, predict-then-reveal questions, the score."""
