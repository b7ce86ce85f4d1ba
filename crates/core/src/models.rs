//! The models a config can name: what the config check, the CLI help, the page's choices and
//! the study need to know of each (the engine builds them: `rdbench_engine::model::build`).

/// One model of the registry.
#[derive(Debug)]
pub struct ModelInfo {
    /// Config name.
    pub name: &'static str,
    /// What a user sees in a choice list.
    pub label: &'static str,
    /// Whether the hidden size must be even (two halves).
    pub even_hidden: bool,
    /// Whether the rank knobs (r0, r_max, enrichment) change it.
    pub ranked: bool,
    /// Whether its reversal keeps what a step forgets in an information buffer (whose
    /// size the forgetting cap sets).
    pub info_buffer: bool,
}

/// Every model, in the order a study runs them.
pub const MODELS: &[ModelInfo] = &[
    ModelInfo { name: "rnn_small", label: "rnn_small (GRU)", even_hidden: false, ranked: false, info_buffer: false },
    ModelInfo {
        name: "rev_ode_small",
        label: "rev_ode_small (exactly reversible low-rank ODE)",
        even_hidden: true,
        ranked: true,
        info_buffer: false,
    },
    ModelInfo {
        name: "rev_gru",
        label: "rev_gru (reversible GRU, fixed point)",
        even_hidden: true,
        ranked: false,
        info_buffer: true,
    },
];

/// Bits of one word of an information buffer: the integers an f32 holds exactly, so the
/// buffer lives in the same tensors as the states on every backend.
pub const BUFFER_WORD_BITS: usize = 24;

/// Steps whose digits one buffer word holds at a forgetting cap of `bits`.
pub fn steps_per_word(bits: usize) -> usize {
    BUFFER_WORD_BITS / bits
}

/// Words (each the size of one hidden state) an information buffer holds after `t` steps at a
/// forgetting cap of `bits`.
pub fn buffer_words(t: usize, bits: usize) -> usize {
    t.div_ceil(steps_per_word(bits))
}

/// The registry entry of a model name.
pub fn info(name: &str) -> Option<&'static ModelInfo> {
    MODELS.iter().find(|m| m.name == name)
}
