//! Binomial checkpointing, "revolve" (Griewank & Walther 2000, ACM TOMS 26(1)): the schedule
//! that reverses T steps with s snapshot slots in the fewest forward steps. From a snapshot
//! at t0, it advances m steps, stores a snapshot there, reverses the last l - m steps with
//! one slot fewer, restores t0 and reverses the first m steps with all s slots; with r
//! recomputations it reverses C(s + r, s) steps. The split m comes from the binomial closed
//! form in O(r) ([`first_advance`]), so a plan costs time linear in its own length; it is the
//! smallest m of the optimal cost recursion (the one `checkpoint_schedules.optimal_extra_steps`
//! computes), the recursion itself kept as the unit tests' reference. Tested against the
//! `checkpoint-schedules` package's Revolve for every slot count (`tests/schedules.rs`).

use super::plan::Action;

/// The revolve plan for `t` steps with `slots` snapshot slots (at least 1; more than T - 1
/// are never used). Its forward evaluations are the optimum, and it never holds more than
/// `slots` snapshots besides the working state.
pub fn plan(t: usize, slots: usize) -> Vec<Action> {
    build(t, slots, first_advance)
}

/// The plan with the first advance `split(l, s)` for every reversal of l >= 3 steps with
/// 2 <= s <= l - 1 slots.
fn build(t: usize, slots: usize, split: impl Fn(usize, usize) -> usize) -> Vec<Action> {
    let mut p = Vec::new();
    if t == 0 {
        return p;
    }
    let slots = slots.clamp(1, t.saturating_sub(1).max(1));
    if t > 1 {
        p.push(Action::Store);
    }
    // An explicit stack: with many slots the splits are m = 1 and the right parts nest up to
    // T deep, which a thread's stack (a wasm worker's included) need not have room for.
    let mut todo = vec![Work::Reverse { t0: 0, l: t, s: slots }];
    while let Some(w) = todo.pop() {
        match w {
            Work::Emit(a) => p.push(a),
            Work::Reverse { t0, l, s } => reverse(&mut p, &mut todo, &split, (t0, l, s)),
        }
    }
    p
}

/// What is left to do, last first.
enum Work {
    /// Reverse steps t0 + 1 ..= t0 + l with s slots (see [`reverse`]).
    Reverse { t0: usize, l: usize, s: usize },
    /// Append an action.
    Emit(Action),
}

/// Reverse steps t0 + 1 ..= t0 + l. On entry the working state is h_{t0}, held in a snapshot
/// when l > 1 (one of the `s` slots); every snapshot taken here, t0's included, is released.
/// Emits the actions up to the first sub-reversal and pushes the rest onto `todo`.
fn reverse(
    p: &mut Vec<Action>,
    todo: &mut Vec<Work>,
    split: &impl Fn(usize, usize) -> usize,
    (t0, l, s): (usize, usize, usize),
) {
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
    let m = split(l, s);
    p.extend(std::iter::repeat_n(Action::Advance, m));
    if l - m > 1 {
        p.push(Action::Store);
    }
    todo.push(Work::Reverse { t0, l: m, s });
    todo.push(Work::Emit(if m == 1 { Action::Take(t0) } else { Action::Restore(t0) }));
    todo.push(Work::Reverse { t0: t0 + m, l: l - m, s: s - 1 });
}

/// The first advance m of an optimal schedule reversing `l` steps from a snapshot with `s`
/// slots (that snapshot's included), 2 <= s <= l - 1: the smallest m that minimises
/// m + cost(l - m, s - 1) + cost(m, s), where cost counts the forward steps outside the
/// VJPs' own (cost(l, 1) = l (l - 1) / 2, cost(1, s) = 0).
///
/// With beta(s, r) = C(s + r, s) and r the least with beta(s, r) >= l, cost(l, s) =
/// r l - beta(s + 1, r - 1), whose increments are r on beta(s, r - 1) < l <= beta(s, r). The
/// sum is then convex in m, with increments 1 + r_s(m + 1) - r_{s-1}(l - m), and its
/// smallest minimiser is min(max(beta(s, r - 2), l - beta(s - 1, r), 1), beta(s, r - 1)):
/// a left part reversed in r - 1 sweeps and a right part in r, the right part as long as
/// it can be.
fn first_advance(l: usize, s: usize) -> usize {
    debug_assert!(2 <= s && s < l, "first_advance({l}, {s})");
    // beta(s, r - 2), beta(s, r - 1), beta(s, r), from r = 0 (beta(s, -1) = beta(s, -2) = 0).
    // Each is below l before the last, so the products stay far inside u128.
    let (s_, l_) = (s as u128, l as u128);
    let (mut r, mut b2, mut b1, mut b) = (0u128, 0u128, 0u128, 1u128);
    while b < l_ {
        r += 1;
        (b2, b1, b) = (b1, b, b * (s_ + r) / r);
    }
    let right = b * s_ / (s_ + r); // beta(s - 1, r) = C(s - 1 + r, r)
    let m = b2.max(l_.saturating_sub(right)).max(1).min(b1);
    m as usize
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The optimal cost recursion by dynamic programming, O(T^2 s): the reference the
    /// closed form replaced. `split[l][s]` is the smallest optimal first advance for
    /// 2 <= s <= l - 1, `cost[l][s]` the forward steps.
    fn recursion(t: usize, s_max: usize) -> (Vec<Vec<u64>>, Vec<Vec<usize>>) {
        let mut cost = vec![vec![0u64; s_max + 1]; t + 1];
        let mut split = vec![vec![0usize; s_max + 1]; t + 1];
        for l in 2..=t {
            cost[l][1] = (l * (l - 1) / 2) as u64;
            for s in 2..=s_max {
                if s > l - 1 {
                    cost[l][s] = cost[l][l - 1];
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
        (cost, split)
    }

    #[test]
    fn the_closed_form_split_is_the_recursions_smallest_optimum() {
        let (_, split) = recursion(400, 24);
        for (l, by_slots) in split.iter().enumerate().skip(3) {
            for (s, &want) in by_slots.iter().enumerate().take(l).skip(2) {
                assert_eq!(first_advance(l, s), want, "l {l}, s {s}");
            }
        }
    }

    #[test]
    fn plans_are_the_recursions_plans_action_for_action() {
        // The reports of T <= 80 do not move: the same plans as the recursion's, and their
        // forward steps its optimum.
        let (t_max, s_max) = (200, 20);
        let (cost, split) = recursion(t_max, s_max);
        for t in 0..=t_max {
            for slots in 1..=s_max {
                let old = build(t, slots, |l, s| split[l][s]);
                let new = plan(t, slots);
                assert!(old == new, "T {t}, {slots} slots: the plans differ");
                let advances = new.iter().filter(|a| **a == Action::Advance).count() as u64;
                let want = if t < 2 { 0 } else { cost[t][slots.min(t - 1)] };
                assert_eq!(advances, want, "T {t}, {slots} slots");
            }
        }
    }
}
