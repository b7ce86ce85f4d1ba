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
}

/// Every model, in the order a study runs them.
pub const MODELS: &[ModelInfo] = &[
    ModelInfo { name: "rnn_small", label: "rnn_small (GRU)", even_hidden: false, ranked: false },
    ModelInfo {
        name: "rev_ode_small",
        label: "rev_ode_small (exactly reversible low-rank ODE)",
        even_hidden: true,
        ranked: true,
    },
];

/// The registry entry of a model name.
pub fn info(name: &str) -> Option<&'static ModelInfo> {
    MODELS.iter().find(|m| m.name == name)
}
