//! Errors the engine can end with.

use std::fmt;

/// Why a bench stopped before its report.
#[derive(Clone, Debug, PartialEq)]
pub enum EngineError {
    /// The configuration is invalid.
    Config(rdbench_core::config::ConfigError),
    /// The host asked to stop.
    Cancelled,
    /// The device failed (lost WebGPU device, failed read).
    Device(String),
}

impl fmt::Display for EngineError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            EngineError::Config(e) => write!(f, "invalid config: {e}"),
            EngineError::Cancelled => write!(f, "cancelled"),
            EngineError::Device(m) => write!(f, "device error: {m}"),
        }
    }
}

impl std::error::Error for EngineError {}

impl From<burn::tensor::ExecutionError> for EngineError {
    fn from(e: burn::tensor::ExecutionError) -> Self {
        EngineError::Device(format!("{e:?}"))
    }
}

impl From<rdbench_core::config::ConfigError> for EngineError {
    fn from(e: rdbench_core::config::ConfigError) -> Self {
        EngineError::Config(e)
    }
}

impl EngineError {
    /// The reason a worker's `stopped` event gives for it.
    pub fn stop_reason(&self) -> rdbench_core::messages::StopReason {
        use rdbench_core::messages::StopReason;
        match self {
            EngineError::Cancelled => StopReason::Cancelled,
            EngineError::Config(_) => StopReason::Config,
            EngineError::Device(_) => StopReason::Device,
        }
    }
}
