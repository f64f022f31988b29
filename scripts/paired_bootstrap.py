"""Paired bootstrap over test samples, shared by the study scripts (objective_study.sh,
calib_size_study.sh): 95% percentile intervals from 10000 resamples, as `bosch compare` computes
its own (with another random stream, so the last digit of an interval may differ from compare's)."""
import random


def boot(d, n=10000, seed=7):
    """Mean of d and its 95% bootstrap interval (percentiles of n resampled means)."""
    rng = random.Random(seed)
    k = len(d)
    means = sorted(sum(d[rng.randrange(k)] for _ in range(k)) / k for _ in range(n))
    return sum(d) / k, means[int(0.025 * n)], means[int(0.975 * n)]


def paired_ci(a, b, scale):
    """'+mean [lo, hi]' of (a - b) / scale per sample, tagged better/worse when 0 is outside."""
    mean, lo, hi = boot([(x - y) / scale for x, y in zip(a, b)])
    tag = " (better)" if lo > 0 else " (worse)" if hi < 0 else ""
    return f"{mean:+.3f} [{lo:+.3f}, {hi:+.3f}]{tag}"
