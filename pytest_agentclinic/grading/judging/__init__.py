"""The judging wing: stages 2 to 4, relating the names to the truth, deciding, asking a moderator;
the one entry of a run, ``agentclinic grade`` and the tools."""
