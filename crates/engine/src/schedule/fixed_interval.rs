//! Fixed-interval checkpointing (Chen et al. 2016, `torch.utils.checkpoint`): the forward
//! pass keeps h_0, h_k, h_2k, ..; the backward pass takes the segments from the last one
//! back, recomputing each segment's states forward from its checkpoint once and then taking
//! its VJPs. The gradient is the dense one; memory is the checkpoints plus one segment.

use super::plan::Action;

/// The plan for `t` steps at interval `k` (clamped to 1..=t). With m = ceil(T / k) segments
/// it advances (m - 1) k steps forward, then T - m again in the segments (the last state of
/// a segment is its VJP's own input, never stored): about one extra forward pass.
pub fn plan(t: usize, k: usize) -> Vec<Action> {
    let k = k.clamp(1, t.max(1));
    let segments = t.div_ceil(k);
    let mut p = Vec::new();
    if t == 0 {
        return p;
    }
    // Forward to the last segment's start, keeping each earlier segment's start.
    let last = (segments - 1) * k;
    for c in 0..last {
        if c % k == 0 {
            p.push(Action::Store);
        }
        p.push(Action::Advance);
    }
    for j in (0..segments).rev() {
        let (c, e) = (j * k, ((j + 1) * k).min(t));
        if j + 1 < segments {
            p.push(Action::Take(c));
        }
        // Recompute the segment, keeping h_c..h_{e-2}; h_{e-1} is the working state.
        for _ in c..e - 1 {
            p.extend([Action::Store, Action::Advance]);
        }
        p.push(Action::Vjp);
        for s in (c..e - 1).rev() {
            p.extend([Action::Take(s), Action::Vjp]);
        }
    }
    p
}
