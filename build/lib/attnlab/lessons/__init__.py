"""Lessons built on the seed tutorials: the pure math behind each lesson page (torch + numpy only).

One module per lesson; views/lesson_*.py draw what these functions compute, so every number a
lesson shows (8 for the soft dictionary, the sinusoid values, the fitted slopes) comes from here.
"""
