"""Weights staging on the controller: the plan of a stage - what each host lacks, whether it has room for it, who
pulls from whom in which round (_stage_plan).  Pure; may import core and plan (plan/_model_sources.py: the
sources an operator names)."""
