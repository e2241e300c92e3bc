"""Prompt files of the scorers (probe question, judge rubric grading), kept out of code."""
