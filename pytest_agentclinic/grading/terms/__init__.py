"""The terms wing: what names are and how two names relate (concepts, readings, equivalence, kinds,
concurrent), above the terminology store of :mod:`pytest_agentclinic.grading.terminology`."""
