# branin_trial.awk - a relish trial that prints Branin's value at (x0, x1),
# for the end-to-end check of scripts/bench-regret.sh:
#   awk -f bench/branin_trial.awk X0 X1
# prints "RELISH epoch=1 value=V" (V with 17 significant digits, so relish
# stores the double bench_regret computes for the same point).
BEGIN {
	pi = atan2(0, -1)
	x0 = ARGV[1] + 0; x1 = ARGV[2] + 0
	b = 5.1 / (4 * pi * pi); c = 5 / pi; t = 1 / (8 * pi)
	q = x1 - b * x0 * x0 + c * x0 - 6
	printf "RELISH epoch=1 value=%.17g\n", q * q + 10 * (1 - t) * cos(x0) + 10
	exit 0
}
