//! numpy's legacy `RandomState` (the global `np.random` after `np.random.seed(s)`), the draws
//! MNIST-1D makes, as numpy does them: MT19937 seeded by `init_genrand` (`rand_mt`), then
//! `random_sample`, `standard_normal` (the polar method with its cached second value), the
//! masked bounded integers of `randint`/`choice`, and `permutation`'s Fisher–Yates over
//! `random_interval`. Pinned against numpy itself (`tests/fixtures/numpy_legacy.json`).

use rand_mt::Mt;

/// `numpy.random.RandomState(seed)`: the generator and its Gaussian cache.
pub struct LegacyRandom {
    mt: Mt,
    /// The second value of the last polar draw, returned by the next `standard_normal`.
    gauss: Option<f64>,
}

impl LegacyRandom {
    /// `np.random.seed(seed)`: MT19937's `init_genrand`, with an empty Gaussian cache.
    pub fn new(seed: u32) -> Self {
        LegacyRandom { mt: Mt::new(seed), gauss: None }
    }

    /// One raw 32-bit draw (`next_uint32`).
    pub fn next_u32(&mut self) -> u32 {
        self.mt.next_u32()
    }

    /// `random_sample()` / `rand()`: a 53-bit double in [0, 1) from two 32-bit draws.
    pub fn random_sample(&mut self) -> f64 {
        let a = (self.next_u32() >> 5) as f64;
        let b = (self.next_u32() >> 6) as f64;
        (a * 67_108_864.0 + b) / 9_007_199_254_740_992.0
    }

    /// `standard_normal()` / `randn()`: numpy's `legacy_gauss`, the polar Box–Muller method
    /// that returns one value of each pair and keeps the other for the next call.
    pub fn standard_normal(&mut self) -> f64 {
        if let Some(g) = self.gauss.take() {
            return g;
        }
        let (x1, x2, r2) = loop {
            let x1 = 2.0 * self.random_sample() - 1.0;
            let x2 = 2.0 * self.random_sample() - 1.0;
            let r2 = x1 * x1 + x2 * x2;
            if r2 < 1.0 && r2 != 0.0 {
                break (x1, x2, r2);
            }
        };
        let f = (-2.0 * r2.ln() / r2).sqrt();
        self.gauss = Some(f * x1);
        f * x2
    }

    /// `randint(0, high)` (and so `choice(high)`): numpy's legacy masked rejection sampling,
    /// a 32-bit draw masked to the smallest all-ones mask covering `high - 1`, redrawn until
    /// it is at most `high - 1`. `high` must be in 1..=2^32.
    pub fn randint(&mut self, high: u64) -> u64 {
        assert!((1..=1 << 32).contains(&high), "randint(0, {high}) is outside the 32-bit path");
        let rng = high - 1;
        if rng == 0 {
            return 0;
        }
        if rng == u32::MAX as u64 {
            return self.next_u32() as u64;
        }
        let mask = smallest_mask(rng);
        loop {
            let v = (self.next_u32() as u64) & mask;
            if v <= rng {
                return v;
            }
        }
    }

    /// `random_interval(max)`: a value in 0..=max by masked rejection (32-bit draws while
    /// `max` fits in 32 bits), what `shuffle` draws.
    fn interval(&mut self, max: u64) -> u64 {
        if max == 0 {
            return 0;
        }
        assert!(max <= u32::MAX as u64, "interval {max} needs numpy's 64-bit path");
        let mask = smallest_mask(max);
        loop {
            let v = (self.next_u32() as u64) & mask;
            if v <= max {
                return v;
            }
        }
    }

    /// `permutation(n)`: `arange(n)` shuffled by numpy's legacy Fisher–Yates (i from n - 1
    /// down to 1, swapped with `random_interval(i)`).
    pub fn permutation(&mut self, n: usize) -> Vec<usize> {
        let mut p: Vec<usize> = (0..n).collect();
        for i in (1..n).rev() {
            let j = self.interval(i as u64) as usize;
            p.swap(i, j);
        }
        p
    }
}

/// The smallest all-ones bit mask >= `v`.
fn smallest_mask(v: u64) -> u64 {
    u64::MAX >> v.leading_zeros()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn masks_cover_their_value() {
        assert_eq!(smallest_mask(1), 1);
        assert_eq!(smallest_mask(47), 63);
        assert_eq!(smallest_mask(64), 127);
        assert_eq!(smallest_mask(4999), 8191);
    }

    #[test]
    fn permutation_is_a_permutation() {
        let mut p = LegacyRandom::new(3).permutation(1000);
        p.sort_unstable();
        assert_eq!(p, (0..1000).collect::<Vec<_>>());
    }
}
