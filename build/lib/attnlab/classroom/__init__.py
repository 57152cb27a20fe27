"""Classroom logic behind the presenter page: answers, questions and grading, what-if comparisons, the pack's data.

Pure torch and numpy (no Streamlit, no Plotly), so every verdict and every difference can be
tested without a browser. The 11 stages they walk are `attnlab.stages.STEPS`, by name.
"""
