//! The information buffer of a model whose step forgets (rev_gru): a stack of the digits each
//! step forgot, so that the reversal rebuilds every state bit for bit (MacKay et al. 2018).
//!
//! A digit is below 2^bits (the forgetting cap), so a word packs the digits of
//! `steps_per_word(bits)` steps, `word * 2^bits + digit`, and stays below 2^24: an integer an
//! f32 holds exactly. Words are `[R, B, H]` tensors like the states, on the states' device, so
//! the buffer costs no device read; each word held is counted as one state held. The paper
//! grows 64-bit integers by -log2 z bits per step; this buffer spends the cap's bits on every
//! step, so it is never smaller than what was forgotten and at most `bits` bits per unit and
//! step.

use burn::tensor::Tensor;
use rdbench_core::models::steps_per_word;

/// The stack of forgotten digits of a population's rows.
pub struct InfoBuffer {
    radix: f32,
    per_word: usize,
    /// Full words, oldest first.
    full: Vec<Tensor<3>>,
    /// The word being filled and how many digits it holds.
    open: Option<(Tensor<3>, usize)>,
    /// Most words held at once.
    peak_words: usize,
}

impl InfoBuffer {
    /// An empty buffer for digits below 2^bits.
    pub fn new(bits: u32) -> Self {
        InfoBuffer {
            radix: (bits as f32).exp2(),
            per_word: steps_per_word(bits as usize),
            full: Vec::new(),
            open: None,
            peak_words: 0,
        }
    }

    /// Keep one step's digits.
    pub fn push(&mut self, digits: Tensor<3>) {
        let (word, n) = match self.open.take() {
            None => (digits, 1),
            Some((w, n)) => (w.mul_scalar(self.radix) + digits, n + 1),
        };
        if n == self.per_word {
            self.full.push(word);
        } else {
            self.open = Some((word, n));
        }
        self.peak_words = self.peak_words.max(self.words());
    }

    /// The last kept step's digits (taken off the buffer).
    pub fn pop(&mut self) -> Tensor<3> {
        let (word, n) = match self.open.take() {
            Some(open) => open,
            None => (self.full.pop().expect("a digit for every step pushed"), self.per_word),
        };
        let rest = word.clone().div_scalar(self.radix).floor();
        let digit = word - rest.clone().mul_scalar(self.radix);
        if n > 1 {
            self.open = Some((rest, n - 1));
        }
        digit
    }

    /// Words held now.
    pub fn words(&self) -> usize {
        self.full.len() + usize::from(self.open.is_some())
    }

    /// Most words held at once so far.
    pub fn peak_words(&self) -> usize {
        self.peak_words
    }
}
