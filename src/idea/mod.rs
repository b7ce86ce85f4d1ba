//! The idea arm: reversal-defect adaptive checkpointing. Its interval policies live here;
//! the probe and the checkpointed backward pass join them as the arm gets one home.

pub mod policy;
