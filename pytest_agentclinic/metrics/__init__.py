"""Measures beyond accuracy: case facts, information gathering, test cost, patient fidelity.

Pure functions over case text and utterances; this package imports only ``cases`` and
``grading.normalize`` so agents, protocols and reports can all use it.
"""
