//! Binomial checkpointing, "revolve" (Griewank & Walther 2000, ACM TOMS 26(1)): the schedule
//! that reverses T steps with s snapshot slots in the fewest forward steps. From a snapshot
//! at t0, it advances m steps, stores a snapshot there, reverses the last l - m steps with
//! one slot fewer, restores t0 and reverses the first m steps with all s slots; m is chosen
//! by the optimal cost recursion (the one `checkpoint_schedules.optimal_extra_steps`
//! computes), so with r recomputations it reverses C(s + r, s) steps. Tested against the
//! `checkpoint-schedules` package's Revolve for every slot count (`tests/schedules.rs`).

use super::plan::Action;

/// The first advance m of an optimal schedule reversing `l` steps from a snapshot with `s`
/// slots (that snapshot's included), for every l <= `t` and 2 <= s <= `slots`: the m that
/// minimises m + cost(l - m, s - 1) + cost(m, s), where cost(l, 1) = l (l - 1) / 2 and
/// cost(1, s) = 0 count the forward steps outside the VJPs' own (more than l - 1 slots cost
/// what l - 1 do).
struct Splits(Vec<Vec<usize>>);

impl Splits {
    fn new(t: usize, slots: usize) -> Splits {
        let s_max = slots.max(1);
        let mut cost = vec![vec![0u64; s_max + 1]; t + 1];
        let mut split = vec![vec![0usize; s_max + 1]; t + 1];
        for l in 2..=t {
            cost[l][1] = (l * (l - 1) / 2) as u64;
            for s in 2..=s_max {
                if s > l - 1 {
                    cost[l][s] = cost[l][l - 1];
                    split[l][s] = split[l][l - 1];
                    continue;
                }
                let (mut best, mut at) = (u64::MAX, 1);
                for m in 1..l {
                    let c = m as u64 + cost[l - m][s - 1] + cost[m][s];
                    if c < best {
                        (best, at) = (c, m);
                    }
                }
                cost[l][s] = best;
                split[l][s] = at;
            }
        }
        Splits(split)
    }
}

/// The revolve plan for `t` steps with `slots` snapshot slots (at least 1; more than T - 1
/// are never used). Its forward evaluations are the optimum, and it never holds more than
/// `slots` snapshots besides the working state.
pub fn plan(t: usize, slots: usize) -> Vec<Action> {
    let slots = slots.clamp(1, t.saturating_sub(1).max(1));
    let splits = Splits::new(t, slots);
    let mut p = Vec::new();
    if t == 0 {
        return p;
    }
    if t > 1 {
        p.push(Action::Store);
    }
    reverse(&mut p, &splits, 0, t, slots);
    p
}

/// Reverse steps t0 + 1 ..= t0 + l. On entry the working state is h_{t0}, held in a snapshot
/// when l > 1 (one of the `s` slots); every snapshot taken here, t0's included, is released.
fn reverse(p: &mut Vec<Action>, splits: &Splits, t0: usize, l: usize, s: usize) {
    if l == 1 {
        p.push(Action::Vjp);
        return;
    }
    // More slots than the l - 1 states worth keeping change nothing.
    let s = s.min(l - 1);
    if s == 1 {
        // Only t0's snapshot: advance from it afresh for each step, the last step first.
        for j in (1..=l).rev() {
            if j < l {
                p.push(if j == 1 { Action::Take(t0) } else { Action::Restore(t0) });
            }
            p.extend(std::iter::repeat_n(Action::Advance, j - 1));
            p.push(Action::Vjp);
        }
        return;
    }
    let m = splits.0[l][s];
    p.extend(std::iter::repeat_n(Action::Advance, m));
    if l - m > 1 {
        p.push(Action::Store);
    }
    reverse(p, splits, t0 + m, l - m, s - 1);
    p.push(if m == 1 { Action::Take(t0) } else { Action::Restore(t0) });
    reverse(p, splits, t0, m, s);
}
