"""The engine-counter benches' judgement of two figures per operation
(engine_counters_vs_sysbench.sh, tpcc_engine_counters_vs_sysbench.sh; imported by their
Python parts, which run from the repository's root): a counter is compared when either
tool's figure is at least 0.05 per operation (below that the ratio is noise, not a
difference of work), and flagged when enginebench's is outside 0.95-1.05 of the reference's.
"""


def judged(reference, ours, floor=0.05):
    """(compared, flag): whether the pair counts as compared, and the flag to print."""
    if max(reference, ours) < floor:
        return False, ""
    ratio = ours / reference if reference else float("inf")
    return True, "" if 0.95 <= ratio <= 1.05 else "   <- outside 5%"
