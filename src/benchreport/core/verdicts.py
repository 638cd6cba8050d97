"""The values of verdict figures (unit "verdict"): analyses set them, publishing picks
sentences by them; both import them from here, so neither spells them."""

# decode.<w>.<e>.steady
FOUND, NONE, NO_LOG = "found", "none", "no log"
# e2e.<w>.gap.where: where most of an end-to-end gap accrued
FIRST_TOKENS, DECODE, BOTH, UNKNOWN = "first tokens", "decode", "both", "not derivable"
# yes/no verdicts: limits.kv_fits, model.crossover.<a>.<b>.beyond, latency.<w>.<e>.p99_is_max
YES, NO = "yes", "no"
# model.crossover.<a>.<b> when the lines do not cross
NO_CROSSING = "none"
# prefill.<w>.<e>.r<n>.recovery context "batch"
MIXED, PURE, UNKNOWN_BATCH = "mixed", "pure", "unknown"
# compare.<w>.<a>.<b>.<load>.<metric>.verdict (analyses.stats.verdict): a ratio's interval
# above 1, below it, holding it, or no interval at all (fewer than two repeats)
HIGHER, LOWER, TIE_IN_NOISE, NO_INTERVAL = "higher", "lower", "tie", "unknown"
# point.<p>.validity (analyses.validity)
VALID, FLAGGED, INVALID = "valid", "flagged", "invalid"
# slo.<w>.<s>.capacity context "status" (analyses.curves)
INTERPOLATED, BELOW, NOT_REACHED = "interpolated", "below", "not reached"
# the level of every interval of repeats
INTERVAL_LEVEL = 0.95
# delta.<ra>.<rb>.<point>.<metric>.verdict (analyses.compare): a change between two runs for
# the better or the worse by the metric's direction; within noise and no interval as above
IMPROVED, REGRESSED = "improved", "regressed"
# ... and when both runs' values come from the same file (same sha256): no change to judge
SAME_DATA = "same data"
# the regression gate's words for those (analyses.gate; CLI, JSON and Markdown output)
GATE_WORDS = {IMPROVED: "better", REGRESSED: "worse", TIE_IN_NOISE: "within noise",
              NO_INTERVAL: "cannot tell", SAME_DATA: "same data"}
# consistency.<w>.<e>.<check> (analyses.consistency): two sources of one quantity agree
# within their tolerance, or not; e2e.<w>.gap.where is INCONSISTENT when the duration it
# rests on is
CONSISTENT, INCONSISTENT = "consistent", "inconsistent"
# the checks whose failure puts a client's duration in doubt (analyses.consistency)
DURATION_CHECKS = ("duration", "metrics_span", "latency_span")
# point.<p>.validity, further verdicts (analyses.validity): the server could not keep up with
# the load asked (a finding, kept in the curves), and the files cannot tell a client that fell
# behind from a server that queued
SATURATED, CANNOT_TELL = "saturated", "cannot tell"
# the outcome of one validity check that found nothing to report: it ran and passed, it could
# not run for want of an input (never counted as passed), or it left a note only
PASSED, NOT_EVALUABLE, NOTE = "passed", "not evaluable", "note"
# a count the log era does not print (state.<w>.<e>.preemptions): never read as 0
NOT_MEASURED = "not measured"
# point.<p>.validity when no check could run (each was not evaluable or not applicable):
# nothing confirms the point, nothing faults it; kept in the curves like a valid point
UNVERIFIED = "unverified"
# the outcome of a check whose question does not arise for the point (a run bound by a
# duration was asked no request count): neither passed nor lacking an input
NOT_APPLICABLE = "not applicable"
# stepmodel.<e>.fit (analyses.stepmodel): the step model solved exactly (two points) or by
# least squares (more), else NOT_EVALUABLE; stepmodel.<e>.bound: EVALUATED or NOT_EVALUABLE
FIT_EXACT, FIT_LEAST_SQUARES, EVALUATED = "exact", "least squares", "evaluated"
# stepmodel.<e>.fixed_vs_bound: the fitted fixed cost per step against its memory-bandwidth
# lower bound
BELOW_BOUND, ABOVE_BOUND = "below the bound", "above the bound"
# stepmodel.<e>.line_vs_bound: where the fitted step line (fixed + per KV token × KV tokens)
# lies under its whole memory-bandwidth bound (weights + KV): below it up to a crossover,
# beyond one, at every KV count, or at none
BELOW_UNTIL, BELOW_BEYOND = "below the bound up to the crossover", \
    "below the bound beyond the crossover"
ALWAYS_BELOW, NEVER_BELOW = "always below the bound", "never below the bound"

# the request timeline (analyses.timeline), shared with the page that words it: a gap above
# STALL_FACTOR times the request's median gap is a stall or a shared step; a request's own
# prefill is read from its chunks, estimated from the full prefill speed, or unplaced
STALL_FACTOR = 5.0
PREFILL_CHUNKS, PREFILL_ESTIMATE, PHASE_UNPLACED = "chunks", "estimate", "unplaced"
# how a request's arrival at the client is known: the client's own send times, all sent at
# once (num_prompts ≤ concurrency), or not at all
SENT_AT_ONCE, CLIENT_TIMES, NOT_MEASURED = "sent at once", "client start times", "not measured"
# history.<e>.<w>.<load>.<metric>.verdict (analyses.history): the metric's level changed
# at one run or more of the history (a permutation test), did not, or the history is too
# short to tell (CANNOT_TELL: never read as "no change")
LEVEL_CHANGED, NO_LEVEL_CHANGE = "level changed", "no level change"
