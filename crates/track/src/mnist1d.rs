//! Track `mnist1d`: MNIST-1D sequence classification (Greydanus 2020, "Scaling down deep
//! learning"). The generator is the PyPI package's `mnist1d.data.make_dataset(
//! get_dataset_args())` (version 0.0.2.post1) ported step by step, drawing from numpy's legacy
//! RandomState as the package does, so that any `seed` gives the package's dataset (labels
//! equal, values within 1e-9; `tests/fixtures/mnist1d.json`). Seed 42 is the published set.

use crate::legacy_random::LegacyRandom;
use crate::signal::{gaussian_filter1d, linspace, resample};
use crate::{Dataset, Reference, Task, Track, TrackData};

/// The package's `get_dataset_args()` (the fields the generator reads).
#[derive(Clone, Debug, PartialEq)]
pub struct Mnist1dArgs {
    /// Examples in all (split 80/20 into train and test).
    pub num_samples: usize,
    /// Fraction of the shuffled set that is train.
    pub train_split: f64,
    /// Template length (12 points).
    pub template_len: usize,
    /// Zeros appended to a template: `low + int(u * (high - low + 1))`.
    pub padding: [usize; 2],
    /// Amplitude scaled by `1 + scale_coeff (u - 0.5)`.
    pub scale_coeff: f64,
    /// Circular shift drawn from `choice(max_translation)`.
    pub max_translation: usize,
    /// Scale of the Gaussian-filtered noise put where the padded signal is zero.
    pub corr_noise_scale: f64,
    /// Scale of the iid noise added everywhere.
    pub iid_noise_scale: f64,
    /// Shear coefficient `shear_scale (u - 0.5)`.
    pub shear_scale: f64,
    /// Steps per final sequence.
    pub final_seq_length: usize,
}

impl Default for Mnist1dArgs {
    fn default() -> Self {
        Mnist1dArgs {
            num_samples: 5000,
            train_split: 0.8,
            template_len: 12,
            padding: [36, 60],
            scale_coeff: 0.4,
            max_translation: 48,
            corr_noise_scale: 0.25,
            iid_noise_scale: 2e-2,
            shear_scale: 0.75,
            final_seq_length: 40,
        }
    }
}

/// The package's generated arrays in float64: `x [N, 40]` row-major and labels, train then
/// test (`dataset['x'], dataset['y']` and `dataset['x_test'], dataset['y_test']`).
#[derive(Clone, Debug, PartialEq)]
pub struct Mnist1dData {
    /// Train sequences, `n_train * len` values.
    pub x: Vec<f64>,
    /// Train labels 0..9.
    pub y: Vec<u8>,
    /// Test sequences.
    pub x_test: Vec<f64>,
    /// Test labels.
    pub y_test: Vec<u8>,
    /// Steps per sequence.
    pub len: usize,
}

/// The ten digit templates of `get_templates()`, 12 points each.
const DIGITS: [[f64; 12]; 10] = [
    [5.0, 6.0, 6.5, 6.75, 7.0, 7.0, 7.0, 7.0, 6.75, 6.5, 6.0, 5.0],
    [5.0, 3.0, 3.0, 3.4, 3.8, 4.2, 4.6, 5.0, 5.4, 5.8, 5.0, 5.0],
    [5.0, 6.0, 6.5, 6.5, 6.0, 5.25, 4.75, 4.0, 3.5, 3.5, 4.0, 5.0],
    [5.0, 6.0, 6.5, 6.5, 6.0, 5.0, 5.0, 6.0, 6.5, 6.5, 6.0, 5.0],
    [5.0, 4.4, 3.8, 3.2, 2.6, 2.6, 5.0, 5.0, 5.0, 5.0, 5.0, 5.0],
    [5.0, 3.0, 3.0, 3.0, 3.0, 5.0, 6.0, 6.5, 6.5, 6.0, 4.5, 5.0],
    [5.0, 4.0, 3.5, 3.25, 3.0, 3.0, 3.0, 3.0, 3.25, 3.5, 4.0, 5.0],
    [5.0, 7.0, 7.0, 6.6, 6.2, 5.8, 5.4, 5.0, 4.6, 4.2, 5.0, 5.0],
    [5.0, 4.0, 3.5, 3.5, 4.0, 5.0, 5.0, 4.0, 3.5, 3.5, 4.0, 5.0],
    [5.0, 4.0, 3.5, 3.5, 4.0, 5.0, 5.0, 5.0, 5.0, 4.7, 4.3, 5.0],
];

/// `get_templates()['x']`: each digit whitened (mean 0, std 1), shifted to start at 0, / 6.
pub fn templates() -> Vec<Vec<f64>> {
    DIGITS
        .iter()
        .map(|d| {
            let m = crate::signal::mean(d);
            let centred: Vec<f64> = d.iter().map(|v| v - m).collect();
            let s = crate::signal::std(&centred);
            let white: Vec<f64> = centred.iter().map(|v| v / s).collect();
            white.iter().map(|v| (v - white[0]) / 6.0).collect()
        })
        .collect()
}

/// `transform(x, t, args)` for one example: pad, dilate, scale, translate, correlated noise
/// where the signal is zero, iid noise, shear, subsample. The draws, in the package's order:
/// rand (pad), rand (scale), choice (shift), randn x L (correlated), randn x L (iid), rand
/// (shear).
fn transform(template: &[f64], args: &Mnist1dArgs, rng: &mut LegacyRandom) -> Vec<f64> {
    const EPS: f64 = 1e-8;
    let [low, high] = args.padding;
    let p = low + (rng.random_sample() * (high - low + 1) as f64) as usize;
    let mut padded: Vec<f64> = template.iter().map(|v| v + EPS).collect();
    padded.resize(padded.len() + p, 0.0);
    let len = args.template_len + high;
    let mut x = resample(&padded, len);
    let scale = 1.0 + args.scale_coeff * (rng.random_sample() - 0.5);
    x.iter_mut().for_each(|v| *v *= scale);
    // concatenate([x[-k:], x[:-k]]): a circular shift right by k (k = 0 keeps x).
    let k = rng.randint(args.max_translation as u64) as usize;
    x.rotate_right(k);
    let corr: Vec<f64> = (0..len).map(|_| args.corr_noise_scale * rng.standard_normal()).collect();
    let corr = gaussian_filter1d(&corr, 2.0);
    // mask * x + (1 - mask) * corr: exactly x where x != 0, exactly corr where it is 0.
    for (v, c) in x.iter_mut().zip(&corr) {
        if *v == 0.0 {
            *v = *c;
        }
    }
    for v in x.iter_mut() {
        *v += args.iid_noise_scale * rng.standard_normal();
    }
    let coeff = args.shear_scale * (rng.random_sample() - 0.5);
    for (v, s) in x.iter_mut().zip(linspace(-0.5, 0.5, len)) {
        *v -= coeff * s;
    }
    resample(&x, args.final_seq_length)
}

/// `make_dataset(args)` with `args.seed = seed`: every class's examples in label order, one
/// permutation of the whole set, one global normalisation (mean 0, std 1), the train/test
/// split.
pub fn make_dataset(args: &Mnist1dArgs, seed: u32) -> Mnist1dData {
    let mut rng = LegacyRandom::new(seed);
    let templates = templates();
    let per_class = args.num_samples / templates.len();
    let mut xs: Vec<Vec<f64>> = Vec::with_capacity(per_class * templates.len());
    let mut ys: Vec<u8> = Vec::with_capacity(xs.capacity());
    for (label, t) in templates.iter().enumerate() {
        for _ in 0..per_class {
            xs.push(transform(t, args, &mut rng));
            ys.push(label as u8);
        }
    }
    let order = rng.permutation(ys.len());
    let flat: Vec<f64> = order.iter().flat_map(|&i| xs[i].iter().copied()).collect();
    let ys: Vec<u8> = order.iter().map(|&i| ys[i]).collect();
    let (m, s) = (crate::signal::mean(&flat), crate::signal::std(&flat));
    let flat: Vec<f64> = flat.iter().map(|v| (v - m) / s).collect();
    let len = args.final_seq_length;
    let split = (ys.len() as f64 * args.train_split) as usize;
    Mnist1dData {
        x: flat[..split * len].to_vec(),
        y: ys[..split].to_vec(),
        x_test: flat[split * len..].to_vec(),
        y_test: ys[split..].to_vec(),
        len,
    }
}

/// The MNIST-1D track: 4000 train / 1000 test sequences of 40 steps (the package's
/// `final_seq_length`), one feature per step, ten classes, read out from the last hidden
/// state.
#[derive(Clone, Debug, Default)]
pub struct Mnist1d {
    /// The generator's arguments (the package's defaults).
    pub args: Mnist1dArgs,
}

impl Mnist1d {
    /// The package's dataset resampled to `final_seq_length` steps, as `make_dataset` makes
    /// it with that argument (the other arguments the package's defaults).
    pub fn new(final_seq_length: usize) -> Self {
        Mnist1d { args: Mnist1dArgs { final_seq_length, ..Mnist1dArgs::default() } }
    }
}

/// Train sequences a bench uses when `train_size` is 0: what fits the machine (the default
/// protocol in at most twice the pendulum's time natively, docs/PERF.md).
pub const MNIST1D_DEFAULT_TRAIN: usize = 1000;

/// Labels 0..9 of MNIST-1D.
const CLASSES: usize = 10;

fn dataset(x: &[f64], labels: &[u8], len: usize) -> Dataset {
    Dataset {
        n: labels.len(),
        t: len,
        f_in: 1,
        f_out: CLASSES,
        x: x.iter().map(|&v| v as f32).collect(),
        y: labels.iter().flat_map(|&c| (0..CLASSES).map(move |k| if k == c as usize { 1.0 } else { 0.0 })).collect(),
        task: Task::Classification { classes: CLASSES },
    }
}

impl Track for Mnist1d {
    fn input_dim(&self) -> usize {
        1
    }
    fn output_dim(&self) -> usize {
        CLASSES
    }
    fn seq_len(&self) -> usize {
        self.args.final_seq_length
    }
    fn n_train(&self) -> usize {
        (self.args.num_samples as f64 * self.args.train_split) as usize
    }
    fn n_test(&self) -> usize {
        self.args.num_samples - self.n_train()
    }
    fn default_train(&self) -> usize {
        MNIST1D_DEFAULT_TRAIN
    }
    fn task(&self) -> Task {
        Task::Classification { classes: CLASSES }
    }
    fn max_data_seed(&self) -> u64 {
        u32::MAX as u64
    }
    fn generate(&self, data_seed: u64, n_train: usize) -> TrackData {
        let seed = u32::try_from(data_seed).expect("the config check keeps the mnist1d data seed within 32 bits");
        let d = make_dataset(&self.args, seed);
        TrackData { train: dataset(&d.x, &d.y, d.len), test: dataset(&d.x_test, &d.y_test, d.len) }.with_train(n_train)
    }
    fn reference(&self, data: &TrackData) -> Reference {
        let train = data.train.labels().expect("mnist1d is a classification");
        let test = data.test.labels().expect("mnist1d is a classification");
        let class = majority_class(&train);
        let hits = test.iter().filter(|&&c| c == class).count();
        Reference {
            name: format!("always predicting the training set's majority class ({class})"),
            metric: hits as f64 / test.len() as f64,
        }
    }
}

/// The most frequent label, the smallest on a tie.
pub fn majority_class(labels: &[usize]) -> usize {
    let mut counts = [0usize; CLASSES];
    for &c in labels {
        counts[c] += 1;
    }
    // max_by_key keeps the last maximum; reversed, that is the smallest class.
    (0..CLASSES).rev().max_by_key(|&c| counts[c]).expect("at least one class")
}
